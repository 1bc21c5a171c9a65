"""The custom-loop observer (chaos.agent.loop) and its patches (chaos.agent.tf_patches),
against fakes of the TF boundary: optimizers with an ``iterations`` variable, a
``tf.function`` class, a Checkpoint class. The real TF path is tested in containers
(tests/integration/test_user_jobs.py, the example's tutorial loop)."""

from __future__ import annotations

import math
import sys
import types

import pytest

from chaos.agent import checkpoint_steps, install, loop, runtime, tf_patches
from chaos.checks.symptom_nonfinite import loss_not_finite, non_finite_at_end
from chaos.events import STEPS_UNOBSERVED, CheckpointEvent, DoneEvent, NoticeEvent, RestoredEvent, StepEvent
from chaos.timeline import RunInfo, Timeline


def timeline(*events):
    return Timeline(RunInfo(num_workers=1, steps_per_epoch=0, epochs=0, save_interval_steps=0), list(events))


class Var:
    def __init__(self, value):
        self.value = value

    def numpy(self):
        import numpy as np

        return np.int64(self.value)

    def assign(self, value):
        self.value = value


class Optimizer:
    def __init__(self, iterations=0):
        self.iterations = Var(iterations)

    def apply_gradients(self, *args, **kwargs):
        self.iterations.value += 1


class Checkpoint:
    def __init__(self, epoch=None, optimizer=None):
        self.epoch = epoch
        self.optimizer = optimizer


@pytest.fixture
def reader(monkeypatch, numpy_module):
    """The variables reader without TF: a checkpoint's digest, epoch and optimizers from the fake."""
    monkeypatch.setattr(loop.variables, "digest", lambda ckpt: f"digest-of-{id(ckpt) % 1000}")
    monkeypatch.setattr(loop.variables, "child_named", lambda ckpt, name: getattr(ckpt, name, None))
    monkeypatch.setattr(loop.variables, "optimizers_in", lambda ckpt: [ckpt.optimizer] if ckpt.optimizer else [])
    monkeypatch.setattr(runtime, "_fit_depth", [0])
    monkeypatch.setattr(runtime, "_job_reports", [False])
    monkeypatch.setattr(loop, "_hook_exit", lambda obs: None)


@pytest.fixture
def obs(captured, reader):
    return loop.LoopObserver()


def steps(captured):
    return [(e.step, e.loss) for e in captured.events() if isinstance(e, StepEvent)]


def test_one_step_per_update_of_the_weights_with_the_loss_the_step_returned(obs, captured):
    opt = Optimizer()
    for loss in (0.5, 0.25):
        opt.apply_gradients()
        obs.trained([opt], loss)
    obs.trained([opt], 0.1)  # a call that applied nothing (gradient accumulation): no step
    assert steps(captured) == [(1, 0.5), (2, 0.25)]


def test_two_optimizers_in_one_step_count_once(obs, captured):
    generator, critic = Optimizer(), Optimizer()
    for _ in range(3):
        generator.apply_gradients()
        critic.apply_gradients()
        obs.trained([generator, critic], 1.0)
    assert [s for s, _ in steps(captured)] == [1, 2, 3]


def test_a_loop_that_restored_nothing_is_said_to_have_started_fresh(obs, captured):
    opt = Optimizer()
    opt.apply_gradients()
    obs.trained([opt], 1.0)
    notice, step = captured.events()
    assert isinstance(notice, NoticeEvent) and "started fresh" in notice.text
    assert isinstance(step, StepEvent) and step.step == 1


def test_a_restore_resumes_the_count_at_the_step_recorded_at_the_save(tmp_path, obs, captured):
    ckpt = Checkpoint(epoch=Var(1))
    opt = Optimizer()
    obs.checkpoint_created(ckpt)
    for _ in range(5):
        opt.apply_gradients()
        obs.trained([opt], 1.0)
    (tmp_path / "ckpt-1.index").write_text("")
    obs.saved(ckpt, str(tmp_path / "ckpt-1"))
    assert checkpoint_steps.lookup(str(tmp_path / "ckpt-1")) == 5

    # A restarted process: a new observer, a new optimizer whose iterations start at 0.
    again = loop.LoopObserver()
    ckpt2, opt2 = Checkpoint(epoch=Var(1)), Optimizer()
    again.checkpoint_created(ckpt2)
    again.restored_from(ckpt2, str(tmp_path / "ckpt-1"))
    opt2.apply_gradients()
    again.trained([opt2], 1.0)
    events = captured.events()
    checkpoint = next(e for e in events if isinstance(e, CheckpointEvent))
    assert (checkpoint.step, checkpoint.path, checkpoint.epoch) == (5, "ckpt-1", 1)
    restored = next(e for e in events if isinstance(e, RestoredEvent))
    assert (restored.step, restored.checkpoint, restored.epoch) == (5, "ckpt-1", 1)
    assert restored.weights_digest.startswith("digest-of-")
    assert steps(captured)[-1][0] == 6
    assert not [e for e in events[events.index(restored) :] if isinstance(e, NoticeEvent)]


