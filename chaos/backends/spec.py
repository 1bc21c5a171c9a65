"""What to bring up: the ``Deployment`` a scenario asks any backend for (a
scenario's ``cluster:`` section, chaos.scenario.model.ClusterSpec, is what the
user wrote; this is what it became: images, settings, limits, topology)."""

from __future__ import annotations

from dataclasses import dataclass, field

from chaos.topology import Topology
from chaos.worker.settings import WorkerSettings
from chaos.workload.launch import Launch


@dataclass(frozen=True)
class Limits:
    """A worker's CPU and memory limits as a scenario says them (what a pod's
    resources say); each backend translates them into its engine's terms."""

    cpus: float | None = None  # CPU time, in cores; None: no limit
    memory_bytes: int | None = None  # swap included; None: no limit


@dataclass(frozen=True)
class WriteLimit:
    """Writes to one block device throttled, set when a worker is created."""

    device: str  # /dev/...
    iops: int
    bytes_per_s: int | None = None


@dataclass(frozen=True)
class Deployment:
    """What to bring up. ``images`` has one image tag per container (a worker, or a
    parameter-server cluster's chief, workers and ps: ``num_slots`` counts them all)."""

    images: tuple[str, ...]
    proxy_image: str
    settings: WorkerSettings = field(default_factory=WorkerSettings)
    # Per worker index: extra environment variables and resource limits.
    env: dict[int, dict[str, str]] = field(default_factory=dict)
    resources: dict[int, Limits] = field(default_factory=dict)
    bring_up_timeout_s: float = 60.0
    launch: Launch = field(default_factory=Launch)  # the built-in harness, or a user's job
    # An image a fault names -> the image to run (a user's image with the agent layered on).
    image_map: dict[str, str] = field(default_factory=dict)
    # > 0: the backup volume is a tmpfs of this many MB (a disk that can fill up).
    backup_volume_mb: int = 0
    # The cluster's shape when it is not MWMS over len(images) workers (parameter
    # servers: one image per slot, chief + workers + ps; chaos.topology).
    topology: Topology | None = None
    # Make each worker's next container ahead of use (chaos.backends.docker.standby):
    # for a run that may restart workers, not for one that never does.
    standby: bool = False
    # Who restarts failed workers (cluster.recovery.by): "runner" (Cluster.restart), or
    # "orchestrator" (its own restart policy, up to max_restarts times; Cluster.await_restarts).
    restarted_by: str = "runner"
    max_restarts: int = 1
    # The steps the runner acts on (the faults' step triggers): the agent writes them at once
    # and holds the others a moment to write several at a time (chaos.agent.batching).
    watched_steps: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.topology is not None and self.topology.num_slots != len(self.images):
            raise ValueError(
                f"{len(self.images)} images for a cluster of {self.topology.num_slots} containers "
                f"({', '.join(self.topology.task_names())}): give one image per container"
            )

    @property
    def shape(self) -> Topology:
        """Names, slots and TF_CONFIG of every container: the topology given, or MWMS over the images."""
        return self.topology or Topology(len(self.images))

    @property
    def num_slots(self) -> int:
        """Containers of the cluster (every MWMS worker, or chief + workers + ps): the one count
        ``ClusterControl.num_slots``, restarts and redeploys go by."""
        return self.shape.num_slots
