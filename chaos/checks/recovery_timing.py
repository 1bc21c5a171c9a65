"""How fast training came back after the heal or restart."""

from __future__ import annotations

import statistics
from typing import ClassVar

from pydantic import Field

from chaos.checks.base import RecoveryCheck, register_check
from chaos.checks.verdict import Undecidable, Verdict, failed, passed
from chaos.events import InjectEvent, StepEvent
from chaos.timeline import Timeline


@register_check
class RecoveredWithin(RecoveryCheck):
    """The first step after the heal or restart came within max_s seconds."""

    name: ClassVar[str] = "recovered_within"
    max_s: float = Field(gt=0, description="seconds from the heal/restart to the next step")

    def judge(self, timeline: Timeline) -> Verdict:
        t0 = self.recovery_start(timeline)
        first = next((s for s in timeline.of(StepEvent) if s.t > t0), None)
        if first is None:
            return failed("no step after the heal/restart: training did not come back")
        delay = first.t - t0
        summary = f"first step (step {first.step}) {delay:.1f} s after the heal/restart"
        return (passed if delay <= self.max_s else failed)(f"{summary}; limit {self.max_s:g} s", [first])


@register_check
class NormalSpeed(RecoveryCheck):
    """After the heal, the median step time is back within factor x the fault-free median."""

    name: ClassVar[str] = "normal_speed"
    factor: float = Field(1.5, ge=1, description="allowed ratio to the fault-free median")
    min_samples: int = Field(3, ge=1, description="step times needed on each side to judge")

    def judge(self, timeline: Timeline) -> Verdict:
        t0 = self.recovery_start(timeline)
        injects = timeline.of(InjectEvent)
        first_fault = injects[0].t if injects else t0
        durations = timeline.step_durations()
        before = [d for e, d in durations if e.t < first_fault]
        after = [(e, d) for e, d in durations if e.t - d >= t0]
        if len(before) < self.min_samples or len(after) < self.min_samples:
            raise Undecidable(
                f"{len(before)} step times before the fault and {len(after)} after recovery (need {self.min_samples} each)"
            )
        base = statistics.median(before)
        now = statistics.median(d for _, d in after)
        ratio = now / base if base > 0 else float("inf")
        summary = f"median step time {now * 1000:.0f} ms after recovery vs {base * 1000:.0f} ms before the fault ({ratio:.1f}x)"
        proof = [after[0][0], after[-1][0]]
        return (passed if ratio <= self.factor else failed)(f"{summary}; limit {self.factor:g}x", proof)
