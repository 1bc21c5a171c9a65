"""How a worker is told the cluster: the environment it is created with, and
the cluster resolver the harness builds from it.

Two ways, as real jobs do it: ``tf_config`` (the TF_CONFIG JSON that
``TFConfigClusterResolver`` reads) and ``simple`` (an address list and a task
index that the job passes to ``SimpleClusterResolver``, as jobs with their own
launcher do). The runner always describes the cluster as TF_CONFIG text (the
tf_config fault breaks that text); ``cluster_env`` turns it into the
environment of the chosen way, so every mistake applies to both. No TensorFlow
import at module level (the runner imports this on the host).
"""

from __future__ import annotations

import json
import os

TF_CONFIG_ENV = "TF_CONFIG"
WORKERS_ENV = "CHAOS_CLUSTER_WORKERS"  # "host:port,host:port", the simple resolver's list
TASK_INDEX_ENV = "CHAOS_TASK_INDEX"


def cluster_env(tf_config: str, resolver: str) -> dict[str, str]:
    """The environment that tells a worker its cluster, from TF_CONFIG text."""
    if resolver == "tf_config":
        return {TF_CONFIG_ENV: tf_config}
    config = json.loads(tf_config)  # the scenario check refuses text that is not JSON here
    return {
        WORKERS_ENV: ",".join(config["cluster"]["worker"]),
        TASK_INDEX_ENV: str(config["task"]["index"]),
    }


def make_resolver(tf, resolver: str):
    """The cluster resolver a job would build from its environment."""
    if resolver == "tf_config":
        # TF itself reads TF_CONFIG: a malformed one fails with TF's own error.
        return tf.distribute.cluster_resolver.TFConfigClusterResolver()
    hosts = os.environ[WORKERS_ENV].split(",")
    return tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec({"worker": hosts}),
        task_type="worker",
        task_id=int(os.environ[TASK_INDEX_ENV]),
        rpc_layer="grpc",
    )
