"""A custom training loop under MWMS written as TF's "Custom training loop with Keras and
MultiWorkerMirroredStrategy" tutorial writes it, with whatever `tf.keras` is (Keras 3
unless TF_USE_LEGACY_KERAS=1).

  ctl.py probe                    each Keras 2 API the tutorial (and users) call, alone
  ctl.py train EPOCHS [STOP]      train EPOCHS x 20 steps; with STOP, stop after saving epoch STOP
                                  (a resume run restores the chief's latest checkpoint)

Checkpoints: tf.train.Checkpoint(model, optimizer, epoch) with a CheckpointManager per worker
at /shared/ctl/w<i> (the chief's is the one every worker restores, as in the tutorial).
The loss uses reduction NONE + tf.nn.compute_average_loss; the metric is reset each epoch
with reset_state() (Keras 3) / reset_states() where present. The data of epoch e is a pure
function of e, so a resumed run can end bit-exact with an uninterrupted one.
"""

import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tensorflow as tf  # noqa: E402
from common import data, digest, emit, first_line, task_index, unfilter_keras, versions, where  # noqa: E402

mode = sys.argv[1]
GLOBAL_BATCH, STEPS = 64, 20
emit(event="start", mode=mode, **versions())
unfilter_keras()
tf.keras.utils.set_random_seed(42)
strategy = tf.distribute.MultiWorkerMirroredStrategy()
TASK = task_index()
x, y = data()


def build():
    with strategy.scope():
        model = tf.keras.Sequential(
            [tf.keras.Input((20,)), tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1)]
        )
        opt = tf.keras.optimizers.SGD(0.05)
        metric = tf.keras.metrics.MeanSquaredError()
    return model, opt, metric


def probe(name, fn):
    try:
        r = fn()
        emit(event="probe", api=name, ok=True, result=str(r)[:120])
    except Exception as exc:  # noqa: BLE001
        emit(event="probe", api=name, ok=False, error=first_line(exc), where=where(exc))


if mode == "probe":
    model, opt, metric = build()
    probe("tf.keras.losses.Reduction.NONE", lambda: tf.keras.losses.Reduction.NONE)
    probe(
        "MeanSquaredError(reduction=tf.keras.losses.Reduction.NONE)",
        lambda: tf.keras.losses.MeanSquaredError(reduction=tf.keras.losses.Reduction.NONE),
    )
    probe("MeanSquaredError(reduction=None)", lambda: tf.keras.losses.MeanSquaredError(reduction=None))
    probe("MeanSquaredError(reduction='none')", lambda: tf.keras.losses.MeanSquaredError(reduction="none"))
    probe("metric.reset_states()", lambda: metric.reset_states())
    probe("metric.reset_state()", lambda: metric.reset_state())
    probe("model.get_weights()", lambda: len(model.get_weights()))
    probe("model.set_weights(model.get_weights())", lambda: model.set_weights(model.get_weights()))
    probe("type(optimizer.iterations)", lambda: f"{type(opt.iterations).__name__} {opt.iterations.dtype}")
    probe("optimizer.apply_gradients exists", lambda: opt.apply_gradients)
    probe("optimizer.apply exists", lambda: opt.apply)
    probe("optimizer.get_config()['name']", lambda: opt.get_config()["name"])
    probe("tf.keras.optimizers.legacy.SGD(0.1)", lambda: tf.keras.optimizers.legacy.SGD(0.1))
    probe("optimizer.lr", lambda: opt.lr)
    probe("optimizer.learning_rate", lambda: float(opt.learning_rate.numpy()))
    probe("model.save_weights('/tmp/w.h5')", lambda: model.save_weights("/tmp/w.h5"))
    probe("model.save_weights('/tmp/ckpt')  (TF format)", lambda: model.save_weights("/tmp/ckpt"))
    probe("model.save_weights('/tmp/w.weights.h5')", lambda: model.save_weights("/tmp/w.weights.h5"))
    probe("model.save('/tmp/savedmodel')  (SavedModel dir)", lambda: model.save("/tmp/savedmodel"))
    probe("tf.saved_model.save(model, '/tmp/sm2')", lambda: tf.saved_model.save(model, "/tmp/sm2"))
    probe("tf.keras.backend.get_value(opt.iterations)", lambda: tf.keras.backend.get_value(opt.iterations))
    probe("model.variables[0] is tf.Variable", lambda: isinstance(model.variables[0], tf.Variable))
    probe(
        "type(model.variables[0]) / .value",
        lambda: f"{type(model.variables[0]).__name__} / {type(getattr(model.variables[0], 'value', None)).__name__}",
    )
    probe(
        "tf.train.Checkpoint(model=, optimizer=).write",
        lambda: tf.train.Checkpoint(model=model, optimizer=opt).write(f"/tmp/p{TASK}"),
    )
    probe("tf.keras.utils.experimental.DatasetCreator", lambda: tf.keras.utils.experimental.DatasetCreator)
    probe(
        "tf.keras.layers.experimental.preprocessing", lambda: tf.keras.layers.experimental.preprocessing.Normalization
    )
    probe(
        "tf.keras.mixed_precision.LossScaleOptimizer.get_scaled_loss",
        lambda: tf.keras.mixed_precision.LossScaleOptimizer(opt).get_scaled_loss,
    )
    probe(
        "BackupAndRestore('/tmp/b', save_before_preemption=True)",
        lambda: tf.keras.callbacks.BackupAndRestore("/tmp/b", save_before_preemption=True),
    )
    probe("tf.keras.callbacks.experimental.BackupAndRestore", lambda: tf.keras.callbacks.experimental.BackupAndRestore)
    probe(
        "BackupAndRestore('/tmp/b', save_freq=False)",
        lambda: tf.keras.callbacks.BackupAndRestore("/tmp/b", save_freq=False),
    )
    emit(event="done")
    sys.exit(0)

