"""The audit's battery: which faults run against the job, as scenarios.

Each entry is a scenario written here in the scenario format (the same faults
and checks the shipped scenarios use), applied to the user's workload exactly
as ``chaos run --workload`` applies a suite (``Scenario.with_workload``): a
fault the workload cannot serve is refused by the same validation, and the
card then says "not measured" with that refusal, never drops the entry.

The checks listed are the ones the audit reads verdicts from (bit-exact
resume, same checkpoint, lost work, completion); every timing is measured from
the run's timeline (chaos.audit.measure), not from a check.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from chaos.errors import ScenarioError
from chaos.scenario.loader import scenario_from_dict
from chaos.scenario.model import Scenario
from chaos.workload.spec import WorkloadSpec

# The verdicts the audit reads after a restart (chaos.audit.measure).
RECOVERY_CHECKS: list[dict[str, Any]] = [
    {"restored_same_checkpoint": {}},
    {"lost_work": {}},
    {"identical_weights": {}},
    {"matches_uninterrupted": {}},
    {"completed": {}},
]
RECOVERY = {"restart": "all", "max_restarts": 1}
# The harness trains 500 steps (5 epochs of 100, a backup at each epoch's end): at its
# 10-30 ms a step, long enough after epoch 2 for a 1 s preemption grace to end mid-training.
HARNESS_TRAINING = {"epochs": 5, "steps_per_epoch": 100, "save_freq": "epoch"}


@dataclass(frozen=True)
class BatteryEntry:
    """One fault of the battery (or the uninterrupted reference)."""

    key: str
    title: str
    kind: str  # reference | crash | preemption | silent | bring_up | empty_checkpoint
    scenario: dict[str, Any] = field(repr=False)
    # Top-level fields replaced for the built-in harness (a user's job says its own length).
    harness: dict[str, Any] = field(default_factory=dict, repr=False)

    def data(self, workload: WorkloadSpec | None) -> dict[str, Any]:
        if workload is not None:
            return self.scenario
        data = {**self.scenario, **self.harness}
        data["cluster"] = {**data["cluster"], "training": HARNESS_TRAINING}
        return data

    def build(self, workload: WorkloadSpec | None) -> Scenario:
        """The scenario against ``workload`` (None: the built-in harness).
        Raises ScenarioError when the workload cannot serve it."""
        scenario = scenario_from_dict(self.data(workload), source=f"<audit battery: {self.key}>")
        return scenario.with_workload(workload)


def _scenario(
    key: str,
    description: str,
    symptom: str,
    cause: str,
    fix: str,
    *,
    faults: list,
    recover: list,
    expect: list | None = None,
    timeouts: dict | None = None,
    recovery: dict | None = None,
) -> dict:
    return {
        "name": f"audit-{key}",
        "description": description,
        "explain": {"symptom": symptom, "cause": cause, "fix": fix},
        "cluster": {"workers": 2, "recovery": recovery or RECOVERY},
        "faults": faults,
        "expect": expect or [],
        "recover": recover,
        "timeouts": {"bring_up": 120, "symptom": 40, "total": 240, **(timeouts or {})},
    }


REFERENCE = BatteryEntry(
    "reference",
    "uninterrupted run",
    "reference",
    _scenario(
        "reference",
        "The job trains start to end with no fault: step time and save cost.",
        "none: no fault",
        "none",
        "none",
        faults=[],
        recover=[{"completed": {}}],
        recovery={"restart": "all", "max_restarts": 0},
    ),
)

KILLED_WORKER = BatteryEntry(
    "killed-worker",
    "killed worker (SIGKILL worker-1)",
    "crash",
    _scenario(
        "killed-worker",
        "SIGKILL a non-chief worker at the start of epoch 2; every worker is restarted.",
        "the chief's collective aborts (UnavailableError); worker-1 exits 137",
        "MWMS has no elasticity: one worker's death aborts every collective",
        "restart every worker and resume from the last backup",
        faults=[{"kill_worker": {"worker": 1}, "at": {"epoch": 2}}],
        recover=RECOVERY_CHECKS,
    ),
)

KILLED_CHIEF = BatteryEntry(
    "killed-chief",
    "killed chief (SIGKILL worker-0)",
    "crash",
    _scenario(
        "killed-chief",
        "SIGKILL the chief at the start of epoch 2; every worker is restarted.",
        "worker-1's collective aborts; the chief exits 137",
        "the chief holds the coordination service and writes the backups",
        "restart every worker and resume from the chief's last backup",
        faults=[{"kill_worker": {"worker": 0}, "at": {"epoch": 2}}],
        recover=RECOVERY_CHECKS,
    ),
)

PREEMPTION = BatteryEntry(
    "preemption",
    "preemption (SIGTERM, SIGKILL after a grace period)",
    "preemption",
    _scenario(
        "preemption",
        "Preempt worker-1 at the start of epoch 2: SIGTERM, then SIGKILL after a 15 s grace.",
        "a job that handles SIGTERM saves and exits before the SIGKILL; one that swallows it exits 137",
        "a preemption gives a grace period; only a job that saves in it keeps the steps since its last backup",
        "tf.distribute.experimental.PreemptionCheckpointHandler (custom loop) or BackupAndRestore(save_before_preemption=True) on GCP",
        faults=[{"preempt_worker": {"worker": 1, "grace_s": 15}, "at": {"epoch": 2}}],
        recover=RECOVERY_CHECKS,
    ),
    # The harness trains through SIGTERM by design and finishes in seconds: 1 s, as the shipped scenario.
    harness={"faults": [{"preempt_worker": {"worker": 1, "grace_s": 1}, "at": {"epoch": 2}}]},
)

PARTITION = BatteryEntry(
    "partition",
    "network partition of worker-1 (20 s)",
    "silent",
    _scenario(
        "partition",
        "Disconnect worker-1 from the network at epoch 2 for 20 s.",
        "every worker stalls; the chief fails when worker-1's heartbeats stop",
        "no process dies: only a timeout can notice",
        "keep the coordination service's heartbeat timeout set (TF's default 10 s)",
        faults=[{"partition": {"worker": 1}, "at": {"epoch": 2}, "for": 20}],
        recover=RECOVERY_CHECKS,
    ),
)

PEER_PAUSED = BatteryEntry(
    "peer-paused",
    "a peer that stops answering (worker-1 paused 20 s)",
    "silent",
    _scenario(
        "peer-paused",
        "Freeze worker-1 (docker pause) at epoch 2 for 20 s: alive, connected, silent.",
        "every worker stalls; the chief fails when the heartbeats stop",
        "a frozen process keeps its connections open: only the heartbeat timeout notices",
        "keep the coordination service's heartbeat timeout (heartbeat_timeout_in_ms)",
        faults=[{"pause_worker": {"worker": 1}, "at": {"epoch": 2}, "for": 20}],
        recover=RECOVERY_CHECKS,
    ),
)

PEER_BLACKHOLED = BatteryEntry(
    "peer-blackholed",
    "a peer whose data is dropped (worker-1's port blackholed 40 s)",
    "silent",
    _scenario(
        "peer-blackholed",
        "Hold and drop everything sent to worker-1 at epoch 2 for 40 s; heartbeats still flow.",
        "with a collective timeout: DeadlineExceededError 'Collective has timed out'; without: a hang",
        "the heartbeats reach the chief, so only a per-collective timeout notices the lost data",
        "tf.distribute.experimental.CommunicationOptions(timeout_seconds=...) for MultiWorkerMirroredStrategy",
        faults=[{"blocked_port": {"worker": 1, "mode": "blackholed"}, "at": {"epoch": 2}, "for": 40}],
        recover=RECOVERY_CHECKS,
        timeouts={"symptom": 40, "total": 150},
    ),
)

BLOCKED_AT_BRING_UP = BatteryEntry(
    "blocked-at-bring-up",
    "the chief's port refused at bring-up (20 s)",
    "bring_up",
    _scenario(
        "blocked-at-bring-up",
        "Refuse connections to the chief's port from bring-up, for 20 s after the workers start.",
        "the workers wait for the chief; training starts once the port opens",
        "MWMS waits for every task at bring-up",
        "nothing to fix if it starts once the port opens",
        faults=[{"blocked_port": {"worker": 0, "mode": "refused"}, "at": "bring_up", "for": 20}],
        recover=[{"identical_weights": {}}, {"completed": {}}],
        timeouts={"total": 300},
    ),
)

EMPTY_CHECKPOINT = BatteryEntry(
    "empty-checkpoint-dir",
    "restart with an empty checkpoint directory",
    "empty_checkpoint",
    _scenario(
        "empty-checkpoint-dir",
        "From epoch 1 every worker's backup dir is off the shared storage (empty at each start); "
        "SIGKILL worker-1 at epoch 2: the restart finds no backup.",
        "the job starts over from step 0 and completes, or crashes on the missing backup",
        "a new node, a wiped volume or a backup dir on local disk: the restart sees nothing",
        "handle a missing checkpoint as a fresh start; keep backups on shared, persistent storage",
        faults=[
            {"stale_checkpoint": {"worker": 0, "backup": "none"}, "at": {"epoch": 1}},
            {"stale_checkpoint": {"worker": 1, "backup": "none"}, "at": {"epoch": 1}},
            {"kill_worker": {"worker": 1}, "at": {"epoch": 2}},
        ],
        recover=[{"identical_weights": {}}, {"completed": {}}],
    ),
)

BATTERIES: dict[str, tuple[BatteryEntry, ...]] = {
    "full": (
        REFERENCE,
        KILLED_WORKER,
        KILLED_CHIEF,
        PREEMPTION,
        PARTITION,
        PEER_PAUSED,
        PEER_BLACKHOLED,
        BLOCKED_AT_BRING_UP,
        EMPTY_CHECKPOINT,
    ),
    "quick": (REFERENCE, KILLED_WORKER, PEER_PAUSED),
}


@dataclass(frozen=True)
class Planned:
    """An entry of the battery, as a runnable scenario or with why it cannot run."""

    entry: BatteryEntry
    scenario: Scenario | None
    refused: str | None = None


MAX_REPEAT = 5
REPEAT_MARK = "#"  # killed-worker#2: the second run of the killed-worker entry


def base_key(key: str) -> str:
    """The battery entry a run belongs to: ``partition#3`` -> ``partition``."""
    return key.split(REPEAT_MARK, 1)[0]


def repeated(entry: BatteryEntry, round_: int) -> BatteryEntry:
    """The ``round_``-th run (2, 3, ...) of ``entry``: its own key and scenario name, so its
    report, its reproduce line and its row on the card are its own."""
    if round_ == 1:
        return entry
    scenario = {**entry.scenario, "name": f"{entry.scenario['name']}-{round_}"}
    return replace(entry, key=f"{entry.key}{REPEAT_MARK}{round_}", scenario=scenario)


def plan(name: str, workload: WorkloadSpec | None, repeat: int = 1) -> list[Planned]:
    """Every entry of battery ``name`` against ``workload``, each fault ``repeat``
    times (the uninterrupted reference once: it measures no fault); one the
    workload cannot serve is kept with the validation's reason."""
    out = []
    for base in BATTERIES[name]:
        for round_ in range(1, (1 if base.kind == "reference" else repeat) + 1):
            entry = repeated(base, round_)
            try:
                out.append(Planned(entry, entry.build(workload)))
            except ScenarioError as exc:
                out.append(Planned(entry, None, exc.render().removeprefix("error: ").replace("\n", " ")))
    return out
