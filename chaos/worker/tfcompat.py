"""Import TensorFlow and a Keras 2 that works with MWMS, across TF versions.

Keras 3 (TF >= 2.16's default) does not support MultiWorkerMirroredStrategy
(keras issue #20585), so TF >= 2.16 uses ``tf_keras`` with
TF_USE_LEGACY_KERAS=1 (set in the image). TF 2.15 has Keras 2 built in and
must NOT see TF_USE_LEGACY_KERAS, or its Keras import fails.
"""

from __future__ import annotations

import os


def load():
    """Return ``(tf, keras)``."""
    import tensorflow as tf

    major, minor = (int(p) for p in tf.__version__.split(".")[:2])
    if (major, minor) >= (2, 16):
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
        import tf_keras as keras
    else:
        from tensorflow import keras
    return tf, keras


def coordination_config_pb2():
    # The proto moved between TF releases.
    try:
        from tensorflow.compiler.xla.tsl.protobuf import coordination_config_pb2 as pb
    except ImportError:
        from tensorflow.tsl.protobuf import coordination_config_pb2 as pb
    return pb


def configure_heartbeat(tf, cluster_spec, heartbeat_timeout_s: float) -> None:
    """Configure the coordination service before MWMS does, with our heartbeat timeout.

    MWMS configures the service itself only when nobody has (see
    collective_all_reduce_strategy.py), with TF's default 10 s heartbeat.
    """
    from tensorflow.python.distribute import multi_worker_util
    from tensorflow.python.eager import context

    pb = coordination_config_pb2()
    jobs = [
        pb.CoordinatedJob(name=job, num_tasks=cluster_spec.num_tasks(job))
        for job in ("chief", "worker")
        if job in cluster_spec.jobs
    ]
    context.context().configure_coordination_service(
        service_type="standalone",
        service_leader=multi_worker_util.coordination_leader(cluster_spec),
        heartbeat_timeout_in_ms=int(heartbeat_timeout_s * 1000),
        coordinated_jobs=jobs,
    )
