"""What each replica of a one-host MirroredStrategy (2 logical CPUs) reads, for
each way of feeding it: docs/findings.md ("MirroredStrategy on one host").

    docker run --rm -e TF_CPP_MIN_LOG_LEVEL=3 -v "$PWD/benchmarks/mirrored_replica_input.py:/m.py:ro" \
        --entrypoint /opt/venv/bin/python tfchaos/worker:tf2.20 /m.py

Element values are dataset.range indices, so equal lists mean the same examples.
"""

import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
ds = tf.data.Dataset.range(100)
PER_REPLICA = tf.distribute.InputOptions(
    experimental_replication_mode=tf.distribute.InputReplicationMode.PER_REPLICA,
    experimental_place_dataset_on_device=False,
    experimental_fetch_to_device=True,
)


def local(values):
    return [t.numpy().tolist() for t in strategy.experimental_local_results(values)]


def show(name, dist, steps=2):
    it = iter(dist)
    for step in range(steps):
        print(f"{name}: step {step} per replica {local(next(it))}")


def per_replica_fn(ctx):
    print(f"  dataset_fn called: input pipeline {ctx.input_pipeline_id} of {ctx.num_input_pipelines}")
    return ds.batch(2)  # ignores ctx: no shard


print("replicas", strategy.num_replicas_in_sync)
show("A experimental_distribute_dataset(batch 4)", strategy.experimental_distribute_dataset(ds.batch(4)))
show(
    "B distribute_datasets_from_function, fn ignores ctx",
    strategy.distribute_datasets_from_function(lambda ctx: ds.batch(2)),
)
show(
    "C the same, InputReplicationMode.PER_REPLICA",
    strategy.distribute_datasets_from_function(per_replica_fn, PER_REPLICA),
)
show(
    "D PER_REPLICA, ds.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)",
    strategy.distribute_datasets_from_function(
        lambda ctx: ds.shard(ctx.num_input_pipelines, ctx.input_pipeline_id).batch(2), PER_REPLICA
    ),
)
batch = next(iter(ds.batch(4)))
print("E strategy.run(step, args=(a plain batch,)): per replica", local(strategy.run(lambda x: x * 1, args=(batch,))))
plain = iter(ds.batch(2))
print("F strategy.run(lambda: next(plain iterator)): per replica", local(strategy.run(lambda: next(plain))))
