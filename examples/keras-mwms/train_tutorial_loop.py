"""A custom training loop exactly as TF's tutorial "Custom training loop with
Keras and MultiWorkerMirroredStrategy" writes it, with no tfchaos call: the
agent sees its steps, saves and restores from the TF objects it uses.

    python train_tutorial_loop.py                      # the tutorial's checkpoint folder
    python train_tutorial_loop.py --checkpoint-dir /checkpoints --global-step

The tutorial keeps its checkpoints under ``multiprocessing.util.get_temp_dir()``,
a fresh folder in every process: a restarted worker finds nothing to restore
and trains again from step 0 (the scenario custom-loop-tutorial-temp-dir-...
shows it). ``--checkpoint-dir`` gives a folder every worker and every restart
shares. The tutorial saves before it advances its epoch counter, so a job
restored from that save re-runs the epoch's end with no batch, where the
tutorial's ``total_loss / num_batches`` divides by zero (``--tutorial-save-order``
keeps that order, without the division); this loop advances first. ``--global-step`` is the loop as an experienced user
writes it: a global step variable as the ``CheckpointManager``'s
``step_counter``, a checkpoint every ``--save-every`` steps, and the optimizer in
the checkpoint. ``--count-positives`` (or ``COUNT_POSITIVES``) also counts the
positive labels the job trained on, in an int64 ``positives`` variable it
checkpoints and logs each epoch, kept as ``default`` (a plain ``tf.Variable``),
``on_read`` (synchronization ON_READ, aggregation SUM, as Keras keeps a metric's
totals) or ``sum`` (aggregation SUM): the first two count wrong under MWMS
(docs/findings.md, "A counter variable under each aggregation").
"""

import argparse
import json
import os
from multiprocessing import util

