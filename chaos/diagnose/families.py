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
from collections.abc import Iterable
from dataclasses import dataclass

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
    "job_state": "a variable the job keeps itself (a counter, a total) aggregated or synchronized wrong under the strategy",
    "other": "not one of the families above",
}

# Scenario name -> family, first match wins (the scenario files' naming conventions).
_SCENARIO_FAMILIES: list[tuple[str, str]] = [
    ("keras3-*", "keras_api"),
    ("tf-config-*", "tf_config"),
    ("simple-resolver-*", "tf_config"),
    ("killed-parameter-server-*", "parameter_server"),
    ("killed-*", "killed"),
    ("silently-killed-*", "killed"),
    ("node-lost-*", "killed"),
    ("node-drained-*", "killed"),
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
    ("silent-drop-*", "timeout"),
    ("link-between-*-cut-*", "timeout"),
    ("syn-drop-*", "port_blocked"),
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
    ("link-between-*-degraded-*", "straggler"),
    ("count-*", "job_state"),
]


# Fault (its registered name) -> the family of the failure it makes: a user's own scenario follows
# none of the shipped files' naming conventions, but the faults it injects say what failed.
FAULT_FAMILIES: dict[str, str] = {
    **dict.fromkeys(("kill_worker", "preempt_worker", "node_lost", "node_drained"), "killed"),
    **dict.fromkeys(("blocked_port", "syn_drop"), "port_blocked"),
    **dict.fromkeys(("blackhole", "partition", "silent_drop", "mtu_blackhole", "node_link"), "timeout"),
    **dict.fromkeys(("connection_reset", "stream_cut", "slow_close"), "transport"),
    **dict.fromkeys(
        ("latency", "bandwidth", "cpu_throttle", "pause_worker", "packet_delay", "packet_loss", "packet_reorder"),
        "straggler",
    ),
    **dict.fromkeys(("packet_duplicate", "packet_corrupt"), "transport"),
    "host_oom": "host_oom",
    "device_oom": "gpu_oom",
    **dict.fromkeys(
        (
            "corrupt_checkpoint",
            "checkpoint_disk_full",
            "stale_checkpoint",
            "slow_checkpoint_storage",
            "kill_during_save",
        ),
        "checkpoint",
    ),
    "version_skew": "version_skew",
    "tf_config": "tf_config",
    **dict.fromkeys(("seed_skew", "reused_seed", "batch_size_skew", "sliced"), "data_sharding"),
    "poison_input": "nan",
}


def scenario_family(name: str, faults: Iterable[str] = ()) -> str:
    """The family of the scenario called ``name``: by the shipped files' naming conventions, else
    by the first of its injected ``faults`` whose family is known (``other`` when neither tells)."""
    for pattern, family in _SCENARIO_FAMILIES:
        if fnmatch.fnmatch(name, pattern):
            return family
    return next((FAULT_FAMILIES[f] for f in faults if f in FAULT_FAMILIES), "other")


# --- what kind of failure each family is, and whether a restart helps -------------------
# Data beside each family, read by chaos.diagnose.attribution and checked against what the
# shipped scenarios show after their restart (tests/unit/diagnose/test_diagnose_outlook.py).

INFRASTRUCTURE, WORKLOAD = "infrastructure", "workload"

# family -> (kind, why): whose to fix, the platform's or the job's.
KINDS: dict[str, tuple[str, str]] = {
    "tf_config": (WORKLOAD, "the job's own cluster configuration"),
    "port_blocked": (INFRASTRUCTURE, "the network or a firewall between the workers"),
    "killed": (INFRASTRUCTURE, "the orchestrator, the node or the cloud took the worker away"),
    "host_oom": (INFRASTRUCTURE, "the node's or the container's memory limit (or a neighbour's demand)"),
    "gpu_oom": (WORKLOAD, "the model, batch or memory settings ask more of the device than it has"),
    "transport": (INFRASTRUCTURE, "the network transport (gRPC, NCCL) between the workers"),
    "timeout": (INFRASTRUCTURE, "a link or a worker that stopped answering in time"),
    "hang": (INFRASTRUCTURE, "ranks that never came: the launcher, the network or a lost worker"),
    "version_skew": (INFRASTRUCTURE, "the images or environments the workers run in"),
    "keras_api": (WORKLOAD, "the job's code against the Keras it runs with"),
    "checkpoint": (INFRASTRUCTURE, "the storage the backups are written to and read from"),
    "nan": (WORKLOAD, "the job's data, model or learning rate"),
    "data_sharding": (WORKLOAD, "the job's input pipeline"),
    "parameter_server": (INFRASTRUCTURE, "a parameter server lost or unreachable"),
    "straggler": (INFRASTRUCTURE, "a slow node or link"),
    "job_state": (WORKLOAD, "the job's own variables and how the strategy keeps them"),
    "other": ("unknown", "not one of the families above"),
}


