"""Faults in how workers seed and batch their training (the harness's settings).

Both apply when a worker is created (``applies_at_create``): at ``bring_up``
the workers come up with them; healing redeploys every worker with the
scenario's settings and BackupAndRestore resumes.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, PrivateAttr

from chaos.backends.base import ClusterControl
from chaos.faults.base import Fault, WorkerFault, register_fault


@register_fault
class SeedSkew(Fault):
    """Workers seed their RNGs apart: each with seed + task index (per_worker), or not at all (unseeded)."""

    name: ClassVar[str] = "seed_skew"
    uses_hooks: ClassVar[frozenset[str]] = frozenset({"settings"})  # the harness's seeding switch
    applies_at_create: ClassVar[bool] = True
    mode: Literal["per_worker", "unseeded"] = Field(
        description="per_worker: seed + task index on each worker; unseeded: no seed and no op determinism"
    )
    _workers: list[int] = PrivateAttr(default_factory=list)

    @property
    def target(self) -> str:
        return "all workers"

    def inject(self, cluster: ClusterControl) -> None:
        self._workers = list(range(cluster.num_workers))
        for w in self._workers:
            cluster.override(w, self.name, settings={"seeding": self.mode})

    def heal(self, cluster: ClusterControl) -> None:
        for w in self._workers:
            cluster.clear_override(w, self.name)


@register_fault
class BatchSizeSkew(WorkerFault):
    """One worker trains with another batch per step than the others (global batch / workers)."""

    name: ClassVar[str] = "batch_size_skew"
    uses_hooks: ClassVar[frozenset[str]] = frozenset({"settings"})
    applies_at_create: ClassVar[bool] = True
    local_batch: int = Field(ge=1, le=65536, description="its batch per step (the others keep global_batch / workers)")

    def inject(self, cluster: ClusterControl) -> None:
        cluster.override(self.worker, self.name, settings={"local_batch_size": self.local_batch})

    def heal(self, cluster: ClusterControl) -> None:
        cluster.clear_override(self.worker, self.name)
