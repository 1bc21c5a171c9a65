"""Keras `model.fit` under MWMS with one input kind (argv[1]):

  plain   a tf.data.Dataset (global batch 32 x workers), as the Keras tutorial passes it
  numpy   x, y numpy arrays with batch_size=32 x workers
  dfd     strategy.distribute_datasets_from_function(fn) (sharded, per-replica batch)
  eds     strategy.experimental_distribute_dataset(dataset)

20->32->1 dense, SGD(0.05), mse, 3 epochs x 20 steps, seed 42. Emits the versions, the
variable types, the per-epoch loss, the steps run, optimizer.iterations and a final
weights digest, or the error (class + first line + innermost frame).

Env: FIT_PATCH=map+reduce (or map, skip) applies k3patch first (Keras 3 only);
MODEL_SCOPE=outside builds and compiles the model outside strategy.scope() and calls fit
inside it.
"""

import contextlib
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tensorflow as tf  # noqa: E402
from common import data, digest, emit, first_line, num_workers, tail, unfilter_keras, versions, where  # noqa: E402

mode = sys.argv[1]
EPOCHS, STEPS = 3, 20
GLOBAL_BATCH = 32 * num_workers()  # 64 with 2 workers, 96 with 3

emit(event="start", mode=mode, **versions())
unfilter_keras()
tf.keras.utils.set_random_seed(42)
strategy = tf.distribute.MultiWorkerMirroredStrategy()
emit(event="strategy", replicas=strategy.num_replicas_in_sync, workers=num_workers())

x, y = data()
MODEL_SCOPE = os.environ.get("MODEL_SCOPE", "inside")
FIT_PATCH = os.environ.get("FIT_PATCH", "")
if FIT_PATCH:
    import k3patch

    k3patch.apply(FIT_PATCH)
    emit(event="patch", fit_patch=FIT_PATCH)


def make():
    model = tf.keras.Sequential(
        [
            tf.keras.Input((20,)),
            tf.keras.layers.Dense(32, activation="relu"),
            tf.keras.layers.Dense(1),
        ]
    )
    model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")
    return model


if MODEL_SCOPE == "outside":
    model = make()
else:
    with strategy.scope():
        model = make()
w0 = model.weights[0]
emit(
    event="vars",
    keras_var=type(w0).__name__,
    tf_var=type(getattr(w0, "value", w0)).__name__,
    initial_digest=digest([v.numpy() for v in model.weights]),
)


class Steps(tf.keras.callbacks.Callback):
    n = 0

    def on_train_batch_end(self, batch, logs=None):
        Steps.n += 1

    def on_epoch_end(self, epoch, logs=None):
        emit(
            event="epoch_end",
            epoch=epoch,
            loss=float(logs["loss"]),
            steps=Steps.n,
            digest=digest([v.numpy() for v in self.model.weights]),
        )


kw = dict(epochs=EPOCHS, steps_per_epoch=STEPS, verbose=0, callbacks=[Steps()])
ds = tf.data.Dataset.from_tensor_slices((x, y))

fit_scope = strategy.scope() if MODEL_SCOPE == "outside" else contextlib.nullcontext()
try:
    with fit_scope:
        if mode == "plain":
            model.fit(ds.batch(GLOBAL_BATCH).repeat(), **kw)
        elif mode == "numpy":
            model.fit(x, y, batch_size=GLOBAL_BATCH, **kw)
        elif mode == "dfd":

            def fn(ctx):
                d = ds.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)
                return d.batch(ctx.get_per_replica_batch_size(GLOBAL_BATCH)).repeat()

            model.fit(strategy.distribute_datasets_from_function(fn), **kw)
        elif mode == "eds":
            model.fit(strategy.experimental_distribute_dataset(ds.batch(GLOBAL_BATCH).repeat()), **kw)
        else:
            raise SystemExit(f"unknown mode {mode}")
except Exception as exc:  # noqa: BLE001
    traceback.print_exc()
    emit(event="error", error=first_line(exc), tail=tail(exc), where=where(exc), steps=Steps.n)
    sys.exit(1)
it = model.optimizer.iterations
emit(
    event="done",
    steps=Steps.n,
    iterations=int(it.numpy() if hasattr(it, "numpy") else it),
    digest=digest([v.numpy() for v in model.weights]),
)
