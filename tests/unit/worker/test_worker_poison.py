"""The harness side of poison_input and TerminateOnNaN, without TensorFlow:
the poisoned batch, the settings, and the step a stopped run reports done at."""

import numpy as np
import pytest

from chaos.worker import data
from chaos.worker.nonfinite import done_position, terminate_on_nan_callbacks
from chaos.worker.settings import WorkerSettings


def shard(start=0, total=10):
    return data.make_shard(42, 1, start, total, 4, 3)


def test_only_one_value_of_the_poisoned_steps_batch_becomes_non_finite():
    xs, ys = shard()
    out = data.poisoned(xs, 0, 7, "nan")
    assert np.isnan(out[6, 0, 0])  # step 7 (1-based) is batch 6
    bad = ~np.isfinite(out)
    assert bad.sum() == 1
    assert np.isfinite(xs).all()  # the clean batches are not modified in place
    assert np.isinf(data.poisoned(xs, 0, 7, "inf")[6, 0, 0])


def test_the_poisoned_batch_digest_differs_and_every_other_batch_is_the_clean_one():
    xs, ys = shard()
    out = data.poisoned(xs, 0, 7, "nan")
    assert data.batch_digest(out[6], ys[6]) != data.batch_digest(xs[6], ys[6])
    assert all(data.batch_digest(out[i], ys[i]) == data.batch_digest(xs[i], ys[i]) for i in range(10) if i != 6)


def test_a_resumed_input_poisons_the_same_global_step():
    xs, _ = shard(start=5)
    out = data.poisoned(xs, 5, 7, "nan")  # batches from 0-based step 5: step 7 is the second
    assert np.isnan(out[1, 0, 0]) and (~np.isfinite(out)).sum() == 1


@pytest.mark.parametrize("step, start", [(0, 0), (3, 5), (11, 0)])
def test_no_poison_or_a_step_outside_the_input_leaves_it_alone(step, start):
    xs, _ = shard(start=start)
    assert data.poisoned(xs, start, step, "nan") is xs


def test_poison_settings_are_checked():
    assert WorkerSettings(poison_step=3, poison_value="inf").poison_step == 3
    with pytest.raises(ValueError, match="poison_value must be one of"):
        WorkerSettings(poison_value="zero")
    with pytest.raises(ValueError, match="poison_step must be an int >= 0"):
        WorkerSettings(poison_step=-1)
    assert WorkerSettings.from_env(WorkerSettings(terminate_on_nan=True).to_env()).terminate_on_nan


class FakeKeras:
    class callbacks:
        class TerminateOnNaN:
            pass


class FakeModel:
    def __init__(self, stop_training, iterations):
        self.stop_training = stop_training
        counter = type("Variable", (), {"numpy": lambda self: np.int64(iterations)})()
        self.optimizer = type("Optimizer", (), {"iterations": counter})()


def test_terminate_on_nan_is_added_only_when_asked():
    assert terminate_on_nan_callbacks(FakeKeras, WorkerSettings()) == []
    [callback] = terminate_on_nan_callbacks(FakeKeras, WorkerSettings(terminate_on_nan=True))
    assert isinstance(callback, FakeKeras.callbacks.TerminateOnNaN)


def test_a_run_stopped_early_reports_done_where_it_stopped():
    settings = WorkerSettings(epochs=4, steps_per_epoch=50)
    assert done_position(FakeModel(False, 200), settings) == (3, 200)
    assert done_position(FakeModel(True, 105), settings) == (2, 105)
    assert done_position(FakeModel(True, 100), settings) == (1, 100)


# --- the epoch a callback ended early says the step it ended at ----------------------------


def test_an_epoch_stopped_early_reports_its_last_step_not_the_planned_end():
    import io
    import types

    from chaos.events import parse_line
    from chaos.worker.callback import make_callback_class
    from chaos.worker.emit import Emitter

    class Callback:
        def set_model(self, model):
            self.model = model

    keras = types.SimpleNamespace(callbacks=types.SimpleNamespace(Callback=Callback))
    out = io.StringIO()
    callback = make_callback_class(keras)(50, emitter=Emitter("worker-0", out))
    callback.set_model(types.SimpleNamespace(stop_training=False))
    callback.on_epoch_begin(1)
    for batch in range(2):
        callback.on_train_batch_end(batch, {"loss": 0.5 if batch == 0 else float("nan")})
    callback.model.stop_training = True  # TerminateOnNaN
    callback.on_epoch_end(1, {"loss": float("nan")})
    callback.model.stop_training = False
    callback.on_epoch_end(2, {"loss": 0.5})
    ends = [e for e in (parse_line(line, "worker-0") for line in out.getvalue().splitlines()) if e.kind == "epoch_end"]
    assert [e.step for e in ends] == [52, 150]
