"""Faults in a worker's resources: device memory, host memory, CPU."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, model_validator

from chaos.backends.abilities import ResourceLimits, WorkerCommands
from chaos.backends.base import ClusterControl
from chaos.faults.base import WorkerFault, register_fault
from chaos.faults.undo import Undo
from chaos.worker.control import MemoryDemand

MB = 1 << 20


def _lift_memory_demand(cluster: ClusterControl, worker: int) -> None:
    # Only for a live worker: one that died of the fault is replaced by a clean container.
    cluster.command(worker, MemoryDemand(0))


@register_fault
class DeviceOOM(WorkerFault):
    """From the trigger on, the worker's train step needs more device memory than the device has."""

    name: ClassVar[str] = "device_oom"
    uses_hooks: ClassVar[frozenset[str]] = frozenset({"commands"})  # the memory demand runs in the job
    uses_abilities: ClassVar[tuple[type, ...]] = (WorkerCommands,)
    device_memory_mb: int = Field(
        512, ge=16, description="the device's free memory, MB (CPU: address space beyond what is mapped)"
    )
    demand_mb: int = Field(2048, ge=1, description="memory each step asks for from the trigger on, MB")

    @model_validator(mode="after")
    def _outgrows(self) -> DeviceOOM:
        if self.demand_mb <= self.device_memory_mb:
            raise ValueError(f"demand_mb ({self.demand_mb}) must exceed device_memory_mb ({self.device_memory_mb})")
        return self

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        cluster.command(self.worker, MemoryDemand(self.demand_mb, cap_mb=self.device_memory_mb))
        undo.add(lambda c: _lift_memory_demand(c, self.worker) if c.is_running(self.worker) else None)


@register_fault
class HostOOM(WorkerFault):
    """The worker's container gets a memory limit it then outgrows: the kernel OOM-kills it."""

    name: ClassVar[str] = "host_oom"
    uses_hooks: ClassVar[frozenset[str]] = frozenset({"commands"})  # the memory demand runs in the job
    uses_abilities: ClassVar[tuple[type, ...]] = (ResourceLimits, WorkerCommands)
    headroom_mb: int = Field(256, ge=16, description="the limit: the container's use at the inject plus this, MB")
    demand_mb: int = Field(1024, ge=1, description="memory each step asks for from the trigger on, MB")

    @model_validator(mode="after")
    def _outgrows(self) -> HostOOM:
        if self.demand_mb <= self.headroom_mb:
            raise ValueError(f"demand_mb ({self.demand_mb}) must exceed headroom_mb ({self.headroom_mb})")
        return self

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        limit = cluster.memory_usage(self.worker) + self.headroom_mb * MB
        cluster.limit_memory(self.worker, limit)
        undo.add(self._lift)
        cluster.command(self.worker, MemoryDemand(self.demand_mb))

    def _lift(self, cluster: ClusterControl) -> None:
        # The demand too: it may have reached the worker before the command failed.
        if cluster.is_running(self.worker):
            _lift_memory_demand(cluster, self.worker)
            cluster.restore_memory(self.worker)  # the scenario's own limit, if any


@register_fault
class CpuThrottle(WorkerFault):
    """Cut a worker's CPU quota: a straggler that slows every step of every worker."""

    name: ClassVar[str] = "cpu_throttle"
    uses_abilities: ClassVar[tuple[type, ...]] = (ResourceLimits,)
    cpus: float = Field(0.1, gt=0, le=64, description="CPUs the worker may use (CFS quota per 10 ms period)")

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        cluster.limit_cpu(self.worker, self.cpus)
        undo.add(
            lambda c: c.restore_cpu(self.worker) if c.is_running(self.worker) else None
        )  # the scenario's own quota
