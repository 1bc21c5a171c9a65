"""The backend seam: what the runner, the supervisor and the faults may ask of a
cluster, in the scenario's words (workers, faults, checkpoints), never an engine's.

- ``ClusterControl``: what a fault may do to a running cluster. Faults are written
  against it, so they are unit-tested with a fake cluster.
- ``Cluster``: that, plus what the supervisor drives (start, wait, restart, the
  run's event log, tear down). A context manager: leaving it tears everything down.
- ``Backend``: where clusters come from: ``chaos.backends.docker`` (one Docker
  host, the default) and ``chaos.backends.swarm`` (a Docker Swarm, one node per worker).

Test fakes implement the same protocols; tests/unit/test_backend_fakes.py holds
each of them against this module.
"""

from __future__ import annotations

from typing import Any, Protocol

from chaos.backends.backup_files import BackupDamage, BackupFile
from chaos.backends.spec import Deployment, WriteLimit
from chaos.eventlog import EventLog
from chaos.events import Event
from chaos.netns.access import Netns
from chaos.topology import STOP_GRACE_S
from chaos.worker.control import WorkerCommand


class ClusterControl(Protocol):
    num_workers: int  # containers: every MWMS worker, or chief + workers + ps (chaos.topology slots)

    def worker_name(self, index: int) -> str:
        """``worker-<index>``; worker-0 is the chief."""

    def signal(self, index: int, signal: str) -> None:
        """Send a signal (``SIGKILL``, ``SIGTERM``, ...) to a worker's main process."""

    def preempt(self, index: int, grace_s: float) -> None:
        """Stop the worker's current container as a preemption does: SIGTERM now,
        SIGKILL after ``grace_s`` if it still runs. Returns at once (the grace runs
        in the background, bound to that container, never to a restarted one)."""

    def pause(self, index: int) -> None:
        """Freeze every process of a worker (the cgroup freezer)."""

    def unpause(self, index: int) -> None: ...

    def disconnect(self, index: int) -> None:
        """Cut a worker from the cluster network (a partition)."""

    def reconnect(self, index: int) -> None: ...

    def lose_node(self, index: int) -> str:
        """Stop the engine of the node worker ``index`` runs on, unannounced (its processes die
        with it, no signal first); returns the node's name. The run places nothing on it again:
        the worker's next start goes to another node."""

    def restore_node(self, node: str) -> None:
        """Start a lost node's engine again (it rejoins the cluster)."""

    def drain_node(self, index: int) -> str:
        """Drain the node worker ``index`` runs on (an operator's maintenance: the orchestrator
        stops its tasks gracefully and places nothing there); returns the node's name. The
        worker's next start goes to another node."""

    def activate_node(self, node: str) -> None:
        """Make a drained node take tasks again."""

    def degrade_link(self, a: int, b: int, loss_percent: float) -> Any:
        """Drop ``loss_percent`` of the packets between the nodes workers ``a`` and ``b`` run on
        (100: the link is cut), both ways; each node still reaches the others. Returns what
        ``restore_link`` takes."""

    def restore_link(self, link: Any) -> None:
        """Undo a ``degrade_link`` (already undone: nothing)."""

    def proxy(self, index: int) -> Any:
        """The ``toxiproxy.Proxy`` in front of worker ``index`` (all traffic *into* it)."""

    def limit_cpu(self, index: int, cpus: float) -> None:
        """Let a running worker use this much CPU time, in cores, from now on."""

    def limit_memory(self, index: int, limit_bytes: int) -> None:
        """Give a running worker this memory limit (swap included) from now on."""

    def restore_cpu(self, index: int) -> None:
        """Give a running worker back the CPU limit it was created with (none: unlimited)."""

    def restore_memory(self, index: int) -> None:
        """Give a running worker back the memory limit it was created with (none: unlimited)."""

    def memory_usage(self, index: int) -> int:
        """Bytes the worker's container uses now."""

    def is_running(self, index: int) -> bool:
        """Whether the worker's current container is running (not exited, not paused)."""

    def command(self, index: int, command: WorkerCommand) -> None:
        """Send a command to the worker's training process (``chaos.worker.control``)."""

    def netns(self, index: int) -> Netns:
        """A helper beside worker ``index``, in its network namespace (its interfaces, iptables,
        qdiscs), to run commands there (chaos.netns.access); ``close()`` removes it."""

    def override(
        self,
        index: int,
        owner: str,
        *,
        image: str | None = None,
        env: dict[str, str] | None = None,
        settings: dict[str, Any] | None = None,
        cluster_config: str | None = None,
        write_limit: WriteLimit | None = None,
    ) -> None:
        """Create worker ``index`` differently from its next (re)start on (``owner``: the fault);
        ``cluster_config``: the TF_CONFIG text it is told the cluster with (whatever its resolver);
        ``write_limit``: its writes to a block device throttled (only settable at create)."""

    def clear_override(self, index: int, owner: str) -> None:
        """Undo ``override``; takes effect at the next (re)start."""

    def restart(self, indices: list[int], reason: str, grace_s: float = STOP_GRACE_S) -> None:
        """Stop (SIGTERM, ``grace_s``, then SIGKILL) and start these workers again."""

    def expect_restarts(self, expected: bool) -> None:
        """Whether another restart may come (a fault not yet fired or not yet healed):
        a cluster may prepare the next containers ahead only then (chaos.backends.docker.standby)."""

    def tf_config(self, index: int) -> str:
        """The healthy TF_CONFIG (JSON) worker ``index`` is created with."""

    def unused_address(self) -> str:
        """An IP address on the run's own network that no container holds (connects to it time out)."""

    def log_tail(self, index: int) -> list[str]:
        """The last lines worker ``index``'s current container printed."""

    def checkpoint_files(self) -> int | None:
        """How many files the run's checkpoint volume holds now (None: cannot tell)."""

    def damage_backup(self, file: BackupFile, mode: BackupDamage) -> dict[str, Any]:
        """Damage the newest checkpoint on the run's backup volume
        (``chaos.backends.backup_files``): its ``index`` or every ``data`` shard,
        by ``truncate``, ``zero``, ``flip`` or ``delete``. Returns what was done
        (``{"checkpoint": prefix, "files": {path: what}}``); raises when nothing was saved yet."""

    def snapshot_backup(self, name: str) -> str:
        """Copy the backup volume's files as they are now to ``<checkpoint_dir>/<name>``
        (``name``: ``stale-...``); returns that folder as the workers see it."""

    def backup_device(self) -> str:
        """The block device (``/dev/...``) that holds the run's backup volume, for write limits."""

    def fill_backup_volume(self, leave_bytes: int) -> dict[str, Any]:
        """Fill the run's (size-limited) backup volume with one file until ``leave_bytes``
        are free; returns ``{"filled", "free_before", "free"}`` in bytes."""

    def clear_backup_fill(self) -> dict[str, Any]:
        """Remove what ``fill_backup_volume`` wrote; idempotent. Returns ``{"free"}``."""

    def record(self, event: Event) -> None:
        """Append a runner event to the run's timeline."""


