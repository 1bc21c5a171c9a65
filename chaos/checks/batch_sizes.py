"""Each worker's batch per step, as its plan event says: skewed while the
batch_size_skew fault is on, equal again after recovery."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from chaos.checks.base import RecoveryCheck, SymptomCheck, register_check
from chaos.checks.select import first_by_worker, names
from chaos.checks.verdict import Undecidable, Verdict, failed, passed
from chaos.events import PlanEvent
from chaos.timeline import Timeline


def _batches(plans: dict[int, PlanEvent]) -> str:
    return ", ".join(f"worker-{w} {e.local_batch}" for w, e in sorted(plans.items()))


def _plans(timeline: Timeline) -> dict[int, PlanEvent]:
    return first_by_worker([e for e in timeline.of(PlanEvent) if e.local_batch])


@register_check
class UnequalLocalBatches(SymptomCheck):
    """The given workers trained with another batch per step than the other workers."""

    name: ClassVar[str] = "unequal_local_batches"
    evidence: ClassVar[frozenset[str]] = frozenset({"local_batch"})
    workers: list[int] = Field(min_length=1, description="the workers whose batch must differ from the others'")

    def judge(self, timeline: Timeline) -> Verdict:
        window = self.window(timeline)
        plans = _plans(timeline.between(window.start, window.end))
        others = [w for w in timeline.workers() if w not in self.workers]
        missing = [w for w in [*self.workers, *others] if w not in plans]
        if missing or not others:
            raise Undecidable(
                f"no batch size reported in the fault window by {names(missing) or 'a worker to compare with'}",
                [window.inject, *plans.values()],
            )
        proof = [window.inject, *plans.values()]
        usual = {plans[w].local_batch for w in others}
        same = [w for w in self.workers if plans[w].local_batch in usual]
        if same:
            return failed(f"{names(same)} trained with the others' batch: {_batches(plans)}", proof)
        return passed(f"batch per step: {_batches(plans)}", proof)


@register_check
class EqualLocalBatches(RecoveryCheck):
    """After recovery every worker trains with the same batch per step."""

    name: ClassVar[str] = "equal_local_batches"
    evidence: ClassVar[frozenset[str]] = frozenset({"local_batch"})
    needs: ClassVar[frozenset[str]] = frozenset({"restart", "heal"})

    def judge(self, timeline: Timeline) -> Verdict:
        after = timeline.between(self.recovery_start(timeline))
        plans = _plans(after)
        missing = [w for w in timeline.workers() if w not in plans]
        if missing:
            raise Undecidable(f"no batch size reported after recovery by {names(missing)}", list(plans.values()))
        if len({e.local_batch for e in plans.values()}) > 1:
            return failed(f"batch per step still differs after recovery: {_batches(plans)}", list(plans.values()))
        return passed(
            f"every worker trains with batch {next(iter(plans.values())).local_batch} per step after recovery "
            f"({_batches(plans)})",
            list(plans.values()),
        )