def test_without_a_record_the_restored_step_is_the_checkpointed_optimizers_and_its_jump_is_no_step(
    tmp_path, obs, captured
):
    opt = Optimizer(iterations=40)  # restored with the checkpoint
    ckpt = Checkpoint(optimizer=opt)
    obs.restored_from(ckpt, str(tmp_path / "ckpt-2"))
    opt.apply_gradients()
    obs.trained([opt], 1.0)
    restored = next(e for e in captured.events() if isinstance(e, RestoredEvent))
    assert restored.step == 40
    assert steps(captured) == [(41, 1.0)]


def test_a_managers_step_counter_gives_the_restored_step(tmp_path, obs, captured):
    ckpt = Checkpoint()
    manager = types.SimpleNamespace(_step_counter=Var(60), checkpoint=ckpt)
    obs.manager_created(manager)
    obs.restored_from(ckpt, str(tmp_path / "ckpt-3"))
    assert next(e for e in captured.events() if isinstance(e, RestoredEvent)).step == 60


def test_an_unknown_restored_step_is_said_and_counts_from_0(tmp_path, obs, captured):
    obs.restored_from(Checkpoint(), str(tmp_path / "ckpt-9"))
    notice, restored = captured.events()
    assert isinstance(notice, NoticeEvent) and "the step it holds is unknown" in notice.text
    assert restored.step == 0


def test_restore_of_nothing_is_no_event(obs, captured):
    obs.restored_from(Checkpoint(), None)
    assert captured.events() == []


def test_quiet_inside_fit_and_once_the_job_reports_itself(obs, captured):
    opt = Optimizer()
    runtime.fit_began()
    opt.apply_gradients()
    obs.trained([opt], 1.0)
    runtime.fit_ended()
    runtime.job_reported()
    opt.apply_gradients()
    obs.trained([opt], 1.0)
    obs.finished()
    assert captured.events() == []


def test_done_at_a_normal_exit_with_the_newest_checkpoints_digest(obs, captured):
    ckpt = Checkpoint()
    obs.checkpoint_created(ckpt)
    opt = Optimizer()
    opt.apply_gradients()
    obs.trained([opt], 1.0)
    obs.finished()
    done = captured.events()[-1]
    assert isinstance(done, DoneEvent) and done.step == 1 and done.weights_digest.startswith("digest-of-")


@pytest.mark.parametrize("why", ["error", "exit code"])
def test_no_done_after_an_error_or_a_non_zero_exit(obs, captured, why):
    from chaos.agent import errors

    opt = Optimizer()
    opt.apply_gradients()
    obs.trained([opt], 1.0)
    if why == "error":
        errors.report_exception(RuntimeError("boom"))
    else:
        obs.exit_code = 3
    obs.finished()
    assert not [e for e in captured.events() if isinstance(e, DoneEvent)]


def test_no_done_for_a_process_that_trained_nothing(obs, captured):
    obs.finished()
    assert captured.events() == []


@pytest.mark.parametrize(
    "result, loss",
    [
        (0.5, 0.5),
        ({"loss": 0.25, "acc": 1.0}, 0.25),
        ((0.75, 1), 0.75),
        (None, None),
        ({"acc": 1.0}, None),
        ("text", None),
    ],
)
def test_the_loss_a_step_returned(result, loss):
    assert loop.loss_of(result) == loss


class EagerLike:
    """What the loss reader asks of an EagerTensor: its shape tuple, then its value."""

    def __init__(self, value):
        import numpy as np

        self.value = np.asarray(value, dtype=np.float32)

    def _shape_tuple(self):
        return self.value.shape

    def numpy(self):
        return self.value


