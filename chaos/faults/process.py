"""Faults on a worker's processes: kill it, freeze it."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, PrivateAttr

from chaos.cluster.control import ClusterControl
from chaos.faults.base import WorkerFault, register_fault


@register_fault
class KillWorker(WorkerFault):
    """Kill a worker's main process (SIGKILL, or SIGTERM for a graceful stop)."""

    name: ClassVar[str] = "kill_worker"
    signal: Literal["SIGKILL", "SIGTERM"] = Field(
        "SIGKILL", description="SIGKILL, or SIGTERM for the graceful variant"
    )

    def inject(self, cluster: ClusterControl) -> None:
        cluster.signal(self.worker, self.signal)

    def heal(self, cluster: ClusterControl) -> None:
        # A dead process cannot be un-killed: the runner's restart policy
        # brings the worker back.
        return None


@register_fault
class PauseWorker(WorkerFault):
    """Freeze every process of a worker (docker pause); heal unpauses it."""

    name: ClassVar[str] = "pause_worker"
    # Unpausing a running container is an error in Docker, and the protocol
    # cannot tell whether a worker is paused: remember it here.
    _paused: bool = PrivateAttr(False)

    def inject(self, cluster: ClusterControl) -> None:
        cluster.pause(self.worker)
        self._paused = True

    def heal(self, cluster: ClusterControl) -> None:
        if self._paused:
            cluster.unpause(self.worker)
            self._paused = False
