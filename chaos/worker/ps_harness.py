"""Train with ParameterServerStrategy and report the same events as the MWMS harness.

Every task of the cluster runs this module (``strategy: parameter_server``).
The ps and worker tasks start ``tf.distribute.Server`` and wait: they report
``start`` only, since the coordinator runs every step on them. The chief is
the coordinator (``ClusterCoordinator.schedule``, a custom loop as in TF's
parameter server training tutorial) and reports steps with the global step,
checkpoints, restores, the final weights digest and errors.

Checkpoints: a custom loop has no Keras callbacks (``BackupAndRestore`` is
for ``Model.fit``; with this strategy tf_keras 2.20 accepts it, measured in
docs/findings.md "Parameter servers"), so the coordinator saves with
``tf.train.CheckpointManager`` to the run's shared backup volume every save
interval, and restores the newest one at start.

Steps run asynchronously on whichever worker is free, so which batch a step
sees is not a function of the step: a resumed run is not bit-identical to an
uninterrupted one (unlike the MWMS harness), only restored and completed.
"""

from __future__ import annotations

import json
import os
import sys

from chaos.events import CheckpointEvent, DoneEvent, ErrorEvent, RestoredEvent, StartEvent, StepEvent
from chaos.worker import data, tfcompat
from chaos.worker.cluster_env import TF_CONFIG_ENV
from chaos.worker.emit import Emitter
from chaos.worker.fingerprint import start_fields
from chaos.worker.settings import WorkerSettings

REPORT_EVERY = 5  # steps scheduled between two joins (one step event each)
DATA_BATCHES = 64  # distinct batches per worker dataset, repeated


def task_type() -> str:
    return json.loads(os.environ.get(TF_CONFIG_ENV, "{}")).get("task", {}).get("type", "")


def train(settings: WorkerSettings, emitter: Emitter) -> None:
    tf, keras = tfcompat.load()
    emitter.emit(StartEvent, **start_fields(tf.__version__, getattr(keras, "__version__", "")))
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    if resolver.task_type in ("ps", "worker"):
        serve(tf, resolver)
    else:
        coordinate(tf, resolver, settings, emitter)


def serve(tf, resolver) -> None:
    """A ps or worker task: a server the coordinator places variables and steps on."""
    server = tf.distribute.Server(
        resolver.cluster_spec(),
        job_name=resolver.task_type,
        task_index=resolver.task_id,
        protocol=resolver.rpc_layer or "grpc",
        start=True,
    )
    print(f"{resolver.task_type}-{resolver.task_id}: serving at {server.target}", flush=True)
    server.join()


def coordinate(tf, resolver, settings: WorkerSettings, emitter: Emitter) -> None:
    strategy = tf.distribute.ParameterServerStrategy(resolver)
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    num_workers = resolver.cluster_spec().num_tasks("worker")
    local_batch = settings.local_batch(num_workers)
    f, h, seed = settings.features, settings.hidden, settings.seed
    with strategy.scope():
        normal = tf.random.stateless_normal
        w1 = tf.Variable(normal([f, h], seed=[seed, 1]) * (2.0 / f) ** 0.5, name="w1")
        b1 = tf.Variable(tf.zeros([h]), name="b1")
        w2 = tf.Variable(normal([h, 1], seed=[seed, 2]) * (1.0 / h) ** 0.5, name="w2")
        b2 = tf.Variable(tf.zeros([1]), name="b2")
        step = tf.Variable(0, dtype=tf.int64, name="global_step")
    weights = [w1, b1, w2, b2]
    checkpoint = tf.train.Checkpoint(w1=w1, b1=b1, w2=w2, b2=b2, step=step)
    manager = tf.train.CheckpointManager(checkpoint, settings.backup_dir, max_to_keep=2)
    spe = settings.steps_per_epoch

    def digest() -> str:
        return data.weights_digest([w.numpy() for w in weights])

    if manager.latest_checkpoint:
        checkpoint.restore(manager.latest_checkpoint).assert_consumed()
        at = int(step.numpy())
        emitter.emit(
            RestoredEvent,
            epoch=at // spe,
            step=at,
            checkpoint=os.path.basename(manager.latest_checkpoint),
            weights_digest=digest(),
        )

    xs, ys = data.make_shard(seed, 0, 0, min(DATA_BATCHES, settings.total_steps), local_batch, f)

    def dataset_fn():
        return tf.data.Dataset.from_tensor_slices((xs, ys)).repeat()

    iterator = iter(coordinator.create_per_worker_dataset(dataset_fn))
    lr = settings.learning_rate

    @tf.function
    def train_step(it):
        def replica_fn(x, y):
            with tf.GradientTape() as tape:
                pred = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
                loss = tf.reduce_mean(tf.square(pred - y))
            for var, grad in zip(weights, tape.gradient(loss, weights)):
                var.assign_sub(lr * grad)  # plain SGD: no optimizer slots to place
            step.assign_add(1)
            return loss

        x, y = next(it)
        return strategy.run(replica_fn, args=(x, y))

    total = settings.total_steps
    done = int(step.numpy())
    saved = done
    while done < total:
        last = None
        for _ in range(min(REPORT_EVERY, total - done)):
            last = coordinator.schedule(train_step, args=(iterator,))
        coordinator.join()  # raises what a closure raised (e.g. a lost parameter server)
        # A closure retried on another worker can run twice: the variable is the truth.
        done = min(int(step.numpy()), total)
        loss = float(last.fetch())
        emitter.emit(StepEvent, epoch=(done - 1) // spe, step=done, loss=loss, local_loss=loss)
        if done - saved >= settings.save_interval_steps or done >= total:
            path = manager.save(checkpoint_number=done)
            saved = done
            emitter.emit(CheckpointEvent, epoch=done // spe, step=done, path=os.path.basename(path))
    emitter.emit(DoneEvent, epoch=settings.epochs - 1, step=total, weights_digest=digest())


def main() -> int:
    emitter = Emitter()
    try:
        train(WorkerSettings.from_env(dict(os.environ)), emitter)
    except Exception as exc:  # reported as an event; the exit code says it failed
        cls = type(exc)
        emitter.emit(ErrorEvent, error_class=f"{cls.__module__}.{cls.__qualname__}", message=str(exc)[:4000])
        print(f"{task_type() or 'task'} failed: {cls.__name__}: {exc}", file=sys.stderr)
        return 1
    return 0
