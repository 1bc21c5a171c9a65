"""Faults on a worker's processes: kill it, preempt it, freeze it."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from chaos.backends.abilities import Freezing
from chaos.backends.base import ClusterControl
from chaos.faults.base import WorkerFault, register_fault
from chaos.faults.undo import Undo


@register_fault
class KillWorker(WorkerFault):
    """Kill a worker's main process (SIGKILL, or SIGTERM; for a preemption with a grace period, preempt_worker)."""

    name: ClassVar[str] = "kill_worker"
    signal: Literal["SIGKILL", "SIGTERM"] = Field(
        "SIGKILL", description="SIGKILL, or SIGTERM (no SIGKILL follows; see preempt_worker)"
    )

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        # Nothing to undo: a dead process cannot be un-killed, the runner's
        # restart policy brings the worker back.
        cluster.signal(self.worker, self.signal)


@register_fault
class PreemptWorker(WorkerFault):
    """Preempt a worker as Kubernetes or a spot VM does: SIGTERM, then SIGKILL after grace_s if it still runs."""

    name: ClassVar[str] = "preempt_worker"
    grace_s: float = Field(
        30.0, ge=0, le=600, description="seconds between SIGTERM and SIGKILL (Kubernetes' default grace is 30 s)"
    )

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        # Like a kill, nothing to undo: the runner's restart policy brings the worker back.
        cluster.preempt(self.worker, self.grace_s)


@register_fault
class PauseWorker(WorkerFault):
    """Freeze every process of a worker (docker pause); heal unpauses it."""

    name: ClassVar[str] = "pause_worker"
    uses_abilities: ClassVar[tuple[type, ...]] = (Freezing,)

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        cluster.pause(self.worker)
        # Only once paused: unpausing a running container is an error in Docker.
        undo.add(lambda c: c.unpause(self.worker))