class Cluster(ClusterControl, Protocol):
    """A running cluster as the supervisor drives it; ``with backend.cluster(spec) as cluster``."""

    events: EventLog  # the run's one history: worker events and runner events

    def __enter__(self) -> "Cluster":
        """Make what the workers share (network, proxy, checkpoint store); no worker runs yet."""

    def __exit__(self, *exc_info: Any) -> None:
        """Tear down everything the cluster made (also on failure and Ctrl-C)."""

    def start_workers(self) -> None:
        """Start every worker and route the proxy to them."""

    def wait_started(self, timeout: float | None = None) -> None:
        """Wait until every worker started (its ``start`` event, or its process for a
        workload that sends none); raises ``InfrastructureError`` with each worker's state."""

    def await_restarts(self, indices: list[int], reason: str, timeout_s: float = 120.0) -> list[int]:
        """Instead of ``restart`` when the orchestrator restarts failed workers (``cluster.recovery.by:
        orchestrator``): wait until its restart policy started a new container for each of these
        workers since the last call, follow those, and record each as a ``RestartEvent(by=
        "orchestrator")``. Returns the ones it restarted; a worker that did not exit with a failure
        is never restarted by the orchestrator and is left out at once. A backend without such a
        policy raises ``UnsupportedVerb`` (the runner refuses those scenarios first)."""


class Backend(Protocol):
    """Where clusters come from."""

    name: str  # as ``chaos run --backend`` names it
    # True: the runner builds the project's images on this engine first (one host);
    # False: they must be where the clusters run already (a swarm's nodes hold or pull them).
    builds_images: bool
    # The verbs of ClusterControl its clusters cannot serve (chaos.backends.capabilities):
    # a scenario with a fault that uses one is refused before anything starts.
    cannot: frozenset[str]

    def check(self, proxy_image: str | None = None) -> None:
        """Before anything runs: the engine answers, and a user's proxy image (given) is there;
        ``InfrastructureError`` naming what is missing otherwise."""

    def cluster(self, spec: Deployment, *, events: EventLog | None = None) -> Cluster:
        """A cluster for ``spec``, not yet started (enter it to bring up what the workers share)."""

    def image_id(self, image: str) -> str:
        """The content id of an image tag as this backend runs it (the reference run's cache key)."""
