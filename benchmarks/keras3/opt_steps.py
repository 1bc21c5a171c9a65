"""Which optimizer / strategy methods run per training step, and does `iterations` count steps?

  opt_steps.py PATTERN [OPT]     (K = 12 steps; whatever tf.keras is: Keras 3 unless TF_USE_LEGACY_KERAS=1)

PATTERN:
  fn          a @tf.function train_step: strategy.run(step_fn), step_fn applies once (the tutorial)
  eager       the same without tf.function
  loop_fn     one tf.function running all K steps (`for _ in tf.range(K)`)
  accum_py    gradient accumulation, every 4 steps: grads summed into ON_READ/SUM accumulators by
              one tf.function, applied by another, chosen in Python (`if (s + 1) % 4 == 0`)
  accum_cond  the same inside one tf.function: tf.cond(step % 4 == 0, apply, accumulate)
  accum_cond_cross  the tf.cond outside strategy.run (cross-replica context), one strategy.run per branch
  accum_builtin  Keras 3 only: SGD(gradient_accumulation_steps=4), applied every step
  two_opt     two sub-models, two optimizers, both applied in every step
OPT: default (tf.keras.optimizers.SGD) or legacy (tf.keras.optimizers.legacy.SGD, OptimizerV2).

Every hooked method counts its Python calls (`py`) and adds a tf.print("@@RT <name>") so
its executions are counted too (`rt`, from the log). Emits iterations after K steps.
"""

import collections
import functools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tensorflow as tf  # noqa: E402
from common import emit, first_line, tail, unfilter_keras, versions, where  # noqa: E402
from tensorflow.python.distribute import distribute_lib  # noqa: E402
from tensorflow.python.eager.polymorphic_function import polymorphic_function  # noqa: E402

PATTERN = sys.argv[1]
OPT = sys.argv[2] if len(sys.argv) > 2 else "default"
K, ACC = 12, 4
emit(event="start", pattern=PATTERN, opt=OPT, **versions())
unfilter_keras()
py = collections.Counter()


def hook(cls, name, label):
    if os.environ.get("NOHOOK"):  # to check that an error is not the hooks' doing
        return
    orig = cls.__dict__[name]

    @functools.wraps(orig)
    def w(*a, **k):
        py[label] += 1
        tf.print("@@RT", label, output_stream=sys.stdout)
        out = orig(*a, **k)
        if os.environ.get("PYHOOK") and label in APPLY_HOOKS:
            # What an agent could do: after the apply, a host callback with the optimizer's
            # iterations, run per execution (not per trace).
            opt = a[0]
            tf.py_function(
                lambda v, o=opt: seen.append((o.name if hasattr(o, "name") else id(o), int(v))),
                [tf.convert_to_tensor(opt.iterations)],
                [],
            )
        return out

    setattr(cls, name, w)


APPLY_HOOKS = {"k3.BaseOptimizer.apply", "tfk.Optimizer.apply_gradients", "tfk.OptimizerV2.apply_gradients"}
seen = []
KERAS3 = tf.keras.Model.__module__.startswith("keras.src")
if KERAS3:
    from keras.src.backend.tensorflow.optimizer import TFOptimizer
    from keras.src.optimizers.base_optimizer import BaseOptimizer

    hook(BaseOptimizer, "apply", "k3.BaseOptimizer.apply")
    hook(BaseOptimizer, "apply_gradients", "k3.BaseOptimizer.apply_gradients")
    hook(TFOptimizer, "_backend_update_step", "k3.TFOptimizer._backend_update_step")
else:
    from tf_keras.src.optimizers import optimizer as new_opt
    from tf_keras.src.optimizers.legacy import optimizer_v2

    hook(new_opt.Optimizer, "apply_gradients", "tfk.Optimizer.apply_gradients")
    hook(new_opt._BaseOptimizer, "apply_gradients", "tfk._BaseOptimizer.apply_gradients")
    hook(new_opt.Optimizer, "_distributed_apply_gradients_fn", "tfk.Optimizer._distributed_apply_gradients_fn")
    hook(optimizer_v2.OptimizerV2, "apply_gradients", "tfk.OptimizerV2.apply_gradients")
    hook(optimizer_v2.OptimizerV2, "_distributed_apply", "tfk.OptimizerV2._distributed_apply")
hook(distribute_lib.StrategyBase, "run", "Strategy.run")
fcalls = collections.Counter()
orig_call = polymorphic_function.Function.__call__


def fcall(self, *a, **k):
    fcalls[self._name] += 1
    return orig_call(self, *a, **k)


polymorphic_function.Function.__call__ = fcall

