"""MirroredStrategy on one host: several replicas in one worker's container.

Replicas are logical CPU devices (must be configured before TF initializes its
devices). Each replica gets its own input pipeline (InputReplicationMode.
PER_REPLICA: the dataset function runs once per replica); replica r reads
shard r, or shard 0 on every replica with sharding off (reused_seed): the
one-host form of every worker reading the same batches (docs/findings.md,
"MirroredStrategy on one host"). With one pipeline TF would split or deal out
the batches and the replicas could never read the same data.
"""

from __future__ import annotations

from chaos.worker import data

REPLICA_LOSSES_LOG = "replica_local_losses"  # the train step's all-gathered local losses


def make_strategy(tf, replicas: int):
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * replicas)
    return tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])


def replica_shards(settings, start_step: int, per_replica_batch: int) -> list:
    """(xs, ys) per replica, from ``start_step`` on."""
    return [
        data.make_shard(
            settings.seed,
            r if settings.shard_data else 0,
            start_step,
            settings.total_steps,
            per_replica_batch,
            settings.features,
        )
        for r in range(settings.replicas)
    ]


def replica_dataset(tf, strategy, shards):
    options = tf.distribute.InputOptions(
        experimental_replication_mode=tf.distribute.InputReplicationMode.PER_REPLICA,
        experimental_place_dataset_on_device=False,
        experimental_fetch_to_device=True,
    )

    def dataset_fn(input_context):
        xs, ys = shards[input_context.input_pipeline_id]
        return tf.data.Dataset.from_tensor_slices((xs, ys)).repeat()

    return strategy.distribute_datasets_from_function(dataset_fn, options)


def replica_step_fields(shards, start_step: int):
    """ChaosEvents' step_fields part: each replica's batch digest and local loss."""

    def fields(logs: dict, first: bool, step: int) -> dict:
        i = step - 1 - start_step
        losses = logs.get(REPLICA_LOSSES_LOG)
        return {
            "replica_batch_digests": [data.batch_digest(xs[i], ys[i]) for xs, ys in shards],
            "replica_local_losses": [float(v) for v in losses] if losses is not None else [],
        }

    return fields
