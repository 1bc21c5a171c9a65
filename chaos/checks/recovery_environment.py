"""After recovery: every worker has the same environment and its own data."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from chaos.checks.base import RecoveryCheck, register_check
from chaos.checks.select import first_by_worker, names
from chaos.checks.symptom_silent import common_steps, describe_step, lanes, one_lane
from chaos.checks.verdict import Undecidable, Verdict, failed, passed
from chaos.events import StartEvent, StepEvent
from chaos.fingerprints import skews
from chaos.timeline import Timeline


@register_check
class EnvironmentsMatch(RecoveryCheck):
    """Every worker restarted with the same environment fingerprint (TF, packages, environment variables)."""

    name: ClassVar[str] = "environments_match"
    evidence: ClassVar[frozenset[str]] = frozenset({"start"})
    needs: ClassVar[frozenset[str]] = frozenset({"restart", "heal"})

    def judge(self, timeline: Timeline) -> Verdict:
        after = timeline.between(self.recovery_start(timeline))
        starts = first_by_worker(after.of(StartEvent))
        missing = [w for w in timeline.workers() if w not in starts]
        if missing:
            return failed(f"{names(missing)} did not start after recovery", list(starts.values()))
        found = skews(starts)
        if found:
            return failed("; ".join(s.describe() for s in found), list(starts.values()))
        return passed(f"all {len(starts)} workers started with one environment fingerprint", list(starts.values()))


@register_check
class DistinctBatches(RecoveryCheck):
    """After recovery every worker trains on its own data: batch digests differ between workers on every step."""

    name: ClassVar[str] = "distinct_batches"
    evidence: ClassVar[frozenset[str]] = frozenset({"batch_digests"})
    needs: ClassVar[frozenset[str]] = frozenset({"restart", "heal"})
    min_steps: int = Field(5, ge=1, description="at least this many steps reported by every worker after recovery")

    def judge(self, timeline: Timeline) -> Verdict:
        workers = timeline.workers()
        after = timeline.between(self.recovery_start(timeline))
        rows = common_steps(after.of(StepEvent), workers)
        if one_lane(rows) or not workers:
            raise Undecidable("one worker with one replica: there is nothing to compare its batches with")
        if len(rows) < self.min_steps:
            raise Undecidable(f"only {len(rows)} steps reported by every worker after recovery; need {self.min_steps}")
        for row in rows:
            batches = lanes(row)
            if len({d for d, _ in batches.values()}) < len(batches):
                return failed(f"workers shared a batch: {describe_step(row)}", list(row.values()))
        return passed(
            f"all {len(rows)} steps after recovery had a different batch on every worker ({describe_step(rows[0])})",
            [*rows[0].values(), *rows[-1].values()],
        )
