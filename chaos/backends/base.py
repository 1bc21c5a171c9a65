"""The backend seam's required part: what every backend's cluster serves, in the
scenario's words (workers, restarts, logs), never an engine's. Kept small on
purpose (tests/unit/backends/test_backend_fakes.py bounds it): anything only some backends
can do is an ability of its own (chaos.backends.abilities), found by type.

- ``ClusterControl``: what any fault may do to any running cluster (name, signal,
  stop, ask about a worker; record what it did). Faults are written against it
  and the abilities they declare, so they are unit-tested with a fake cluster.
- ``Cluster``: that, plus what the supervisor drives (bring up, start, wait,
  restart, tear down). A context manager: leaving it tears everything down.
- ``Backend``: where clusters come from (chaos.backends.catalog names them).

Test fakes implement the same protocols; tests/unit/backends/test_backend_fakes.py holds
each of them against this module and the abilities they offer.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Protocol

from chaos.backends.spec import Deployment
from chaos.eventlog import EventLog
from chaos.events import Event
from chaos.topology import STOP_GRACE_S


class ClusterControl(Protocol):
    """What every cluster serves to a fault (the optional rest: chaos.backends.abilities)."""

    num_slots: int  # containers: every MWMS worker, or chief + workers + ps (chaos.topology slots)

    @abstractmethod
    def worker_name(self, index: int) -> str:
        """``worker-<index>``; worker-0 is the chief."""

    @abstractmethod
    def tf_config(self, index: int) -> str:
        """The healthy TF_CONFIG (JSON) worker ``index`` is created with."""

    @abstractmethod
    def signal(self, index: int, signal: str) -> None:
        """Send a signal (``SIGKILL``, ``SIGTERM``, ...) to a worker's main process."""

    @abstractmethod
    def preempt(self, index: int, grace_s: float) -> None:
        """Stop the worker's current container as a preemption does: SIGTERM now,
        SIGKILL after ``grace_s`` if it still runs. Returns at once (the grace runs
        in the background, bound to that container, never to a restarted one)."""

    @abstractmethod
    def is_running(self, index: int) -> bool:
        """Whether the worker's current container is running (not exited, not paused)."""

    @abstractmethod
    def log_tail(self, index: int) -> list[str]:
        """The last lines worker ``index``'s current container printed."""

    @abstractmethod
    def record(self, event: Event) -> None:
        """Append a runner event to the run's timeline."""


class Cluster(ClusterControl, Protocol):
    """A running cluster as the supervisor drives it; ``with backend.cluster(spec) as cluster``.
    Each worker's exit is an ``ExitEvent`` in ``events``, its output worker events there."""

    events: EventLog  # the run's one history: worker events and runner events

    @abstractmethod
    def __enter__(self) -> Cluster:
        """Make what the workers share (network, proxy, checkpoint store); no worker runs yet."""

    @abstractmethod
    def __exit__(self, *exc_info: Any) -> None:
        """Tear down everything the cluster made (also on failure and Ctrl-C)."""

    @abstractmethod
    def start_workers(self) -> None:
        """Start every worker and route the proxy to them."""

    @abstractmethod
    def wait_started(self, timeout: float | None = None) -> None:
        """Wait until every worker started (its ``start`` event, or its process for a
        workload that sends none); raises ``InfrastructureError`` with each worker's state."""

    @abstractmethod
    def restart(self, indices: list[int], reason: str, grace_s: float = STOP_GRACE_S) -> None:
        """Stop (SIGTERM, ``grace_s``, then SIGKILL) and start these workers again."""


class Backend(Protocol):
    """Where clusters come from."""

    name: str  # as ``chaos run --backend`` names it
    # True: the runner builds the project's images on this engine first (one host);
    # False: they must be where the clusters run already (a swarm's nodes hold or pull them).
    builds_images: bool
    # The class of its clusters: the abilities it implements (chaos.backends.abilities) are what
    # the backend serves, asked by type before anything starts (chaos.backends.refusals).
    cluster_type: type

    def check(self, proxy_image: str | None = None) -> None:
        """Before anything runs: the engine answers, and a user's proxy image (given) is there;
        ``InfrastructureError`` naming what is missing otherwise."""

    def cluster(self, spec: Deployment, *, events: EventLog | None = None) -> Cluster:
        """A cluster for ``spec``, not yet started (enter it to bring up what the workers share)."""

    def image_id(self, image: str) -> str:
        """The content id of an image tag as this backend runs it (the reference run's cache key)."""
