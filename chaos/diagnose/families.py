"""Families of failure: the coarse answer a user needs first ("the GPU ran out
of memory", "a TF_CONFIG mistake"), shared by the entries measured here
(scenario files) and the ones known from the field (``chaos.diagnose.field``).

A scenario file says nothing of its family, so it is read from the scenario's
name, by the conventions the scenario files follow (``tf-config-*``,
``killed-*``, ...). A new scenario whose name fits none is ``other``: it still
diagnoses, and the accuracy benchmark counts it as a wrong family.
"""

from __future__ import annotations

import fnmatch

FAMILIES: dict[str, str] = {
    "tf_config": "a mistake in TF_CONFIG or the cluster spec",
    "port_blocked": "a peer's port that cannot be reached (firewall, network, nothing listening)",
    "killed": "a worker killed, preempted, evicted or restarted by its orchestrator or cloud",
    "host_oom": "the host ran out of memory",
    "gpu_oom": "the GPU ran out of memory",
    "transport": "the NCCL or gRPC transport failed or broke",
    "timeout": "a heartbeat, collective or coordination-service timeout",
    "hang": "a collective or session waiting for ranks that never come",
    "version_skew": "versions or environments that do not match",
    "keras_api": "Keras 2 code on Keras 3 (tf.keras of TF >= 2.16 without TF_USE_LEGACY_KERAS=1)",
    "checkpoint": "a checkpoint that cannot be saved or restored",
    "nan": "NaN or Inf in the loss or gradients",
    "data_sharding": "input not split over the workers as meant",
    "parameter_server": "a parameter server down, unreachable or out of memory",
    "straggler": "a slow worker slowing every worker",
    "other": "not one of the families above",
}

# Scenario name -> family, first match wins (the scenario files' naming conventions).
_SCENARIO_FAMILIES: list[tuple[str, str]] = [
    ("keras3-*", "keras_api"),
    ("tf-config-*", "tf_config"),
    ("simple-resolver-*", "tf_config"),
    ("killed-parameter-server-*", "parameter_server"),
    ("killed-*", "killed"),
    ("preempted-*", "killed"),
    ("straggler-then-killed-*", "killed"),
    ("*checkpoint*", "checkpoint"),
    ("*backup*", "checkpoint"),
    ("device-oom-*", "gpu_oom"),
    ("host-oom-*", "host_oom"),
    ("*nan*", "nan"),
    ("version-skew-*", "version_skew"),
    ("*-skew-*", "version_skew"),
    ("port-blocked-*", "port_blocked"),
    ("port-refused-*", "port_blocked"),
    ("port-blackholed-*", "timeout"),
    ("*-times-out-*", "timeout"),
    ("latency-beyond-*", "timeout"),
    ("partitioned-*", "timeout"),
    ("connection-reset-*", "transport"),
    ("stream-cut-*", "transport"),
    ("slow-close-*", "transport"),
    ("*seed*", "data_sharding"),
    ("*sharding*", "data_sharding"),
    ("*batch-size*", "data_sharding"),
    ("*batches*", "data_sharding"),
    ("cpu-throttled-*", "straggler"),
    ("latency-slows-*", "straggler"),
    ("straggler-*", "straggler"),
]


def scenario_family(name: str) -> str:
    """The family of the scenario called ``name`` (``other`` when no convention fits)."""
    for pattern, family in _SCENARIO_FAMILIES:
        if fnmatch.fnmatch(name, pattern):
            return family
    return "other"
