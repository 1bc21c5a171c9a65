"""Symptoms of how workers seed their randomness: the weights they start from
and the dropout masks they draw, compared worker by worker."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from chaos.checks.base import RecoveryCheck, SymptomCheck, register_check
from chaos.checks.select import first_by_worker, names
from chaos.checks.symptom_silent import common_steps
from chaos.checks.verdict import Undecidable, Verdict, failed, passed
from chaos.events import PlanEvent, StepEvent
from chaos.timeline import Timeline


def _digests(events: dict) -> str:
    return ", ".join(f"worker-{w} {e.weights_digest[:12]}" for w, e in sorted(events.items()))


@register_check
class IdenticalInitialWeights(SymptomCheck):
    """Every worker began training from the same weights, and had the same weights after its first step."""

    name: ClassVar[str] = "identical_initial_weights"
    evidence: ClassVar[frozenset[str]] = frozenset({"initial_weights"})

    def judge(self, timeline: Timeline) -> Verdict:
        window = self.window(timeline)
        workers = timeline.workers()
        if len(workers) < 2:
            raise Undecidable("one worker: there is nothing to compare its weights with")
        inside = timeline.between(window.start, window.end)
        plans = first_by_worker([e for e in inside.of(PlanEvent) if e.weights_digest])
        firsts = first_by_worker([e for e in inside.of(StepEvent) if e.weights_digest])
        missing = [w for w in workers if w not in plans or w not in firsts]
        if missing:
            raise Undecidable(
                f"no weights digest at train begin and after the first step from {names(missing)} in the fault window",
                [window.inject, *plans.values(), *firsts.values()],
            )
        proof = [window.inject, *plans.values(), *firsts.values()]
        if len({e.weights_digest for e in plans.values()}) > 1:
            return failed(f"workers began training from different weights: {_digests(plans)}", proof)
        if len({(e.step, e.weights_digest) for e in firsts.values()}) > 1:
            return failed(f"workers' weights differed after their first step: {_digests(firsts)}", proof)
        return passed(
            f"every worker began from weights {next(iter(plans.values())).weights_digest[:12]} and had "
            f"{next(iter(firsts.values())).weights_digest[:12]} after step {next(iter(firsts.values())).step}",
            proof,
        )


def _mask_rows(timeline: Timeline, span: Timeline, where: str, min_steps: int):
    workers = timeline.workers()
    if len(workers) < 2:
        raise Undecidable("one worker: there is nothing to compare its dropout masks with")
    rows = common_steps([e for e in span.of(StepEvent) if e.dropout_mask], workers)
    if len(rows) < min_steps:
        raise Undecidable(
            f"only {len(rows)} steps with a dropout mask hash from every worker {where}; "
            f"need {min_steps} (is cluster.training.dropout set?)"
        )
    return rows


def _describe(row: dict) -> str:
    step = next(iter(row.values())).step
    return f"step {step}: " + ", ".join(f"worker-{w} mask {e.dropout_mask[:12]}" for w, e in sorted(row.items()))


@register_check
class IdenticalDropoutMasks(RecoveryCheck):
    """After recovery every worker draws the same dropout mask on every step (one seed everywhere)."""

    name: ClassVar[str] = "identical_dropout_masks"
    evidence: ClassVar[frozenset[str]] = frozenset({"dropout_masks"})
    needs: ClassVar[frozenset[str]] = frozenset({"restart", "heal"})
    min_steps: int = Field(5, ge=1, description="at least this many steps with a mask from every worker after recovery")

    def judge(self, timeline: Timeline) -> Verdict:
        rows = _mask_rows(timeline, timeline.between(self.recovery_start(timeline)), "after recovery", self.min_steps)
        for row in rows:
            if len({e.dropout_mask for e in row.values()}) > 1:
                return failed(f"workers drew different dropout masks: {_describe(row)}", list(row.values()))
        return passed(
            f"all {len(rows)} steps after recovery had one dropout mask on every worker (first {_describe(rows[0])})",
            [*rows[0].values(), *rows[-1].values()],
        )


@register_check
class DistinctDropoutMasks(SymptomCheck):
    """Every worker drew its own dropout mask on every step (seeded apart, or not seeded)."""

    name: ClassVar[str] = "distinct_dropout_masks"
    evidence: ClassVar[frozenset[str]] = frozenset({"dropout_masks"})
    min_steps: int = Field(5, ge=1, description="at least this many steps with a mask from every worker in the window")

    def judge(self, timeline: Timeline) -> Verdict:
        window = self.window(timeline)
        rows = _mask_rows(timeline, timeline.between(window.start, window.end), "in the fault window", self.min_steps)
        for row in rows:
            if len({e.dropout_mask for e in row.values()}) < len(row):
                return failed(f"workers shared a dropout mask: {_describe(row)}", list(row.values()))
        return passed(
            f"all {len(rows)} steps had a different dropout mask on every worker (first {_describe(rows[0])})",
            [window.inject, *rows[0].values(), *rows[-1].values()],
        )
