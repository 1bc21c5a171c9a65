"""Training settings of one worker, passed from the runner as environment variables.

One dataclass is the single source of truth for both sides: the runner calls
``to_env()``, the harness inside the container calls ``from_env()``. No
TensorFlow import here (the runner imports this module on the host).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields

ENV_VAR = "CHAOS_WORKER_SETTINGS"
CLUSTER_RESOLVERS = ("tf_config", "simple")
POISON_VALUES = ("nan", "inf")  # what the poison_input fault writes into a batch
# How the TF/NumPy/Python RNGs are seeded (chaos.worker.seeding).
SEEDINGS = ("global", "per_worker", "unseeded")
# multi_worker_mirrored: MWMS over the cluster; mirrored: MirroredStrategy over
# `replicas` logical CPU devices in one worker's container (chaos.worker.mirrored).
STRATEGIES = ("multi_worker_mirrored", "mirrored", "parameter_server")  # the last: chaos.worker.ps_harness


@dataclass(frozen=True)
class WorkerSettings:
    epochs: int = 5
    steps_per_epoch: int = 20
    global_batch: int = 64
    features: int = 20
    hidden: int = 32
    seed: int = 42
    # "epoch", or an int: back up every N steps (BackupAndRestore save_freq).
    save_freq: str | int = "epoch"
    backup_dir: str = "/backup"
    # Coordination-service heartbeat timeout; TF's default is 10 s.
    heartbeat_timeout_s: float = 10.0
    # Per-collective timeout (CommunicationOptions); 0 disables it, as in TF.
    collective_timeout_s: float = 0.0
    # False: every worker reads the same shard (the reused-seed fault).
    shard_data: bool = True
    learning_rate: float = 0.05
    # Device memory in MB (0: all of it). GPU: TF's logical device memory
    # limit; CPU: address space beyond what the process maps before training.
    device_memory_mb: int = 0
    # BackupAndRestore(save_before_preemption=True). tf_keras turns it on only
    # on Google Cloud (support_on_demand_checkpoint_callback); elsewhere it is
    # silently ignored, which is what users get too (docs/findings.md).
    save_before_preemption: bool = False
    # The fix for a damaged backup (chaos.worker.backups): the chief keeps this
    # many verified copies of the newest backups aside, and every worker
    # checks the newest before restoring it. 0: BackupAndRestore alone.
    kept_copies: int = 0
    # How the harness learns the cluster: "tf_config" (TFConfigClusterResolver
    # reads TF_CONFIG) or "simple" (a SimpleClusterResolver built from an
    # address list and a task index, as jobs with their own launcher do).
    cluster_resolver: str = "tf_config"
    # The tf_config fault's set_after_strategy mode: TF_CONFIG is out of the
    # environment while the strategy is made, and back right after.
    tf_config_after_strategy: bool = False
    # tf.keras.callbacks.TerminateOnNaN in fit: stop at the first non-finite loss.
    terminate_on_nan: bool = False
    # The poison_input fault: this worker's batch at this global step (1-based;
    # 0: none) gets a non-finite value (POISON_VALUES in data.py).
    poison_step: int = 0
    poison_value: str = "nan"
    # RNG seeding (the seed_skew fault): "global" = settings.seed on every
    # worker, "per_worker" = seed + task index, "unseeded" = never seeded.
    seeding: str = "global"
    # A Dropout layer of this rate on the hidden layer (0: none, the default model).
    dropout: float = 0.0
    # This worker's batch per step (the batch_size_skew fault); 0: global_batch / workers.
    local_batch_size: int = 0
    strategy: str = "multi_worker_mirrored"
    replicas: int = 1

    def __post_init__(self) -> None:
        for name in ("epochs", "steps_per_epoch", "global_batch", "features", "hidden"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        if self.save_freq != "epoch" and (not isinstance(self.save_freq, int) or self.save_freq < 1):
            raise ValueError(f"save_freq must be 'epoch' or an int >= 1, got {self.save_freq!r}")
        if self.cluster_resolver not in CLUSTER_RESOLVERS:
            raise ValueError(f"cluster_resolver must be one of {CLUSTER_RESOLVERS}, got {self.cluster_resolver!r}")
        if not isinstance(self.kept_copies, int) or self.kept_copies < 0:
            raise ValueError(f"kept_copies must be an int >= 0, got {self.kept_copies!r}")
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        if not isinstance(self.replicas, int) or self.replicas < 1:
            raise ValueError(f"replicas must be an int >= 1, got {self.replicas!r}")
        if self.replicas > 1 and self.strategy != "mirrored":
            raise ValueError(f"replicas {self.replicas} needs strategy 'mirrored' (MWMS runs one replica a worker here)")
        if self.seeding not in SEEDINGS:
            raise ValueError(f"seeding must be one of {SEEDINGS}, got {self.seeding!r}")
        if not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must be >= 0 and < 1, got {self.dropout!r}")
        if not isinstance(self.local_batch_size, int) or self.local_batch_size < 0:
            raise ValueError(f"local_batch_size must be an int >= 0, got {self.local_batch_size!r}")
        if not isinstance(self.poison_step, int) or self.poison_step < 0:
            raise ValueError(f"poison_step must be an int >= 0, got {self.poison_step!r}")
        if self.poison_value not in POISON_VALUES:
            raise ValueError(f"poison_value must be one of {POISON_VALUES}, got {self.poison_value!r}")
        if self.heartbeat_timeout_s <= 0 or self.collective_timeout_s < 0:
            raise ValueError("heartbeat_timeout_s must be > 0 and collective_timeout_s >= 0")

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
            raise ValueError(
                f"global_batch {self.global_batch} is not divisible by {num_workers} workers"
            )
        return self.global_batch // num_workers

    def to_env(self) -> dict[str, str]:
        return {ENV_VAR: json.dumps(asdict(self), sort_keys=True)}

    @classmethod
    def from_env(cls, environ: dict[str, str]) -> "WorkerSettings":
        raw = environ.get(ENV_VAR)
        if not raw:
            return cls()
        data = json.loads(raw)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown worker settings {unknown}; valid: {sorted(known)}")
        return cls(**data)
