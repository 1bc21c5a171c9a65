"""Multi-worker training with Keras ``Model.fit``, as TF's tutorial
"Multi-worker training with Keras" teaches: MultiWorkerMirroredStrategy from
TF_CONFIG, the model built and compiled in ``strategy.scope()``, a tf.data
dataset, and BackupAndRestore so a restarted job resumes where it stopped.

    TF_CONFIG='{"cluster": {"worker": ["worker-0:2222", "worker-1:2222"]},
                "task": {"type": "worker", "index": 0}}' \\
    python train_fit.py --epochs 5 --checkpoint-dir /checkpoints

Deterministic (seeds, op determinism, a fixed training set read from the start
every epoch), so a run resumed from an epoch's backup ends with exactly the
weights of a run that never stopped. ``--reshuffle`` shuffles again every
epoch, as the tutorial's ``shuffle().repeat()`` pipeline does, and
``--save-freq N`` backs up every N steps: either way a resumed run sees other
batches than an uninterrupted one and ends elsewhere (README.md).
"""

import argparse
import json
import os

import tensorflow as tf
from setup_model import build_model, training_set


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--steps-per-epoch", type=int, default=20)
    parser.add_argument("--per-worker-batch", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--checkpoint-dir",
        default=os.environ.get("CHECKPOINT_DIR", "/checkpoints"),
        help="BackupAndRestore's backup_dir: shared by all workers, kept across restarts",
    )
    parser.add_argument(
        "--save-freq", default="epoch", help="BackupAndRestore's save_freq: 'epoch' or a number of steps"
    )
    parser.add_argument("--reshuffle", action="store_true", help="shuffle the training set again every epoch")
    parser.add_argument("--verbose", default="auto", help="fit's verbose: auto, 0, 1 or 2")
    return parser.parse_args()


def make_dataset(global_batch, steps_per_epoch, seed, reshuffle):
    x, y = training_set(seed, global_batch * steps_per_epoch)
    dataset = tf.data.Dataset.from_tensor_slices((x, y))
    if reshuffle:
        dataset = dataset.shuffle(len(x), seed=seed, reshuffle_each_iteration=True)
    dataset = dataset.batch(global_batch)
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    return dataset.with_options(options)


def main():
    args = parse_args()
    tf.keras.utils.set_random_seed(args.seed)
    tf.config.experimental.enable_op_determinism()

    tf_config = json.loads(os.environ["TF_CONFIG"])
    num_workers = len(tf_config["cluster"]["worker"])
    strategy = tf.distribute.MultiWorkerMirroredStrategy()

    global_batch = args.per_worker_batch * num_workers
    dataset = make_dataset(global_batch, args.steps_per_epoch, args.seed, args.reshuffle)
    with strategy.scope():
        model = build_model()
        model.compile(
            optimizer=tf.keras.optimizers.SGD(learning_rate=args.learning_rate, momentum=0.9),
            loss="mse",
        )

    save_freq = args.save_freq if args.save_freq == "epoch" else int(args.save_freq)
    callbacks = [tf.keras.callbacks.BackupAndRestore(backup_dir=args.checkpoint_dir, save_freq=save_freq)]
    verbose = args.verbose if args.verbose == "auto" else int(args.verbose)
    model.fit(dataset, epochs=args.epochs, callbacks=callbacks, verbose=verbose)
    print("training finished", flush=True)


if __name__ == "__main__":
    main()
