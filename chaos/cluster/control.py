"""What a fault may do to a running cluster.

Faults are written against this protocol, not against Docker, so they can be
unit-tested with a fake cluster. ``chaos.cluster.docker_cluster.DockerCluster``
is the real implementation.
"""

from __future__ import annotations

from typing import Any, Protocol

from chaos.events import Event


class ClusterControl(Protocol):
    num_workers: int

    def worker_name(self, index: int) -> str:
        """``worker-<index>``; worker-0 is the chief."""

    def signal(self, index: int, signal: str) -> None:
        """Send a signal (``SIGKILL``, ``SIGTERM``, ...) to a worker's main process."""

    def pause(self, index: int) -> None:
        """Freeze every process of a worker (docker pause, the cgroup freezer)."""

    def unpause(self, index: int) -> None: ...

    def disconnect(self, index: int) -> None:
        """Cut a worker from the cluster network (a partition)."""

    def reconnect(self, index: int) -> None: ...

    def proxy(self, index: int) -> Any:
        """The ``toxiproxy.Proxy`` in front of worker ``index`` (all traffic *into* it)."""

    def update_resources(self, index: int, **limits: Any) -> None:
        """Change a running worker's container limits (cpu_quota, mem_limit, ...)."""

    def restart(self, indices: list[int], reason: str) -> None:
        """Stop (grace, then kill) and start these workers again, same config."""

    def record(self, event: Event) -> None:
        """Append a runner event to the run's timeline."""