@pytest.mark.parametrize(
    "make, loss",
    [
        (lambda np: np.float32(0.5), 0.5),
        (lambda np: np.array([0.5]), 0.5),
        (lambda np: np.array([0.5, 1.0]), None),  # a vector: not a loss
        (lambda np: EagerLike(0.5), 0.5),
        (lambda np: EagerLike([0.5]), 0.5),
        (lambda np: EagerLike([[0.5, 1.0]]), None),
        (lambda np: (EagerLike(0.25), EagerLike([1.0, 2.0])), 0.25),
    ],
)
def test_the_loss_of_arrays_and_tensors(make, loss, numpy_module):
    assert loop.loss_of(make(numpy_module)) == loss


def test_a_step_that_returned_no_loss_is_not_a_nan_loss(obs, captured):
    opt = Optimizer()
    opt.apply_gradients()
    obs.trained([opt], None)
    step = next(e for e in captured.events() if isinstance(e, StepEvent))
    assert step.loss_reported is False and math.isnan(step.loss)
    assert not loss_not_finite(step)
    assert non_finite_at_end(timeline(step)) == ("", [])
    nan = StepEvent(t=1.0, source="worker-0", step=2, loss=math.nan, local_loss=math.nan)
    assert loss_not_finite(nan) and non_finite_at_end(timeline(nan))[0]


def test_the_step_record_keeps_only_checkpoints_that_still_exist(tmp_path):
    for name in ("ckpt-1", "ckpt-2"):
        (tmp_path / f"{name}.index").write_text("")
        checkpoint_steps.record(str(tmp_path / name), int(name[-1]) * 10)
    (tmp_path / "ckpt-1.index").unlink()  # max_to_keep removed it
    checkpoint_steps.record(str(tmp_path / "ckpt-3"), 30)
    assert checkpoint_steps.lookup(str(tmp_path / "ckpt-1")) is None
    assert checkpoint_steps.lookup(str(tmp_path / "ckpt-2")) == 20
    assert checkpoint_steps.lookup(str(tmp_path / "ckpt-3")) == 30
    assert checkpoint_steps.lookup("gs://bucket/ckpt-3") is None
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == [checkpoint_steps.FILE_NAME]


# -- the patches, on fake TF classes ---------------------------------------------------------


@pytest.fixture
def fake_context(monkeypatch):
    """tensorflow.python.eager.context with a switch for executing_eagerly."""
    state = {"eager": True}
    context = types.ModuleType("tensorflow.python.eager.context")
    context.executing_eagerly = lambda: state["eager"]
    eager = types.ModuleType("tensorflow.python.eager")
    eager.context = context
    for name, module in (
        ("tensorflow", types.ModuleType("tensorflow")),
        ("tensorflow.python", types.ModuleType("tensorflow.python")),
        ("tensorflow.python.eager", eager),
        ("tensorflow.python.eager.context", context),
    ):
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setattr(tf_patches, "_calls", [])
    return state


def fake_function_module(state):
    """A tf.function that traces its Python body on the first call only, as TF's does."""

    class Function:
        def __init__(self, body):
            self.body, self.traced = body, False

        def __call__(self, *args):
            if not self.traced:
                self.traced = True
                state["eager"] = False
                try:
                    self.body(*args)  # tracing: the apply runs in Python here only
                finally:
                    state["eager"] = True
            return 0.5

    module = types.ModuleType(tf_patches.FUNCTION_MODULE)
    module.Function = Function
    return module


def fake_optimizer_module():
    class BaseOptimizer:
        def __init__(self):
            self.iterations = Var(0)

        def apply(self, grads):
            self.iterations.value += 1  # what the traced graph does on each call

        def apply_gradients(self, pairs):
            return self.apply(pairs)

    module = types.ModuleType("keras.src.optimizers.base_optimizer")
    module.BaseOptimizer = BaseOptimizer
    return module


