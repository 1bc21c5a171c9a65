"""Runs in the worker image: one task of a ParameterServerStrategy cluster.

ps/worker tasks run ``tf.distribute.Server`` and wait; the chief is the
coordinator and trains a small dense model with a custom loop
(``ClusterCoordinator.schedule``), printing one JSON line per event with
``time.time()`` so the host driver can time each failure. MODE=fit_bar tries
Keras ``Model.fit`` with ``BackupAndRestore`` instead (is it supported?).
"""

import json
import os
import sys
import time

T0 = time.time()


def say(kind, **kw):
    print(json.dumps({"t": round(time.time(), 3), "kind": kind, **kw}), flush=True)


def serve(tf, resolver):
    server = tf.distribute.Server(
        resolver.cluster_spec(), job_name=resolver.task_type, task_index=resolver.task_id, protocol="grpc", start=True
    )
    say("server", task=f"{resolver.task_type}-{resolver.task_id}", target=server.target)
    server.join()


def coordinate(tf):
    steps = int(os.environ.get("STEPS", "3000"))
    every = int(os.environ.get("EVERY", "20"))
    ckpt_every = int(os.environ.get("CKPT_EVERY", "100"))
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    strategy = tf.distribute.ParameterServerStrategy(resolver)
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    say("strategy", workers=strategy.extended._num_workers, ps=strategy.extended._num_ps)
    features, hidden, batch = 20, 32, 32
    with strategy.scope():
        init = tf.random.stateless_normal
        w1 = tf.Variable(init([features, hidden], seed=[1, 2]) * 0.1, name="w1")
        w2 = tf.Variable(init([hidden, 1], seed=[3, 4]) * 0.1, name="w2")
        step_var = tf.Variable(0, dtype=tf.int64, name="global_step")
        opt = tf.keras.optimizers.SGD(0.01)
    ckpt = tf.train.Checkpoint(w1=w1, w2=w2, step=step_var)
    manager = tf.train.CheckpointManager(ckpt, os.environ.get("CKPT_DIR", "/backup"), max_to_keep=2)
    if manager.latest_checkpoint:
        ckpt.restore(manager.latest_checkpoint)
        say("restored", path=manager.latest_checkpoint, step=int(step_var.numpy()))

    def dataset_fn(_ctx=None):
        x = tf.random.stateless_normal([4096, features], seed=[5, 6])
        y = tf.reduce_sum(x, axis=1, keepdims=True) * 0.1
        return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(batch)

    per_worker = coordinator.create_per_worker_dataset(dataset_fn)
    it = iter(per_worker)

    @tf.function
    def train_step(iterator):
        def replica_fn(x, y):
            with tf.GradientTape() as tape:
                pred = tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2)
                loss = tf.reduce_mean(tf.square(pred - y))
            grads = tape.gradient(loss, [w1, w2])
            opt.apply_gradients(zip(grads, [w1, w2]))
            step_var.assign_add(1)
            tf.print("exec", step_var)  # goes to the executing worker's stderr
            return loss

        x, y = next(iterator)
        return strategy.run(replica_fn, args=(x, y))

    start = int(step_var.numpy())
    say("start", step=start)
    last = None
    for i in range(start, steps):
        last = coordinator.schedule(train_step, args=(it,))
        if (i + 1) % every == 0:
            coordinator.join()
            say("step", step=int(step_var.numpy()), loss=float(last.fetch()))
        if (i + 1) % ckpt_every == 0:
            coordinator.join()
            path = manager.save()
            say("checkpoint", step=int(step_var.numpy()), path=path)
    coordinator.join()
    say("done", step=int(step_var.numpy()))


def fit_bar(tf):
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    strategy = tf.distribute.ParameterServerStrategy(resolver)
    keras = tf.keras
    with strategy.scope():
        model = keras.Sequential([keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
        model.compile(keras.optimizers.SGD(0.01), loss="mse", steps_per_execution=5)

    def dataset_fn(ctx):
        x = tf.random.stateless_normal([512, 20], seed=[5, 6])
        y = tf.reduce_sum(x, axis=1, keepdims=True)
        return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(32)

    data = keras.utils.experimental.DatasetCreator(dataset_fn)
    cb = (
        [keras.callbacks.BackupAndRestore(os.environ.get("CKPT_DIR", "/backup") + "/bar")]
        if os.environ.get("BAR", "1") == "1"
        else []
    )
    model.fit(data, epochs=3, steps_per_epoch=20, callbacks=cb, verbose=2)
    say("done", mode="fit", bar=bool(cb))


def main():
    import faulthandler

    if os.environ.get("STACKS_AFTER"):
        faulthandler.dump_traceback_later(float(os.environ["STACKS_AFTER"]), repeat=True)
    import tensorflow as tf

    role = json.loads(os.environ["TF_CONFIG"])["task"]["type"]
    say("import", role=role, tf=tf.__version__, import_s=round(time.time() - T0, 2))
    try:
        if role in ("ps", "worker"):
            serve(tf, tf.distribute.cluster_resolver.TFConfigClusterResolver())
        elif os.environ.get("MODE") == "fit_bar":
            fit_bar(tf)
        else:
            coordinate(tf)
    except Exception as exc:
        cls = type(exc)
        say("error", error_class=f"{cls.__module__}.{cls.__qualname__}", message=str(exc)[:3000])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
