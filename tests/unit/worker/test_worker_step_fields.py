"""The harness's extra step fields (dropout mask hash every step, weights digest on
a run's first step) through ChaosEvents, and the plan event, without TensorFlow."""

import io
import json
import types

from chaos.events import PlanEvent, parse_line
from chaos.worker.callback import make_callback_class
from chaos.worker.emit import Emitter
from chaos.worker.settings import WorkerSettings
from chaos.worker.startpoint import make_plan_callback, step_fields


class Callback:  # the bit of keras.callbacks.Callback ChaosEvents uses
    def __init__(self):
        self.model = None

    def set_model(self, model):
        self.model = model


KERAS = types.SimpleNamespace(callbacks=types.SimpleNamespace(Callback=Callback))


class Model:
    def __init__(self):
        self.calls = 0

    def get_weights(self):
        import numpy as np

        self.calls += 1
        return [np.zeros((2, 2), np.float32)]


def events(stream):
    return [parse_line(line, "worker-0") for line in stream.getvalue().splitlines()]


def test_the_mask_hash_comes_every_step_and_the_weights_digest_on_the_first_only():
    out, model = io.StringIO(), Model()
    callback = make_callback_class(KERAS)(10, emitter=Emitter("worker-0", out), step_fields=step_fields(model))
    for batch, mask in enumerate([255, 1, None]):
        callback.on_train_batch_end(batch, {"loss": 0.5, "local_loss": 0.4, "dropout_mask": mask})
    steps = events(out)
    assert [s.dropout_mask for s in steps] == ["00000000000000ff", "0000000000000001", ""]
    assert steps[0].weights_digest and [s.weights_digest for s in steps[1:]] == ["", ""]
    assert model.calls == 1  # the weights are read once, not every step


def test_without_step_fields_the_step_event_is_as_before():
    out = io.StringIO()
    make_callback_class(KERAS)(10, emitter=Emitter("worker-0", out)).on_train_batch_end(0, {"loss": 0.5})
    raw = json.loads(out.getvalue())
    assert raw["dropout_mask"] == "" and raw["weights_digest"] == "" and raw["step"] == 1


def test_the_plan_event_carries_the_starting_weights_and_the_batch_per_step():
    out, model = io.StringIO(), Model()
    settings = WorkerSettings(epochs=3, steps_per_epoch=10, local_batch_size=8)
    callback = make_plan_callback(KERAS, Emitter("worker-1", out), settings, settings.local_batch(2), 1)()
    callback.set_model(model)
    callback.on_train_begin()
    (plan,) = events(out)
    assert isinstance(plan, PlanEvent)
    assert (plan.local_batch, plan.total_steps, plan.initial_epoch, plan.steps_per_epoch) == (8, 30, 1, 10)
    assert len(plan.weights_digest) == 16


def test_replica_fields_digest_each_replicas_batch_and_carry_its_loss():
    import numpy as np

    from chaos.worker import data
    from chaos.worker.mirrored import replica_shards, replica_step_fields

    for shard_data, same in ((True, False), (False, True)):
        settings = WorkerSettings(epochs=1, steps_per_epoch=4, strategy="mirrored", replicas=2, shard_data=shard_data)
        shards = replica_shards(settings, 1, 32)  # resumed at global step 1
        fields = replica_step_fields(shards, 1)({"replica_local_losses": np.array([0.5, 0.25], np.float32)}, False, 3)
        x, y = data.make_batch(42, 2, 0, 32, 20)  # the batch of 0-based step 2, shard 0
        assert fields["replica_batch_digests"][0] == data.batch_digest(x, y)
        assert (fields["replica_batch_digests"][0] == fields["replica_batch_digests"][1]) is same
        assert fields["replica_local_losses"] == [0.5, 0.25]


def test_weights_finite_from_the_train_step_goes_into_every_step_event():
    out = io.StringIO()
    callback = make_callback_class(KERAS)(10, emitter=Emitter("worker-0", out), step_fields=step_fields(Model()))
    for batch, finite in enumerate([True, False]):
        callback.on_train_batch_end(batch, {"loss": 0.5, "local_loss": 0.4, "weights_finite": finite})
    callback.on_train_batch_end(2, {"loss": 0.5, "local_loss": 0.4})  # a train step that does not say
    assert [s.weights_finite for s in events(out)] == [True, False, None]
