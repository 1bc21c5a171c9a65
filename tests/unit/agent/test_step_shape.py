"""Counting a custom loop's steps without a read per step (chaos.agent.step_shape) and
the cheaper reads (chaos.agent.variables), against fakes of the TF boundary: a
tf.function that traces once per input key and counts its traces, graphs that are
the function's own or nested (a tf.cond branch), and an ``iterations`` variable
that counts how often it is read. The real TF path is measured in containers
(docs/notebook/agent.md)."""

from __future__ import annotations

import sys
import types

import pytest

from chaos.agent import loop, step_shape, tf_patches, variables
from chaos.events import NoticeEvent, StepEvent


class CountedVar:
    """An optimizer's iterations whose reads are counted."""

    def __init__(self):
        self.value, self.reads = 0, 0

    def numpy(self):
        import numpy as np

        self.reads += 1
        return np.int64(self.value)


class Graph:
    def __init__(self, own: bool):
        self.own = own


@pytest.fixture
def traced(monkeypatch, fake_context):
    """tf.function fakes whose traces run in a Graph the test says is the function's own or not."""
    state = {"graph": None}
    monkeypatch.setattr(step_shape, "current_graph", lambda: state["graph"])
    monkeypatch.setattr(step_shape, "is_function_graph", lambda graph: graph.own)
    monkeypatch.setattr(loop, "_observer", loop.LoopObserver())
    monkeypatch.setattr(loop, "_hook_exit", lambda obs: None)  # no atexit, no sys.exit wrapper

    class Function:
        """Traces ``body(key)`` once per key, in a graph of ``own``; later calls run ``graph_run(key)``."""

        def __init__(self, body, graph_run, own=lambda key: True):
            self.body, self.graph_run, self.own, self.keys = body, graph_run, own, set()

        def experimental_get_tracing_count(self):
            return len(self.keys)

        def __call__(self, key="a"):
            if key not in self.keys:
                self.keys.add(key)
                fake_context["eager"], state["graph"] = False, Graph(self.own(key))
                try:
                    self.body(key)
                finally:
                    fake_context["eager"] = True
            self.graph_run(key)
            return 0.5

    functions = types.ModuleType(tf_patches.FUNCTION_MODULE)
    functions.Function = Function
    tf_patches.patch_function_module(functions)

    class BaseOptimizer:
        def __init__(self):
            self.iterations = CountedVar()

        def apply(self, grads):
            pass  # traced: the graph's run moves iterations

        def apply_gradients(self, pairs):
            return self.apply(pairs)  # both wrapped: one apply

    optimizers = types.ModuleType("keras.src.optimizers.base_optimizer")
    optimizers.BaseOptimizer = BaseOptimizer
    tf_patches.patch_optimizer_module(optimizers)
    return Function, BaseOptimizer


@pytest.fixture
def fake_context(monkeypatch):
    state = {"eager": True}
    context = types.ModuleType("tensorflow.python.eager.context")
    context.executing_eagerly = lambda: state["eager"]
    for name in ("tensorflow", "tensorflow.python", "tensorflow.python.eager"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "tensorflow.python.eager.context", context)
    sys.modules["tensorflow.python.eager"].context = context
    monkeypatch.setattr(tf_patches, "_calls", [])
    return state


def step_numbers(captured):
    return [e.step for e in captured.events() if isinstance(e, StepEvent)]


def notices(captured):
    return [e.text for e in captured.events() if isinstance(e, NoticeEvent) and "traces said" in e.text]


def test_a_step_that_applies_once_per_call_is_counted_with_a_read_every_verify_every_steps(
    traced, captured, numpy_module
):
    Function, Optimizer = traced
    opt = Optimizer()
    step = Function(
        lambda key: opt.apply_gradients([]), lambda key: setattr(opt.iterations, "value", opt.iterations.value + 1)
    )
    for _ in range(120):
        step()
    assert step_numbers(captured) == list(range(1, 121))
    # the first call reads (no count to start from), then one read per VERIFY_EVERY counted steps
    assert opt.iterations.reads == 1 + 120 // (loop.VERIFY_EVERY + 1)
    assert step.__dict__[step_shape.FIXED] == (1, 1)
    assert notices(captured) == []


def test_a_step_applied_in_a_branch_is_read_every_call_and_a_call_that_applied_nothing_is_no_step(
    traced, captured, numpy_module
):
    Function, Optimizer = traced
    opt = Optimizer()
    calls = {"n": 0}

    def graph_run(key):  # the cond applies on every other call
        calls["n"] += 1
        opt.iterations.value += calls["n"] % 2

    step = Function(lambda key: opt.apply_gradients([]), graph_run, own=lambda key: False)
    for _ in range(6):
        step()
    assert opt.iterations.reads == 6
    assert step_numbers(captured) == [1, 2, 3]


def test_a_trace_that_applies_nothing_makes_every_call_read(traced, captured, numpy_module):
    """A Python-level branch (``if apply:``): one trace applies, the other does not."""
    Function, Optimizer = traced
    opt = Optimizer()

    def body(key):
        if key == "apply":
            opt.apply_gradients([])

    def graph_run(key):
        opt.iterations.value += key == "apply"

    step = Function(body, graph_run)
    for key in ("apply", "skip") * 3:
        step(key)
    assert step_numbers(captured) == [1, 2, 3]
    assert opt.iterations.reads == 6  # once the skipping trace exists, every call reads
    assert step.__dict__[step_shape.FIXED] == (2, None)


