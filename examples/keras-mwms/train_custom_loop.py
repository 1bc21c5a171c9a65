"""A custom training loop under MultiWorkerMirroredStrategy, as TF's tutorial
"Custom training loop with Keras and MultiWorkerMirroredStrategy" teaches:
``strategy.run`` in a ``tf.function``, ``tf.train.Checkpoint`` with a
``CheckpointManager`` (the chief writes to the checkpoint directory, the other
workers to a temporary one they delete), restore from the latest checkpoint at
start.

    python train_custom_loop.py --epochs 5 --checkpoint-dir /checkpoints

Two departures from the tutorial, both for an exact resume: the optimizer is
in the checkpoint (its momentum is state too), and the epoch counter is
advanced before the save (the tutorial saves it un-advanced and, on restore,
divides by zero batches).

Progress goes to tfchaos through one call per event (``report.step``, ...),
when the tfchaos agent is in the image; without it, ``report`` is None and the
job runs the same.
"""

import argparse
import json
import os

import tensorflow as tf
from setup_model import build_model, training_set

try:  # tfchaos's reporting calls; present only when the agent is layered in
    from chaos.agent import report
except ImportError:
    report = None


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--steps-per-epoch", type=int, default=20)
    parser.add_argument("--per-worker-batch", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--checkpoint-dir", default=os.environ.get("CHECKPOINT_DIR", "/checkpoints"))
    return parser.parse_args()


def is_chief(task_type, task_id, cluster_spec):
    return (
        task_type is None
        or task_type == "chief"
        or (task_type == "worker" and task_id == 0 and "chief" not in cluster_spec.as_dict())
    )


def write_dir(checkpoint_dir, task_type, task_id, cluster_spec):
    if is_chief(task_type, task_id, cluster_spec):
        return checkpoint_dir
    temp_dir = os.path.join(checkpoint_dir, "workertemp_" + str(task_id))
    tf.io.gfile.makedirs(temp_dir)
    return temp_dir


def main():
    args = parse_args()
    tf.keras.utils.set_random_seed(args.seed)
    tf.config.experimental.enable_op_determinism()

    tf_config = json.loads(os.environ["TF_CONFIG"])
    num_workers = len(tf_config["cluster"]["worker"])
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    global_batch = args.per_worker_batch * num_workers
    x, y = training_set(args.seed, global_batch * args.steps_per_epoch)

    def dataset_fn(input_context):
        batch = input_context.get_per_replica_batch_size(global_batch)
        dataset = tf.data.Dataset.from_tensor_slices((x, y))
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        return dataset.batch(batch)

    dataset = strategy.distribute_datasets_from_function(dataset_fn)
    with strategy.scope():
        model = build_model()
        optimizer = tf.keras.optimizers.SGD(learning_rate=args.learning_rate, momentum=0.9)
    mse = tf.keras.losses.MeanSquaredError(reduction=tf.keras.losses.Reduction.NONE)

    @tf.function
    def train_step(iterator):
        def step_fn(inputs):
            features, labels = inputs
            with tf.GradientTape() as tape:
                predictions = model(features, training=True)
                loss = tf.nn.compute_average_loss(mse(labels, predictions), global_batch_size=global_batch)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        per_replica_losses = strategy.run(step_fn, args=(next(iterator),))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)

    epoch = tf.Variable(initial_value=tf.constant(0, dtype=tf.int64), name="epoch")
    resolver = strategy.cluster_resolver
    task_type, task_id = resolver.task_type, resolver.task_id
    cluster_spec = resolver.cluster_spec()
    checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer, epoch=epoch)
    manager = tf.train.CheckpointManager(
        checkpoint, directory=write_dir(args.checkpoint_dir, task_type, task_id, cluster_spec), max_to_keep=1
    )

    steps = args.steps_per_epoch
    if report:
        report.plan(
            total_steps=args.epochs * steps,
            steps_per_epoch=steps,
            save_every_steps=steps,
            checkpoint_dir=args.checkpoint_dir,
        )
    latest = tf.train.latest_checkpoint(args.checkpoint_dir)
    if latest:
        checkpoint.restore(latest)
        if report:
            report.restored(int(epoch.numpy()) * steps, latest, weights=model.get_weights())

    while epoch.numpy() < args.epochs:
        iterator = iter(dataset)
        total_loss = 0.0
        for step_in_epoch in range(steps):
            loss = train_step(iterator)
            total_loss += loss
            if report:
                report.step(int(epoch.numpy()) * steps + step_in_epoch + 1, loss, epoch=int(epoch.numpy()))
        epoch.assign_add(1)
        path = manager.save()
        if report:
            report.checkpoint(int(epoch.numpy()) * steps, path)
        if not is_chief(task_type, task_id, cluster_spec):
            tf.io.gfile.rmtree(manager.directory)
        print(
            "Epoch: %d, step: %d, train_loss: %f." % (epoch.numpy() - 1, epoch.numpy() * steps, total_loss / steps),
            flush=True,
        )

    if report:
        report.done(model.get_weights())
    print("training finished", flush=True)


if __name__ == "__main__":
    main()