tf.keras.utils.set_random_seed(42)
strategy = tf.distribute.MultiWorkerMirroredStrategy()
x = tf.random.stateless_normal((32, 20), seed=(1, 2))
y = tf.reduce_sum(x, axis=1, keepdims=True)


def make_opt(**kw):
    if OPT == "legacy":
        return tf.keras.optimizers.legacy.SGD(0.01, **kw)
    return tf.keras.optimizers.SGD(0.01, **kw)


with strategy.scope():
    m1 = tf.keras.Sequential([tf.keras.Input((20,)), tf.keras.layers.Dense(8)])
    m2 = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(1)])
    opt1 = make_opt(gradient_accumulation_steps=ACC) if PATTERN == "accum_builtin" else make_opt()
    opt2 = make_opt()
    models = [m1, m2]
    tv = m1.trainable_variables + m2.trainable_variables
    if PATTERN.startswith("accum_") and PATTERN != "accum_builtin":
        acc = [
            tf.Variable(
                tf.zeros_like(v),
                trainable=False,
                synchronization=tf.VariableSynchronization.ON_READ,
                aggregation=tf.VariableAggregation.SUM,
            )
            for v in tv
        ]
        counter = tf.Variable(0, dtype=tf.int64, trainable=False)


def grads_of():
    with tf.GradientTape() as tape:
        pred = m2(m1(x))
        loss = tf.nn.compute_average_loss(
            tf.reduce_mean(tf.square(pred - y), axis=1), global_batch_size=32 * strategy.num_replicas_in_sync
        )
    return tape.gradient(loss, tv)


def step_fn():
    g = grads_of()
    if PATTERN == "two_opt":
        n = len(m1.trainable_variables)
        opt1.apply_gradients(zip(g[:n], tv[:n]))
        opt2.apply_gradients(zip(g[n:], tv[n:]))
    else:
        opt1.apply_gradients(zip(g, tv))


def accumulate_fn():
    for a, g in zip(acc, grads_of()):
        a.assign_add(g)


def apply_acc_fn():
    opt1.apply_gradients(zip([a / ACC for a in acc], tv))
    for a in acc:
        a.assign(tf.zeros_like(a))


@tf.function
def train_step():
    strategy.run(step_fn)


@tf.function
def train_loop():
    for _ in tf.range(K):
        strategy.run(step_fn)


@tf.function
def accumulate_step():
    strategy.run(accumulate_fn)


@tf.function
def apply_step():
    strategy.run(apply_acc_fn)


@tf.function
def cond_cross_step():
    counter.assign_add(1)
    strategy.run(accumulate_fn)
    tf.cond(counter % ACC == 0, lambda: (strategy.run(apply_acc_fn), tf.constant(True))[1], lambda: tf.constant(False))


@tf.function
def cond_step():
    counter.assign_add(1)

    def fn():
        accumulate_fn()
        tf.cond(counter % ACC == 0, lambda: (apply_acc_fn(), tf.constant(True))[1], lambda: tf.constant(False))

    strategy.run(fn)


def it(o):
    v = o.iterations
    return int(v.numpy()) if hasattr(v, "numpy") else int(v)


try:
    if PATTERN in ("fn", "two_opt", "accum_builtin"):
        for _ in range(K):
            train_step()
    elif PATTERN == "eager":
        for _ in range(K):
            strategy.run(step_fn)
    elif PATTERN == "loop_fn":
        train_loop()
    elif PATTERN == "accum_py":
        for s in range(K):
            accumulate_step()
            if (s + 1) % ACC == 0:
                apply_step()
    elif PATTERN == "accum_cond":
        for _ in range(K):
            cond_step()
    elif PATTERN == "accum_cond_cross":
        for _ in range(K):
            cond_cross_step()
    else:
        raise SystemExit(f"unknown pattern {PATTERN}")
    out = {"opt1_iterations": it(opt1), "opt2_iterations": it(opt2)}
    if KERAS3:
        out["opt1._iterations"] = int(opt1._iterations.numpy())
    emit(
        event="result",
        steps=K,
        **out,
        py=dict(py),
        tf_function_calls=dict(fcalls),
        pyhook_seen=seen if os.environ.get("PYHOOK") else None,
        opt_class=f"{type(opt1).__module__}.{type(opt1).__name__}",
        iterations_type=type(opt1.iterations).__name__,
    )
except Exception as exc:  # noqa: BLE001
    import traceback

    traceback.print_exc()
    emit(event="error", error=first_line(exc), tail=tail(exc), where=where(exc), py=dict(py))
    sys.exit(1)