def test_two_applies_in_one_trace_are_read(traced, captured, numpy_module):
    """An unrolled Python loop, or MirroredStrategy's one apply per replica: the graph says how far."""
    Function, Optimizer = traced
    opt = Optimizer()

    def body(key):
        opt.apply_gradients([])
        opt.apply_gradients([])

    step = Function(body, lambda key: setattr(opt.iterations, "value", opt.iterations.value + 2))
    for _ in range(3):
        step()
    assert step.__dict__[step_shape.FIXED] == (1, None)
    assert opt.iterations.reads == 3
    assert step_numbers(captured) == [1, 3, 5]


def test_a_read_that_disagrees_with_the_count_is_said_and_every_step_is_read_from_then_on(
    traced, captured, numpy_module
):
    Function, Optimizer = traced
    opt = Optimizer()
    calls = {"n": 0}

    def graph_run(key):  # from call 10 on the graph skips every other apply: the traces did not show it
        calls["n"] += 1
        opt.iterations.value += 1 if calls["n"] < 10 else calls["n"] % 2

    step = Function(lambda key: opt.apply_gradients([]), graph_run)
    for _ in range(loop.VERIFY_EVERY + 10):
        step()
    assert len(notices(captured)) == 1
    reads = opt.iterations.reads
    for _ in range(4):
        step()
    assert opt.iterations.reads == reads + 4


def test_where_each_apply_was_traced_is_noted_once_per_optimizer_and_graph(traced, numpy_module):
    Function, Optimizer = traced
    opt = Optimizer()
    step = Function(lambda key: opt.apply_gradients([]), lambda key: None)
    step()
    (trace,) = step.__dict__[step_shape.TRACES].values()
    assert trace.applies == {id(opt): 1} and trace.own_graph


def test_keras3_gradient_accumulation_is_read(traced, numpy_module):
    Function, Optimizer = traced
    opt = Optimizer()
    opt.gradient_accumulation_steps = 4
    step = Function(lambda key: opt.apply_gradients([]), lambda key: None)
    step()
    assert step_shape.fixed_advance(step, [opt]) is None


def test_a_function_without_a_tracing_count_is_read():
    class Old:
        pass

    assert step_shape.fixed_advance(Old(), []) is None


# -- reading an integer variable by its handle -------------------------------------------------


@pytest.fixture
def fake_reader(monkeypatch, numpy_module):
    """tensorflow's read_variable_op and VariableSynchronization, recording the reads."""
    import numpy as np

    reads = []
    ops = types.ModuleType("tensorflow.python.ops.gen_resource_variable_ops")

    def read_variable_op(handle, dtype):
        reads.append(handle)
        return types.SimpleNamespace(numpy=lambda: np.asarray(handle["value"]))

    ops.read_variable_op = read_variable_op
    tf = types.ModuleType("tensorflow")
    tf.VariableSynchronization = types.SimpleNamespace(ON_READ="on_read")
    for name, module in (
        ("tensorflow", tf),
        ("tensorflow.python", types.ModuleType("tensorflow.python")),
        ("tensorflow.python.ops", types.ModuleType("tensorflow.python.ops")),
        ("tensorflow.python.ops.gen_resource_variable_ops", ops),
    ):
        monkeypatch.setitem(sys.modules, name, module)
    sys.modules["tensorflow.python.ops"].gen_resource_variable_ops = ops
    return reads


class HandleVar:
    def __init__(self, value, integer=True, synchronization="auto"):
        self.handle = {"value": value}
        self.dtype = types.SimpleNamespace(is_integer=integer)
        self.synchronization = synchronization

    def numpy(self):
        raise AssertionError("read by its handle, not numpy()")


def test_an_integer_variable_is_read_by_one_op_on_its_handle(fake_reader):
    assert variables.integer_value(HandleVar(7)) == 7
    assert variables.integer_value(HandleVar([3])) == 3
    assert len(fake_reader) == 2


def test_a_float_or_on_read_variable_is_not_read_by_its_handle(fake_reader):
    assert variables._read_handle(HandleVar(1.5, integer=False)) is None
    assert variables._read_handle(HandleVar(3, synchronization="on_read")) is None  # its replicas' sum
    assert variables._read_handle(HandleVar([1, 2])) is None
    assert fake_reader == [{"value": [1, 2]}]


# -- the epoch variable is looked for when checkpoints change, not every step -------------------


def test_the_epoch_variable_is_looked_for_per_checkpoint_change_not_per_step(monkeypatch, captured, numpy_module):
    looked = []

    class Checkpoint:
        epoch = None

    def child_named(ckpt, name):
        looked.append(name)
        return getattr(ckpt, name, None)

    monkeypatch.setattr(loop.variables, "child_named", child_named)
    monkeypatch.setattr(loop, "_hook_exit", lambda obs: None)
    obs = loop.LoopObserver()
    ckpt = Checkpoint()
    obs.checkpoint_created(ckpt)
    for _ in range(5):
        assert obs.epoch() == 0
    assert looked == ["epoch"]
    ckpt.epoch = CountedVar()  # set on the checkpoint after its creation
    ckpt.epoch.value = 3
    monkeypatch.setattr(loop.checkpoint_steps, "record", lambda path, step: None)
    monkeypatch.setattr(obs, "counters", lambda checkpoint: {})
    obs.saved(ckpt, "/tmp/ckpt-1")
    assert obs.epoch() == 3 and looked.count("epoch") >= 2