def test_a_tf_function_that_traced_an_apply_is_a_train_step_on_every_call(fake_context, captured, reader, monkeypatch):
    monkeypatch.setattr(loop, "_observer", loop.LoopObserver())
    functions, optimizers = fake_function_module(fake_context), fake_optimizer_module()
    tf_patches.patch_function_module(functions)
    tf_patches.patch_optimizer_module(optimizers)
    tf_patches.patch_optimizer_module(optimizers)  # a second patch wraps nothing twice
    opt = optimizers.BaseOptimizer()

    # The traced body applies once; the fake's later calls run "the graph" (iterations += 1).
    def body():
        opt.apply_gradients([])

    step = functions.Function(body)
    step()
    for _ in range(2):
        opt.iterations.value += 1
        step()
    other = functions.Function(lambda: None)  # no apply: not a train step
    other()
    assert [s for s, _ in steps(captured)] == [1, 2, 3]
    assert [loss for _, loss in steps(captured)] == [0.5, 0.5, 0.5]


def test_an_eager_apply_is_a_step_of_its_own(fake_context, captured, reader, monkeypatch):
    monkeypatch.setattr(loop, "_observer", loop.LoopObserver())
    optimizers = fake_optimizer_module()
    tf_patches.patch_optimizer_module(optimizers)
    opt = optimizers.BaseOptimizer()
    for _ in range(3):
        opt.apply_gradients([])  # apply_gradients calls apply: both wrapped, one step
    assert [s for s, _ in steps(captured)] == [1, 2, 3]
    assert all(math.isnan(loss) for _, loss in steps(captured))


def test_the_checkpoint_patches_report_the_outermost_save_and_restore_once(
    fake_context, captured, reader, monkeypatch, tmp_path
):
    monkeypatch.setattr(loop, "_observer", loop.LoopObserver())
    seen = []

    class FakeCheckpoint:
        def __init__(self):
            self.epoch = None
            self.optimizer = None

        def _write(self, prefix, options=None):
            seen.append("write")
            return prefix

        def save(self, prefix):
            return self._write(prefix + "-1")

        def read(self, save_path, options=None):
            seen.append("read")

        def restore(self, save_path, options=None):
            return self.read(save_path)

    module = types.ModuleType(tf_patches.CHECKPOINT_MODULE)
    module.Checkpoint = FakeCheckpoint
    tf_patches.patch_checkpoint_module(module)
    ckpt = FakeCheckpoint()
    assert ckpt.save(str(tmp_path / "ckpt")) == str(tmp_path / "ckpt-1")
    ckpt.restore(str(tmp_path / "ckpt-1"))
    ckpt.restore(None)
    kinds = [e.kind for e in captured.events()]
    assert kinds.count("checkpoint") == 1 and kinds.count("restored") == 1, kinds
    assert seen == ["write", "read", "read"]
    assert loop.observer().newest_checkpoint() is ckpt


def test_the_watched_module_names_are_the_patches_own():
    assert set(install.loop_modules()) == {
        tf_patches.FUNCTION_MODULE,
        tf_patches.CHECKPOINT_MODULE,
        tf_patches.MANAGER_MODULE,
        tf_patches.VARIABLE_MODULE,
        *tf_patches.OPTIMIZER_CLASSES,
    }


def test_what_the_agent_cannot_see_is_said_at_start(monkeypatch):
    from chaos.agent import start

    patched = types.ModuleType(tf_patches.FUNCTION_MODULE)

    class Function:
        def __call__(self):
            pass

    patched.Function = Function
    setattr(Function.__dict__["__call__"], tf_patches.ORIGINAL, True)
    assert start.unobserved({tf_patches.FUNCTION_MODULE: patched}) == []
    said = start.unobserved({}, tf_version="2.99.0")
    assert [topic for topic, _ in said] == [STEPS_UNOBSERVED]
    assert said[0][1].startswith(start.NO_STEPS)
    assert "(TensorFlow 2.99.0, no tensorflow.python.eager.polymorphic_function" in said[0][1]
    assert "steps, and so its done event and final weights digest, are not observed" in said[0][1]