import tensorflow as tf
from setup_model import build_model, training_set


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--steps-per-epoch", type=int, default=20)
    parser.add_argument("--per-worker-batch", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--checkpoint-dir", default=os.path.join(util.get_temp_dir(), "ckpt"))
    parser.add_argument("--tutorial-save-order", action="store_true")
    parser.add_argument("--global-step", action="store_true")
    parser.add_argument("--save-every", type=int, default=20)
    parser.add_argument(
        "--count-in-replica",
        choices=["sum", "mean", "only_first_replica"],
        help="with --global-step: advance it inside strategy.run (replica context), aggregated so",
    )
    parser.add_argument(
        "--count-positives",
        choices=["default", "on_read", "sum"],
        default=os.environ.get("COUNT_POSITIVES") or None,
        help="count the positive labels trained on, in a variable kept so (default: $COUNT_POSITIVES, else none)",
    )
    return parser.parse_args()


def _is_chief(task_type, task_id, cluster_spec):
    return (
        task_type is None
        or task_type == "chief"
        or (task_type == "worker" and task_id == 0 and "chief" not in cluster_spec.as_dict())
    )


def write_filepath(filepath, task_type, task_id, cluster_spec):
    if _is_chief(task_type, task_id, cluster_spec):
        return filepath
    dirpath = os.path.join(os.path.dirname(filepath), "workertemp_" + str(task_id))
    tf.io.gfile.makedirs(dirpath)
    return os.path.join(dirpath, os.path.basename(filepath))


def main():
    args = parse_args()
    tf.keras.utils.set_random_seed(args.seed)
    tf.config.experimental.enable_op_determinism()
    num_workers = len(json.loads(os.environ["TF_CONFIG"])["cluster"]["worker"])
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    global_batch = args.per_worker_batch * num_workers
    x, y = training_set(args.seed, global_batch * args.steps_per_epoch)

    def dataset_fn(input_context):
        batch = input_context.get_per_replica_batch_size(global_batch)
        dataset = tf.data.Dataset.from_tensor_slices((x, y))
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        return dataset.batch(batch)

    multi_worker_dataset = strategy.distribute_datasets_from_function(dataset_fn)
    with strategy.scope():
        multi_worker_model = build_model()
        optimizer = tf.keras.optimizers.SGD(learning_rate=args.learning_rate)
        train_loss = tf.keras.metrics.Mean(name="train_loss")
        if args.global_step:
            aggregation = getattr(tf.VariableAggregation, (args.count_in_replica or "none").upper())
            global_step = tf.Variable(0, dtype=tf.int64, name="global_step", trainable=False, aggregation=aggregation)
        if args.count_positives == "default":
            positives = tf.Variable(0, dtype=tf.int64, trainable=False)
        elif args.count_positives == "on_read":
            positives = tf.Variable(
                0,
                dtype=tf.int64,
                trainable=False,
                synchronization=tf.VariableSynchronization.ON_READ,
                aggregation=tf.VariableAggregation.SUM,
            )
        elif args.count_positives == "sum":
            positives = tf.Variable(0, dtype=tf.int64, trainable=False, aggregation=tf.VariableAggregation.SUM)
    mse = tf.keras.losses.MeanSquaredError(reduction="none")

    @tf.function
    def train_step(iterator):
        def step_fn(inputs):
            features, labels = inputs
            with tf.GradientTape() as tape:
                predictions = multi_worker_model(features, training=True)
                loss = tf.nn.compute_average_loss(mse(labels, predictions), global_batch_size=global_batch)
            grads = tape.gradient(loss, multi_worker_model.trainable_variables)
            optimizer.apply_gradients(zip(grads, multi_worker_model.trainable_variables))
            train_loss.update_state(loss * num_workers)
            if args.count_in_replica:
                global_step.assign_add(tf.constant(1, dtype=tf.int64))
            if args.count_positives:
                positives.assign_add(tf.math.count_nonzero(labels > 0))
            return loss

        per_replica_losses = strategy.run(step_fn, args=(next(iterator),))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)

    epoch = tf.Variable(initial_value=tf.constant(0, dtype=tf.dtypes.int64), name="epoch")
    step_in_epoch = tf.Variable(initial_value=tf.constant(0, dtype=tf.dtypes.int64), name="step_in_epoch")
    task_type, task_id = strategy.cluster_resolver.task_type, strategy.cluster_resolver.task_id
    cluster_spec = strategy.cluster_resolver.cluster_spec()
    write_checkpoint_dir = write_filepath(args.checkpoint_dir, task_type, task_id, cluster_spec)
    if args.global_step:
        checkpoint = tf.train.Checkpoint(
            model=multi_worker_model,
            optimizer=optimizer,
            epoch=epoch,
            step_in_epoch=step_in_epoch,
            global_step=global_step,
        )
        manager = tf.train.CheckpointManager(
            checkpoint,
            directory=write_checkpoint_dir,
            max_to_keep=2,
            step_counter=global_step,
            checkpoint_interval=args.save_every,
        )
    elif args.count_positives:
        checkpoint = tf.train.Checkpoint(
            model=multi_worker_model, epoch=epoch, step_in_epoch=step_in_epoch, positives=positives
        )
        manager = tf.train.CheckpointManager(checkpoint, directory=write_checkpoint_dir, max_to_keep=1)
    else:
        checkpoint = tf.train.Checkpoint(model=multi_worker_model, epoch=epoch, step_in_epoch=step_in_epoch)
        manager = tf.train.CheckpointManager(checkpoint, directory=write_checkpoint_dir, max_to_keep=1)

    latest_checkpoint = tf.train.latest_checkpoint(args.checkpoint_dir)
    if latest_checkpoint:
        checkpoint.restore(latest_checkpoint)

    while epoch.numpy() < args.epochs:
        iterator = iter(multi_worker_dataset)
        for _ in range(int(step_in_epoch.numpy())):  # a mid-epoch save resumes at its batch
            next(iterator)
        total_loss = 0.0
        num_batches = 0
        while step_in_epoch.numpy() < args.steps_per_epoch:
            total_loss += train_step(iterator)
            num_batches += 1
            step_in_epoch.assign_add(1)
            if args.global_step:
                if not args.count_in_replica:
                    global_step.assign_add(1)
                if manager.save() and not _is_chief(task_type, task_id, cluster_spec):
                    tf.io.gfile.rmtree(write_checkpoint_dir)
        if num_batches:  # none when restored at the end of an epoch (a save at its last step)
            print("Epoch: %d, train_loss: %f." % (epoch.numpy(), total_loss / num_batches), flush=True)
        if args.count_positives:
            print("Epoch: %d, positive labels seen: %d." % (epoch.numpy(), int(positives.read_value())), flush=True)
        train_loss.reset_states()
        if args.global_step:
            epoch.assign_add(1)
            step_in_epoch.assign(0)
            continue
        if not args.tutorial_save_order:
            epoch.assign_add(1)
            step_in_epoch.assign(0)
        manager.save()
        if not _is_chief(task_type, task_id, cluster_spec):
            tf.io.gfile.rmtree(write_checkpoint_dir)
        if args.tutorial_save_order:
            epoch.assign_add(1)
            step_in_epoch.assign(0)
    print("training finished", flush=True)


if __name__ == "__main__":
    main()
