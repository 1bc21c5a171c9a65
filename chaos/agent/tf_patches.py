"""The patches that let chaos.agent.loop see a custom loop: on TF's
``tf.function``, ``tf.train.Checkpoint`` and ``CheckpointManager``, and on the
optimizers' apply methods of tf-keras, TF 2.15's Keras and Keras 3.

Each wraps the method in its class (once: a wrapper carries the original), calls
the original with the arguments unchanged and returns what it returned; what
the agent does beside it is guarded, so a failure there costs the job nothing.
Why these: every loop users write calls an optimizer's apply once per update,
inside a ``tf.function`` (traced once, so the apply runs in Python only then)
or eagerly. So the apply marks the ``tf.function`` being traced as a train
step, and each later call of it is followed by one read of the optimizers'
``iterations``, or, where its traces show one apply per call, a count
(chaos.agent.step_shape; docs/workloads.md, "A custom loop, with no code change").
"""

from __future__ import annotations

import functools
import threading

from chaos.agent import step_shape
from chaos.agent.guard import guarded
from chaos.agent.loop import observer

ORIGINAL = "_tfchaos_original"
TRAINS = "_tfchaos_optimizers"  # on a tf.function: the optimizers its trace applied

# Optimizer classes (by module) whose own apply methods are wrapped.
OPTIMIZER_CLASSES = {
    "tf_keras.src.optimizers.optimizer": ("_BaseOptimizer", "Optimizer"),  # tf-keras (TF >= 2.16, legacy Keras)
    "tf_keras.src.optimizers.legacy.optimizer_v2": ("OptimizerV2",),
    "keras.src.optimizers.optimizer": ("_BaseOptimizer", "Optimizer"),  # Keras 2.13 - 2.15 (TF 2.15's tf.keras)
    "keras.src.optimizers.legacy.optimizer_v2": ("OptimizerV2",),
    "keras.src.optimizers.base_optimizer": ("BaseOptimizer",),  # Keras 3 (tf.keras of TF >= 2.16)
}
APPLY_METHODS = ("apply_gradients", "apply")
FUNCTION_MODULE = "tensorflow.python.eager.polymorphic_function.polymorphic_function"
CHECKPOINT_MODULE = "tensorflow.python.checkpoint.checkpoint"
MANAGER_MODULE = "tensorflow.python.checkpoint.checkpoint_management"
VARIABLE_MODULE = "tensorflow.python.ops.resource_variable_ops"
ASSIGN_METHODS = ("assign", "assign_add", "assign_sub")

_calls: list = []  # the tf.function calls made eagerly and running now (outermost first)
_depth = {"save": 0, "restore": 0}


def _patch(cls, name: str, make) -> None:
    original = cls.__dict__.get(name)
    if original is None or hasattr(original, ORIGINAL):
        return
    wrapper = functools.wraps(original)(make(original))
    setattr(wrapper, ORIGINAL, original)
    setattr(cls, name, wrapper)


@guarded("custom loop: noting an optimizer's apply")
def _applied(optimizer, executing_eagerly) -> bool:
    """Note the apply; True when it ran eagerly (a step of its own)."""
    obs = observer()
    obs.optimizer_applied(optimizer)
    if executing_eagerly():
        return True
    if _calls:  # tracing the outermost tf.function call: it is a train step
        trains = _calls[-1].__dict__.setdefault(TRAINS, [])
        if not any(o is optimizer for o in trains):
            trains.append(optimizer)
        step_shape.note_apply(_calls[-1], optimizer)
    return False


_local = threading.local()  # per thread: MirroredStrategy traces each replica's apply in a thread of its own


def _applying() -> set:
    """The optimizers (ids) whose patched apply runs now in this thread."""
    if not hasattr(_local, "applying"):
        _local.applying = set()
    return _local.applying


