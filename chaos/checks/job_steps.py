"""The job's own step counter against the steps it trained.

A custom loop keeps its own step: a ``global_step`` variable, a CheckpointManager's
``step_counter``. Updated in replica context (inside ``strategy.run``) it is
aggregated across the replicas as its ``tf.VariableAggregation`` says, so under
MultiWorkerMirroredStrategy it can count every step once per worker and say
nothing (docs/findings.md, "A counter variable under each aggregation"). The agent
reports that counter at every save and at the end (``job_step``) beside the steps
it saw the optimizer take; this check compares the two.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from chaos.checks.base import RecoveryCheck, register_check
from chaos.checks.verdict import Undecidable, Verdict, failed, passed
from chaos.events import CheckpointEvent, DoneEvent
from chaos.timeline import Timeline


@register_check
class JobStepCounts(RecoveryCheck):
    """At every save and at the end, the job's own step counter equals ``per_step`` times the steps it trained."""

    name: ClassVar[str] = "job_step_counts"
    evidence: ClassVar[frozenset[str]] = frozenset({"job_step", "steps"})
    per_step: int = Field(
        1,
        ge=1,
        le=64,
        description="how much the counter should advance per trained step "
        "(1: it counts steps; a scenario showing a miscount names it)",
    )

    def judge(self, timeline: Timeline) -> Verdict:
        reported = [
            e
            for e in timeline.events
            if isinstance(e, (CheckpointEvent, DoneEvent)) and e.job_step >= 0 and e.worker is not None
        ]
        if not reported:
            raise Undecidable(
                "no worker reported a step counter of its own (no step_counter, no global_step "
                "variable in its checkpoint)"
            )
        wrong = [e for e in reported if e.job_step != self.per_step * e.step]
        if wrong:
            first = wrong[0]
            ratio = f"{first.job_step / first.step:g}x" if first.step else "at step 0"
            return failed(
                f"worker-{first.worker}'s own step counter read {first.job_step} at {first.kind} after "
                f"{first.step} trained steps ({ratio}; expected {self.per_step}x), "
                f"{len(wrong)} of {len(reported)} reports off",
                wrong[:4],
            )
        last = reported[-1]
        return passed(
            f"the job's step counter was {self.per_step}x the trained steps at all {len(reported)} "
            f"reports (worker-{last.worker}: {last.job_step} at step {last.step})",
            [reported[0], last],
        )