@dataclass(frozen=True)
class Outlook:
    """Whether restarting the job as it is gets it past this failure, and why."""

    helps: bool
    why: str
    known: bool = True  # False: no family fits, so nothing says either way

    def said(self) -> str:
        if not self.known:
            return f"cannot tell whether a restart helps: {self.why}"
        head = "restart helps" if self.helps else "restart will not help until something changes"
        return f"{head}: {self.why}"


OUTLOOKS: dict[str, Outlook] = {
    "killed": Outlook(
        True, "the worker was taken away from outside; restarted, every worker resumes from the last backup"
    ),
    "parameter_server": Outlook(
        True, "a restarted job brings the parameter server back and resumes from the last backup"
    ),
    "port_blocked": Outlook(
        True, "once the port answers again a restart connects (a port that stays closed fails the same way)"
    ),
    "transport": Outlook(True, "a broken connection is made anew by the restarted workers"),
    "timeout": Outlook(True, "a link or worker that answers again lets the restarted job train on"),
    "hang": Outlook(
        True, "restarted together, every rank comes up again (a rank that never starts hangs the same way)"
    ),
    "host_oom": Outlook(
        True,
        "a passing demand (a neighbour, a spike) is gone after the restart; "
        "the same OOM at the same step again says the job itself needs more memory",
    ),
    "gpu_oom": Outlook(
        True,
        "a passing demand is gone after the restart; the same OOM at the same step again says "
        "the model or batch needs more than the device has",
    ),
    "straggler": Outlook(False, "nothing failed: the job is slow, and restarted on the same node it is as slow"),
    "version_skew": Outlook(False, "every restart starts the same images: align the versions first"),
    "tf_config": Outlook(False, "every restart reads the same TF_CONFIG: fix the cluster spec first"),
    "keras_api": Outlook(
        False,
        "the same code meets the same Keras on every restart: pin tf-keras "
        "(TF_USE_LEGACY_KERAS=1) or port the code first",
    ),
    "checkpoint": Outlook(
        True,
        "a failed save leaves the last good backup to restore; a backup that fails to restore "
        "fails the same way on every restart",
    ),
    "nan": Outlook(
        False,
        "restored to the same backup, the job replays the same batches into the same NaN: "
        "fix the data, the learning rate or the numerics first",
    ),
    "data_sharding": Outlook(False, "a restart builds the same input pipeline: shard the input first"),
    "job_state": Outlook(
        False,
        "nothing fails: a restart restores the same wrongly kept variable and keeps counting the same way; "
        "create it with the aggregation it needs first",
    ),
    "other": Outlook(False, "not a failure this framework knows", known=False),
}

# A family whose failure came before the first step of its generation (in the restore, or at
# start) meets the same thing on every restart: the same backup, the same memory at the same step.
BEFORE_FIRST_STEP: dict[str, Outlook] = {
    "checkpoint": Outlook(
        False,
        "the restore fails before any step: every restart reads the same backup; "
        "restore an older good copy or start over first",
    ),
    "host_oom": Outlook(
        False,
        "it ran out of memory before any step: a restart asks the same memory at the same "
        "point; give it more memory or a smaller batch first",
    ),
    "gpu_oom": Outlook(
        False,
        "the device ran out of memory before any step: a restart asks the same memory at the "
        "same point; lower the batch or the memory use first",
    ),
}


def kind(family: str) -> tuple[str, str]:
    """(infrastructure | workload | unknown, why) for a family."""
    return KINDS.get(family, KINDS["other"])


def outlook(family: str, before_first_step: bool = False) -> Outlook:
    """Whether a restart helps a failure of this family; ``before_first_step``: the failure
    came before any step of its generation (a restore, a start-up)."""
    if before_first_step and family in BEFORE_FIRST_STEP:
        return BEFORE_FIRST_STEP[family]
    return OUTLOOKS.get(family, OUTLOOKS["other"])