def test_the_jobs_own_step_counter_is_reported_at_each_save_and_at_the_end(tmp_path, obs, captured):
    ckpt = Checkpoint()
    ckpt.global_step = Var(0)
    obs.checkpoint_created(ckpt)
    opt = Optimizer()
    for _ in range(3):
        opt.apply_gradients()
        obs.trained([opt], 1.0)
        ckpt.global_step.value += 2  # summed over two workers: twice per step
    obs.saved(ckpt, str(tmp_path / "ckpt-1"))
    obs.finished()
    checkpoint = next(e for e in captured.events() if isinstance(e, CheckpointEvent))
    done = next(e for e in captured.events() if isinstance(e, DoneEvent))
    assert (checkpoint.step, checkpoint.job_step) == (3, 6) and (done.step, done.job_step) == (3, 6)
    manager = types.SimpleNamespace(_step_counter=Var(7), checkpoint=ckpt)
    obs.manager_created(manager)
    assert obs.job_step(ckpt) == 7  # the manager's step_counter first
    assert obs.job_step(Checkpoint()) == -1


def test_keras3_variables_are_digested_through_the_tf_variable_they_wrap(monkeypatch):
    # Keras 3's variables are no tf.Variable (measured: isinstance is False) but hold one as _value.
    from chaos.agent import variables

    tf = types.ModuleType("tensorflow")

    class Variable:
        synchronization = None

    tf.Variable = Variable
    tf.VariableSynchronization = types.SimpleNamespace(ON_READ="on_read")
    monkeypatch.setitem(sys.modules, "tensorflow", tf)
    inner = Variable()
    keras_variable = type("Variable", (), {"__module__": "keras.src.backend.tensorflow.core"})()
    keras_variable._value = inner
    stranger = types.SimpleNamespace(_value=inner)  # not Keras's: not read as a variable
    assert variables.as_tf_variable(inner) is inner
    assert variables.as_tf_variable(keras_variable) is inner
    assert variables.as_tf_variable(stranger) is None
    graph = {"root": {"model": "m", "save_counter": "c"}, "m": {"kernel": keras_variable, "inner": inner}}
    monkeypatch.setattr(variables, "children", lambda obj: graph.get(obj, {}) if isinstance(obj, str) else {})
    monkeypatch.setitem(graph, "c", {})
    assert [p for p, _ in variables.checkpointed_variables("root")] == ["model/inner"]  # one variable, once


def test_the_jobs_integer_counters_are_read_without_a_collective(monkeypatch):
    # A plain (on-write) counter is read as this worker's value; an on-read SUM counter gives this
    # worker's part (its local copies summed: reading the sum would be a collective); other on-read
    # aggregations, save_counter, floats and non-scalars are left out.
    import numpy as np

    from chaos.agent import variables

    tf = types.ModuleType("tensorflow")

    class Variable:
        def __init__(self, value, synchronization="on_write", aggregation="none", values=None):
            self.value, self.synchronization, self.aggregation = np.asarray(value), synchronization, aggregation
            if values is not None:
                self.values = values

        def numpy(self):
            return self.value

    tf.Variable = Variable
    tf.VariableSynchronization = types.SimpleNamespace(ON_READ="on_read")
    tf.VariableAggregation = types.SimpleNamespace(SUM="sum")
    monkeypatch.setitem(sys.modules, "tensorflow", tf)
    on_read = Variable(0, "on_read", "sum", values=(Variable(np.int64(253)), Variable(np.int64(1))))
    graph = {
        "positives": Variable(np.int64(341)),
        "epoch": Variable(np.int64(2)),
        "save_counter": Variable(np.int64(3)),
        "seen": on_read,
        "mean": Variable(0, "on_read", "mean", values=(Variable(np.int64(4)),)),
        "loss": Variable(np.float32(0.5)),
        "kernel": Variable(np.zeros((2, 2), np.int64)),
        "model": object(),
    }
    monkeypatch.setattr(variables, "children", lambda obj: graph)
    assert variables.counters("root") == ({"epoch": 2, "positives": 341}, {"seen": 254})


def test_the_counters_ride_on_the_checkpoint_and_restored_events(tmp_path, obs, captured, monkeypatch):
    monkeypatch.setattr(loop.variables, "counters", lambda ckpt: ({"positives": 5}, {"seen": 2}))
    ckpt = Checkpoint()
    obs.checkpoint_created(ckpt)
    opt = Optimizer()
    opt.apply_gradients()
    obs.trained([opt], 1.0)
    obs.saved(ckpt, str(tmp_path / "ckpt-1"))
    obs.restored_from(ckpt, str(tmp_path / "ckpt-1"))
    saved = next(e for e in captured.events() if isinstance(e, CheckpointEvent))
    restored = next(e for e in captured.events() if isinstance(e, RestoredEvent))
    for event in (saved, restored):
        assert (event.job_counters, event.job_counter_parts) == ({"positives": 5}, {"seen": 2})
    monkeypatch.setattr(loop.variables, "counters", lambda ckpt: 1 / 0)
    assert obs.counters(ckpt) == {}  # an odd graph costs the event its counters, not the event


