"""A lost task the job survives: the fault hit, and training went on without an error.

ParameterServerStrategy's coordinator retries a lost worker's steps on the
other workers (docs/findings.md "Parameter servers"). Passing needs proof
that the fault reached its target (it exited with a non-zero code in the
window); without it a fault that missed would look tolerated.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from chaos.checks.base import SymptomCheck, register_check
from chaos.checks.select import names
from chaos.checks.verdict import Undecidable, Verdict, failed, passed
from chaos.events import ErrorEvent, ExitEvent, StepEvent
from chaos.timeline import Timeline


@register_check
class Tolerated(SymptomCheck):
    """The lost workers exited non-zero in the fault window while the others raised no error and kept stepping after it."""

    name: ClassVar[str] = "tolerated"
    evidence: ClassVar[frozenset[str]] = frozenset({"errors", "steps"})
    lost: list[int] = Field(min_length=1, description="worker indices the fault takes down (they must exit non-zero)")
    workers: list[int] = Field(
        default_factory=lambda: [0],
        min_length=1,
        description="worker indices that must raise no error and report steps after the loss (default: the chief)",
    )

    def judge(self, timeline: Timeline) -> Verdict:
        window = self.window(timeline)
        inside = timeline.between(window.start, window.end)
        exits = [e for e in inside.of(ExitEvent) if e.worker in self.lost and e.exit_code != 0]
        gone = {e.worker for e in exits}
        if gone != set(self.lost):
            missing = sorted(set(self.lost) - gone)
            return failed(
                f"{names(missing)} did not exit with an error in the fault window: the fault did not hit",
                [window.inject],
            )
        loss = max(exits, key=lambda e: e.t)
        errors = [e for e in inside.of(ErrorEvent) if e.worker in self.workers]
        if errors:
            return failed(
                f"{errors[0].source} raised {errors[0].error_class.rsplit('.', 1)[-1]} "
                f"{errors[0].t - window.start:.1f} s after the inject: not tolerated",
                [window.inject, loss, *errors[:2]],
            )
        later = [e for e in inside.of(StepEvent) if e.worker in self.workers and e.t > loss.t]
        if not later:
            raise Undecidable(
                f"no step from {names(self.workers)} after {loss.source} exited: training may have stopped",
                [window.inject, loss],
            )
        return passed(
            f"{names(sorted(gone))} exited {loss.exit_code}; {names(self.workers)} raised no error and "
            f"reported {len(later)} step events after it (up to step {later[-1].step})",
            [window.inject, loss, later[0], later[-1]],
        )
