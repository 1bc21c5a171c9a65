"""A fault in one worker's input: a corrupt record whose value is NaN or inf.

Under MultiWorkerMirroredStrategy the gradients are all-reduced, so one
worker's non-finite gradient reaches every worker's weights in the same step
(measured: docs/findings.md, "One bad worker poisons everyone: NaN spread").
The harness's data is a pure function of (seed, step, shard), so the poison is
a worker setting (``chaos.worker.data.poisoned``): it applies when the worker
is created, and healing redeploys the workers without it.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from chaos.backends.abilities import WorkerOverrides
from chaos.backends.base import ClusterControl
from chaos.faults.base import WorkerFault, register_fault
from chaos.faults.undo import Undo, override_workers
from chaos.worker.settings import WorkerSettings


@register_fault
class PoisonInput(WorkerFault):
    """One worker's batch at a given global step holds a non-finite value (NaN or inf): its gradient is non-finite."""

    name: ClassVar[str] = "poison_input"
    # The harness's poison_step/poison_value settings: a user's job has no such switch.
    uses_hooks: ClassVar[frozenset[str]] = frozenset({"settings"})
    applies_at_create: ClassVar[bool] = True
    uses_abilities: ClassVar[tuple[type, ...]] = (WorkerOverrides,)
    step: int = Field(ge=1, description="global step (1-based, as step events count) whose batch is poisoned")
    value: Literal["nan", "inf"] = Field("nan", description="what one feature of one record becomes: nan or inf")

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        override_workers(
            cluster,
            undo,
            self.name,
            [self.worker],
            settings=WorkerSettings.change(poison_step=self.step, poison_value=self.value),
        )