def patch_optimizer_module(module) -> None:
    from tensorflow.python.eager import context

    for class_name in OPTIMIZER_CLASSES.get(module.__name__, ()):
        cls = getattr(module, class_name, None)
        if cls is None:
            continue
        for method in APPLY_METHODS:

            def make(original):
                def apply(self, *args, **kwargs):
                    applying = _applying()
                    if id(self) in applying:  # apply_gradients calls apply, a subclass its base's: one apply
                        return original(self, *args, **kwargs)
                    applying.add(id(self))
                    try:
                        eager = _applied(self, context.executing_eagerly)
                        result = original(self, *args, **kwargs)
                    finally:
                        applying.discard(id(self))
                    if eager:
                        observer().trained([self])
                    return result

                return apply

            _patch(cls, method, make)


def patch_function_module(module) -> None:
    from tensorflow.python.eager import context

    def make(original):
        def __call__(self, *args, **kwds):
            if not context.executing_eagerly():  # traced inside another function: not a step of its own
                return original(self, *args, **kwds)
            _calls.append(self)
            try:
                result = original(self, *args, **kwds)
            finally:
                _forget_call(self)
            trains = self.__dict__.get(TRAINS)
            if trains:
                observer().trained(trains, result, fn=self)
            return result

        return __call__

    _patch(module.Function, "__call__", make)


def _forget_call(fn) -> None:
    for i in range(len(_calls) - 1, -1, -1):
        if _calls[i] is fn:
            del _calls[i]
            return


def _after_init(note):
    def make(original):
        def __init__(self, *args, **kwargs):
            original(self, *args, **kwargs)
            guarded("custom loop: noting a checkpoint object")(note)(self)

        return __init__

    return make


def _outermost(kind: str, after):
    """A wrapper that calls ``after(self, args, kwargs, result)`` for the outermost call of its kind only
    (Checkpoint.restore calls read; CheckpointManager.save calls _write)."""

    def make(original):
        def method(self, *args, **kwargs):
            _depth[kind] += 1
            try:
                result = original(self, *args, **kwargs)
            finally:
                _depth[kind] -= 1
            if _depth[kind] == 0:
                guarded(f"custom loop: after a checkpoint {kind}")(after)(self, args, kwargs, result)
            return result

        return method

    return make


def _first_arg(args, kwargs, name):
    return args[0] if args else kwargs.get(name)


def patch_checkpoint_module(module) -> None:
    cls = module.Checkpoint
    _patch(cls, "__init__", _after_init(observer().checkpoint_created))
    saved = _outermost("save", lambda self, args, kwargs, path: observer().saved(self, path))
    # _write is where save, write and CheckpointManager.save meet (TF 2.12 - 2.21)
    for name in ("_write",) if "_write" in cls.__dict__ else ("save", "write"):
        _patch(cls, name, saved)
    restored = _outermost(
        "restore", lambda self, args, kwargs, _: observer().restored_from(self, _first_arg(args, kwargs, "save_path"))
    )
    for name in ("restore", "read"):
        _patch(cls, name, restored)


@guarded("custom loop: noting an assign to the epoch variable")
def _epoch_assigned(executing_eagerly) -> None:
    observer().epoch_assigned(executing_eagerly())


def patch_variable_module(module) -> None:
    """Every tf.Variable's assigns (the components of a distributed one and the one a Keras 3
    variable wraps included): one assigned to the job's epoch variable tells the observer, which
    then reads it again instead of at every step (an id in a set of at most a few: well under 1 us)."""
    from tensorflow.python.eager import context

    def make(original):
        def assign(self, *args, **kwargs):
            if id(self) in observer().assign_watch:
                _epoch_assigned(context.executing_eagerly)
            return original(self, *args, **kwargs)

        return assign

    for name in ASSIGN_METHODS:
        _patch(module.BaseResourceVariable, name, make)


def patch_manager_module(module) -> None:
    _patch(module.CheckpointManager, "__init__", _after_init(observer().manager_created))
