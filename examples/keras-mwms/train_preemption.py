"""A custom training loop that survives preemption, as TF's tutorial "Fault
tolerance: PreemptionCheckpointHandler" teaches: every step goes through
``handler.run``, which, once any worker is told to stop (SIGTERM off Google
Cloud), saves a checkpoint on every worker at the same step and exits. A
regular CheckpointManager still saves at each epoch's end, and the handler
restores the newest checkpoint in the chief's directory at start.

    python train_preemption.py --epochs 5 --checkpoint-dir /checkpoints            # with the handler
    python train_preemption.py --no-handler --epochs 5 --checkpoint-dir /checkpoints  # epoch saves only

With ``--no-handler`` the job is the plain custom loop (train_custom_loop.py's
way): a SIGTERM does nothing to it, and after a restart it resumes from the last
epoch's save. The input resumes mid-epoch too: the loop skips the batches the
restored step count says were already trained, from one iterator over the
data repeated (a new iterator each epoch hung the job with the handler).
"""

import argparse
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
    parser.add_argument("--handler", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--checkpoint-dir", default=os.environ.get("CHECKPOINT_DIR", "/checkpoints"))
    return parser.parse_args()


def main():
    args = parse_args()
    tf.keras.utils.set_random_seed(args.seed)
    tf.config.experimental.enable_op_determinism()

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    resolver = strategy.cluster_resolver
    num_workers = resolver.cluster_spec().num_tasks("worker")
    global_batch = args.per_worker_batch * num_workers
    steps = args.steps_per_epoch
    x, y = training_set(args.seed, global_batch * steps)

    def dataset_fn(input_context):
        batch = input_context.get_per_replica_batch_size(global_batch)
        dataset = tf.data.Dataset.from_tensor_slices((x, y))
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        return dataset.batch(batch).repeat()  # every epoch the same batches, from one iterator

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

    # The step counter is state: the handler saves it with the model.
    step = tf.Variable(0, dtype=tf.int64, name="global_step")
    checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer, step=step)
    # The chief writes the checkpoint directory, the others a temporary one (the tutorial's rule).
    # The handler puts a non-chief's temporary directory beside the chief's, in its
    # parent (measured: /workertemp_1 for /checkpoints), so the chief's is a subdirectory.
    chief_dir = os.path.join(args.checkpoint_dir, "chief")
    chief = resolver.task_id == 0
    directory = chief_dir if chief else os.path.join(args.checkpoint_dir, f"workertemp_{resolver.task_id}")
    manager = tf.train.CheckpointManager(checkpoint, directory=directory, max_to_keep=2)
    if args.handler:
        # Given the checkpoint and the chief's directory (not a manager: a manager would be
        # read from this worker's own directory), the handler restores the latest checkpoint
        # there now, and on a SIGTERM saves at one step on every worker and exits 42.
        # Once the save is on disk, leave at once with TF's restart code. The default exit_fn,
        # sys.exit(42), frees the iterator, strategy and context on the way out, and that
        # teardown hung beside two other runs (the chief once for over 30 s: SIGKILLed at
        # the end of the grace, docs/findings.md).
        exit_now = tf.distribute.experimental.TerminationConfig(exit_fn=lambda: os._exit(42))
        handler = tf.distribute.experimental.PreemptionCheckpointHandler(
            resolver, checkpoint, chief_dir, termination_config=exit_now
        )
        run = handler.run
    else:
        latest = tf.train.latest_checkpoint(chief_dir)
        if latest:
            checkpoint.restore(latest)

        def run(fn, *fn_args):
            return fn(*fn_args)

    total = args.epochs * steps
    if report:
        report.plan(
            total_steps=total, steps_per_epoch=steps, save_every_steps=steps, checkpoint_dir=args.checkpoint_dir
        )
    start = int(step.numpy())
    if start and report:
        report.restored(start, tf.train.latest_checkpoint(chief_dir), weights=model.get_weights())
    print(f"handler: {args.handler}; resuming at step {start}", flush=True)

    # One iterator for the whole run. A new one each epoch (the tutorial's way) hung
    # the job with the handler: beside two other runs, in 4 of 6, worker-1 stopped in
    # `iter(dataset)` at an epoch boundary while the chief waited in the step's
    # collective (docs/findings.md).
    iterator = iter(dataset)
    for _ in range(start % steps):  # batches of this epoch trained before the restart
        next(iterator)
    while int(step.numpy()) < total:
        epoch = int(step.numpy()) // steps
        while int(step.numpy()) < (epoch + 1) * steps:
            loss = run(train_step, iterator)
            step.assign_add(1)
            if report:
                report.step(int(step.numpy()), loss, epoch=epoch)
        path = manager.save(checkpoint_number=int(step.numpy()))
        if report:
            report.checkpoint(int(step.numpy()), path)
        print("Epoch: %d, step: %d, train_loss: %f." % (epoch, int(step.numpy()), float(loss)), flush=True)

    if not chief:
        tf.io.gfile.rmtree(directory)
    if report:
        report.done(model.get_weights())
    print("training finished", flush=True)


if __name__ == "__main__":
    main()
