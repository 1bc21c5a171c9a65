"""Faults in how workers seed and batch their training (the harness's settings).

Both apply when a worker is created (``applies_at_create``): at ``bring_up``
the workers come up with them; healing redeploys every worker with the
scenario's settings and BackupAndRestore resumes.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from chaos.backends.abilities import WorkerOverrides
from chaos.backends.base import ClusterControl
from chaos.faults.base import Fault, WorkerFault, register_fault
from chaos.faults.undo import Undo, override_workers
from chaos.worker.settings import WorkerSettings


@register_fault
class SeedSkew(Fault):
    """Workers seed their RNGs apart: each with seed + task index (per_worker), or not at all (unseeded)."""

    name: ClassVar[str] = "seed_skew"
    uses_hooks: ClassVar[frozenset[str]] = frozenset({"settings"})  # the harness's seeding switch
    applies_at_create: ClassVar[bool] = True
    uses_abilities: ClassVar[tuple[type, ...]] = (WorkerOverrides,)
    mode: Literal["per_worker", "unseeded"] = Field(
        description="per_worker: seed + task index on each worker; unseeded: no seed and no op determinism"
    )

    @property
    def target(self) -> str:
        return "all workers"

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        override_workers(
            cluster, undo, self.name, range(cluster.num_slots), settings=WorkerSettings.change(seeding=self.mode)
        )


@register_fault
class BatchSizeSkew(WorkerFault):
    """One worker trains with another batch per step than the others (global batch / workers)."""

    name: ClassVar[str] = "batch_size_skew"
    uses_hooks: ClassVar[frozenset[str]] = frozenset({"settings"})
    applies_at_create: ClassVar[bool] = True
    uses_abilities: ClassVar[tuple[type, ...]] = (WorkerOverrides,)
    local_batch: int = Field(ge=1, le=65536, description="its batch per step (the others keep global_batch / workers)")

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        override_workers(
            cluster, undo, self.name, [self.worker], settings=WorkerSettings.change(local_batch_size=self.local_batch)
        )
