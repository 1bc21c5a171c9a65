"""Training settings of one worker, passed from the runner as environment variables.

One dataclass is the single source of truth for every side: a scenario's
``cluster.training`` is built from its fields (chaos.scenario.model.TrainingSpec),
the runner calls ``to_env()``, the harness inside the container ``from_env()``,
and each field's bounds are checked the same way on each. No TensorFlow import
here (the runner imports this module on the host), and no pydantic (the worker
image does not need it).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any

ENV_VAR = "CHAOS_WORKER_SETTINGS"
CLUSTER_RESOLVERS = ("tf_config", "simple")
POISON_VALUES = ("nan", "inf")  # what the poison_input fault writes into a batch
# How the TF/NumPy/Python RNGs are seeded (chaos.worker.seeding).
SEEDINGS = ("global", "per_worker", "unseeded")
# multi_worker_mirrored: MWMS over the cluster; mirrored: MirroredStrategy over
# `replicas` logical CPU devices in one worker's container (chaos.worker.mirrored).
STRATEGIES = ("multi_worker_mirrored", "mirrored", "parameter_server")  # the last: chaos.worker.ps_harness
MAX_SEED = 2**32 - 1  # numpy.random.default_rng / tf.random.set_seed take at most this
MAX_TF_TIMEOUT_S = 3600.0  # TF takes these in integer milliseconds


@dataclass(frozen=True)
class Bounds:
    """What one setting may be; ``scenario`` settings are also a scenario's
    ``cluster.training`` fields (chaos.scenario.model.TrainingSpec is built from them)."""

    scenario: bool = False
    doc: str = ""
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    choices: tuple[str, ...] = ()

    def problem(self, name: str, value: Any, integer: bool = False) -> str | None:
        """Why ``value`` cannot be setting ``name`` (``integer``: an int setting); None when it can."""
        if self.choices:
            return None if value in self.choices else f"{name} must be one of {self.choices}, got {value!r}"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None  # a flag or a text: its type is the bound
        kind = "an int " if integer else ""
        rules = [
            (op, bound, holds)
            for op, bound, holds in (
                (">=", self.ge, lambda v, b: v >= b),
                (">", self.gt, lambda v, b: v > b),
                ("<=", self.le, lambda v, b: v <= b),
                ("<", self.lt, lambda v, b: v < b),
            )
            if bound is not None
        ]
        if all(holds(value, bound) for _, bound, holds in rules):
            return None
        said = " and ".join(f"{op} {int(b) if float(b).is_integer() else b}" for op, b, _ in rules)
        return f"{name} must be {kind}{said}, got {value!r}"
        return None


def setting(default: Any, doc: str = "", *, scenario: bool = True, **bounds: Any) -> Any:
    """A field of WorkerSettings with what it may be (``scenario=False``: set by faults only)."""
    return field(default=default, metadata={"bounds": Bounds(scenario, doc, **bounds)})


def _check(setting: Any, value: Any) -> None:
    """ValueError naming ``setting`` when ``value`` is not one it may take."""
    integer = isinstance(setting.default, int) and not isinstance(setting.default, bool)
    if integer and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(f"{setting.name} must be an int, got {value!r}")
    problem = setting.metadata["bounds"].problem(setting.name, value, integer)
    if problem:
        raise ValueError(problem)


@dataclass(frozen=True)
class WorkerSettings:
    """Every setting of the harness, declared once: its default and what it may be
    here, and in a scenario's ``cluster.training`` for those a scenario sets."""

    epochs: int = setting(5, ge=1, le=1000)
    steps_per_epoch: int = setting(20, ge=1, le=100_000)
    global_batch: int = setting(64, ge=1)
    features: int = setting(20, ge=1)
    hidden: int = setting(32, ge=1)
    seed: int = setting(42, ge=0, le=MAX_SEED)
    # "epoch", or an int: back up every N steps (BackupAndRestore save_freq).
    save_freq: str | int = setting("epoch", "'epoch', or back up every N steps")
    # Coordination-service heartbeat timeout; TF's default is 10 s.
    heartbeat_timeout_s: float = setting(10.0, "coordination service heartbeat timeout", gt=0, le=MAX_TF_TIMEOUT_S)
    # Per-collective timeout (CommunicationOptions); 0 disables it, as in TF.
    collective_timeout_s: float = setting(0.0, "per-collective timeout; 0 = none", ge=0, le=MAX_TF_TIMEOUT_S)
    learning_rate: float = setting(0.05, gt=0)
    # Device memory in MB (0: all of it). GPU: TF's logical device memory
    # limit; CPU: address space beyond what the process maps before training.
    device_memory_mb: int = setting(
        0, "device memory per worker, MB (0: all); GPU: logical device limit, CPU: address space", ge=0
    )
    # BackupAndRestore(save_before_preemption=True). tf_keras turns it on only
    # on Google Cloud (support_on_demand_checkpoint_callback); elsewhere it is
    # silently ignored, which is what users get too (docs/findings.md).
    save_before_preemption: bool = setting(
        False,
        "BackupAndRestore(save_before_preemption=True); tf_keras honours it only on Google Cloud "
        "(off GCP it is silently ignored, docs/findings.md)",
    )
    # The fix for a damaged backup (chaos.worker.backups): the chief keeps this
    # many verified copies of the newest backups aside, and every worker
    # checks the newest before restoring it. 0: BackupAndRestore alone.
    kept_copies: int = setting(
        0,
        "the fix for a damaged backup: the chief keeps this many verified copies of the newest backups, "
        "and every worker checks the newest before restoring it (chaos.worker.backups); 0: BackupAndRestore alone",
        ge=0,
        le=5,
    )
    # How the harness learns the cluster: "tf_config" (TFConfigClusterResolver
    # reads TF_CONFIG) or "simple" (a SimpleClusterResolver built from an
    # address list and a task index, as jobs with their own launcher do).
    cluster_resolver: str = setting(
        "tf_config",
        "how the harness learns the cluster: tf_config (TFConfigClusterResolver reads TF_CONFIG) or "
        "simple (a SimpleClusterResolver from an address list and a task index); tf_config faults apply to both",
        choices=CLUSTER_RESOLVERS,
    )
    # tf.keras.callbacks.TerminateOnNaN in fit: stop at the first non-finite loss.
    terminate_on_nan: bool = setting(
        False,
        "add tf.keras.callbacks.TerminateOnNaN to fit: every worker stops at the first non-finite "
        "(all-reduced) loss and exits 0; the epoch's backup is written with NaN weights, then deleted",
    )
    strategy: str = setting(
        "multi_worker_mirrored",
        "multi_worker_mirrored: MWMS across the workers; mirrored: MirroredStrategy over `replicas` "
        "logical CPU devices in one worker's container (cluster.workers: 1); parameter_server: "
        "ParameterServerStrategy, a chief (coordinator) + cluster.workers workers + cluster.ps parameter servers",
        choices=STRATEGIES,
    )
    replicas: int = setting(1, "replicas of the mirrored strategy (1 with multi_worker_mirrored)", ge=1, le=8)
    # A Dropout layer of this rate on the hidden layer (0: none, the default model).
    dropout: float = setting(
        0.0,
        "a Dropout layer of this rate on the hidden layer (0: none); step events then carry a hash "
        "of each worker's dropout mask",
        ge=0,
        lt=1,
    )

    # --- set by faults, not by a scenario -----------------------------------------
    backup_dir: str = setting("/backup", scenario=False)
    # False: every worker reads the same shard (the reused-seed fault).
    shard_data: bool = setting(True, scenario=False)
    # The tf_config fault's set_after_strategy mode: TF_CONFIG is out of the
    # environment while the strategy is made, and back right after.
    tf_config_after_strategy: bool = setting(False, scenario=False)
    # The poison_input fault: this worker's batch at this global step (1-based;
    # 0: none) gets a non-finite value (POISON_VALUES in data.py).
    poison_step: int = setting(0, scenario=False, ge=0)
    poison_value: str = setting("nan", scenario=False, choices=POISON_VALUES)
    # RNG seeding (the seed_skew fault): "global" = settings.seed on every
    # worker, "per_worker" = seed + task index, "unseeded" = never seeded.
    seeding: str = setting("global", scenario=False, choices=SEEDINGS)
    # This worker's batch per step (the batch_size_skew fault); 0: global_batch / workers.
    local_batch_size: int = setting(0, scenario=False, ge=0)

    def __post_init__(self) -> None:
        for f in fields(self):
            _check(f, getattr(self, f.name))
        if self.save_freq != "epoch" and (
            isinstance(self.save_freq, bool) or not isinstance(self.save_freq, int) or self.save_freq < 1
        ):
            raise ValueError(f"save_freq must be 'epoch' or an int >= 1, got {self.save_freq!r}")
        if self.replicas > 1 and self.strategy != "mirrored":
            raise ValueError(
                f"replicas {self.replicas} needs strategy 'mirrored' (MWMS runs one replica a worker here)"
            )

    @classmethod
    def change(cls, **values: Any) -> dict[str, Any]:
        """Settings a fault gives some workers (ClusterControl.override), checked here, where the
        fault names them: an unknown name or a value out of bounds is a ValueError saying which."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown worker settings {unknown}; valid: {sorted(known)}")
        for f in fields(cls):
            if f.name in values:
                _check(f, values[f.name])
        return dict(values)

    @classmethod
    def scenario_fields(cls) -> list[Any]:
        """The settings a scenario gives under ``cluster.training``, in order."""
        return [f for f in fields(cls) if f.metadata["bounds"].scenario]

    @property
    def total_steps(self) -> int:
        return self.epochs * self.steps_per_epoch

    @property
    def save_interval_steps(self) -> int:
        return self.steps_per_epoch if self.save_freq == "epoch" else int(self.save_freq)

    def local_batch(self, num_workers: int) -> int:
        if self.local_batch_size:
            return self.local_batch_size
        if self.global_batch % num_workers:
            raise ValueError(f"global_batch {self.global_batch} is not divisible by {num_workers} workers")
        return self.global_batch // num_workers

    def to_env(self) -> dict[str, str]:
        return {ENV_VAR: json.dumps(asdict(self), sort_keys=True)}

    @classmethod
    def from_env(cls, environ: dict[str, str]) -> WorkerSettings:
        raw = environ.get(ENV_VAR)
        if not raw:
            return cls()
        data = json.loads(raw)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown worker settings {unknown}; valid: {sorted(known)}")
        return cls(**data)