EPOCHS = int(sys.argv[2])
STOP = int(sys.argv[3]) if len(sys.argv) > 3 else None
model, opt, metric = build()
try:
    loss_obj = tf.keras.losses.MeanSquaredError(reduction=tf.keras.losses.Reduction.NONE)
    emit(event="note", what="reduction", used="tf.keras.losses.Reduction.NONE")
except AttributeError as exc:
    emit(event="note", what="reduction", used="None (Keras 3)", why=first_line(exc))
    loss_obj = tf.keras.losses.MeanSquaredError(reduction=None)
epoch = tf.Variable(tf.constant(0, tf.int64), name="epoch")
ckpt = tf.train.Checkpoint(model=model, optimizer=opt, epoch=epoch)
mgr = tf.train.CheckpointManager(ckpt, f"/shared/ctl/w{TASK}", max_to_keep=3)
latest = tf.train.latest_checkpoint("/shared/ctl/w0")
if latest:
    before = digest([v.numpy() for v in model.variables])
    status = ckpt.restore(latest)
    try:
        status.assert_existing_objects_matched()
        matched = "ok"
    except AssertionError as exc:
        matched = first_line(exc)
    emit(
        event="restored",
        path=latest,
        epoch=int(epoch.numpy()),
        iterations=int(opt.iterations.numpy()),
        digest=digest([v.numpy() for v in model.variables]),
        weights_changed=before != digest([v.numpy() for v in model.variables]),
        assert_existing_objects_matched=matched,
    )
else:
    emit(event="fresh", digest=digest([v.numpy() for v in model.variables]))


def dataset_fn(ctx, e):
    d = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1280, seed=int(e), reshuffle_each_iteration=False)
    d = d.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)
    return d.batch(ctx.get_per_replica_batch_size(GLOBAL_BATCH))


@tf.function
def train_step(it):
    def step_fn(inputs):
        xb, yb = inputs
        with tf.GradientTape() as tape:
            pred = model(xb, training=True)
            per_example = loss_obj(yb, pred)
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        metric.update_state(yb, pred)
        return loss

    per_replica = strategy.run(step_fn, args=(next(it),))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)


try:
    while int(epoch.numpy()) < EPOCHS:
        e = int(epoch.numpy())
        it = iter(strategy.distribute_datasets_from_function(lambda ctx: dataset_fn(ctx, e)))
        total = 0.0
        for _s in range(STEPS):
            total += float(train_step(it))
        if hasattr(metric, "reset_states"):
            res = float(metric.result())
            metric.reset_states()
        else:
            res = float(metric.result())
            metric.reset_state()
        epoch.assign_add(1)
        path = mgr.save()
        emit(
            event="epoch_end",
            epoch=e,
            loss=total / STEPS,
            metric=res,
            iterations=int(opt.iterations.numpy()),
            saved=path,
            digest=digest([v.numpy() for v in model.variables]),
        )
        if STOP is not None and e + 1 == STOP:
            emit(event="stopped", after_epoch=e)
            sys.exit(0)
except Exception as exc:  # noqa: BLE001
    traceback.print_exc()
    emit(event="error", error=first_line(exc), where=where(exc))
    sys.exit(1)
emit(event="done", iterations=int(opt.iterations.numpy()), digest=digest([v.numpy() for v in model.variables]))