# -- the epoch variable: read again only when something may have moved it -----------------------


class CountedVar(Var):
    """An epoch variable that counts its reads (each an eager op in TF)."""

    reads = 0

    def numpy(self):
        self.reads += 1
        return super().numpy()


def epochs(captured):
    return [e.epoch for e in captured.events() if isinstance(e, StepEvent)]


def train(obs, opt, n):
    for _ in range(n):
        opt.apply_gradients()
        obs.trained([opt], 1.0)


def test_the_epoch_is_read_once_and_again_after_an_eager_assign(obs, captured):
    epoch, opt = CountedVar(0), Optimizer()
    obs.checkpoint_created(Checkpoint(epoch=epoch))
    train(obs, opt, 5)
    assert epoch.reads == 1  # found by a read, whose value the first step uses
    epoch.value = 1
    obs.epoch_assigned(eagerly=True)  # the patch's call: an eager assign_add(1)
    train(obs, opt, 3)
    assert epoch.reads == 2
    assert epochs(captured) == [0] * 5 + [1] * 3
    assert not [e for e in captured.events() if isinstance(e, NoticeEvent) and "epoch" in e.text]


def test_an_epoch_moved_without_an_assign_is_caught_by_the_check_then_read_every_step(obs, captured):
    epoch, opt = CountedVar(0), Optimizer()
    obs.checkpoint_created(Checkpoint(epoch=epoch))
    train(obs, opt, 3)
    epoch.value = 4  # written by something the patch does not see
    train(obs, opt, loop.VERIFY_EVERY)
    assert epochs(captured)[-1] == 4
    notice = [e for e in captured.events() if isinstance(e, NoticeEvent) and "epoch variable" in e.text]
    assert len(notice) == 1 and "read at every step" in notice[0].text
    before = epoch.reads
    train(obs, opt, 3)
    assert epoch.reads == before + 3


def test_an_epoch_assigned_inside_a_tf_function_is_read_every_step(obs, captured):
    epoch, opt = CountedVar(0), Optimizer()
    obs.checkpoint_created(Checkpoint(epoch=epoch))
    train(obs, opt, 1)
    obs.epoch_assigned(eagerly=False)  # traced: the graph assigns it on every call
    before = epoch.reads
    for n in range(1, 4):
        epoch.value = n
        train(obs, opt, 1)
    assert epoch.reads == before + 3
    assert epochs(captured)[-3:] == [1, 2, 3]


def test_a_restore_reads_the_epoch_again(tmp_path, obs, captured):
    epoch, opt = CountedVar(0), Optimizer()
    ckpt = Checkpoint(epoch=epoch, optimizer=opt)
    obs.checkpoint_created(ckpt)
    train(obs, opt, 2)
    epoch.value = 3  # what the restore wrote
    (tmp_path / "ckpt-1.index").write_text("")
    obs.restored_from(ckpt, str(tmp_path / "ckpt-1"))
    train(obs, opt, 1)
    assert epochs(captured)[-1] == 3


def test_the_variable_patch_tells_the_observer_of_an_assign_to_the_epoch_only(fake_context, monkeypatch):
    told = []
    observer = loop.LoopObserver()
    monkeypatch.setattr(observer, "epoch_assigned", lambda eagerly: told.append(eagerly))
    monkeypatch.setattr(loop, "_observer", observer)

    class BaseResourceVariable:
        def __init__(self):
            self.value = 0

        def assign_add(self, delta):
            self.value += delta
            return self

    module = types.ModuleType(tf_patches.VARIABLE_MODULE)
    module.BaseResourceVariable = BaseResourceVariable
    tf_patches.patch_variable_module(module)
    epoch, other = BaseResourceVariable(), BaseResourceVariable()
    observer.assign_watch = {id(epoch)}
    assert other.assign_add(1) is other and told == []
    assert epoch.assign_add(2) is epoch and epoch.value == 2 and told == [True]
    fake_context["eager"] = False
    epoch.assign_add(1)
    assert told == [True, False]
