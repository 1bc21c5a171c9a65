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
    evidence: ClassVar[frozenset[str]] = frozenset({"steps"})
    needs: ClassVar[frozenset[str]] = frozenset({"restart", "heal"})
    # Not timing_sensitive: it bounds seconds (a restart is ~5 s against limits
    # of tens of seconds), which other scenarios on the machine do not threaten.
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
    evidence: ClassVar[frozenset[str]] = frozenset({"steps"})
    needs: ClassVar[frozenset[str]] = frozenset({"restart", "heal"})
    timing_sensitive: ClassVar[bool] = True
    factor: float = Field(1.5, ge=1, description="allowed ratio to the fault-free median")
    min_samples: int = Field(3, ge=1, description="step times needed on each side to judge")
    # Steps of a few ms double when another process takes a core: measured 7 -> 15 ms
    # after a healed fault with other runs on the 2-core machine. The faults these
    # scenarios heal slow steps by 25 ms or more (CPU throttle 6 -> 32 ms, 100 ms latency),
    # so differences below the slack are not a slowdown left behind.
    slack_ms: float = Field(
        10.0, ge=0, le=60_000, description="a difference of medians below this many ms passes whatever the ratio"
    )

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
        within = ratio <= self.factor or (now - base) * 1000 <= self.slack_ms
        limit = f"limit {self.factor:g}x, or {self.slack_ms:g} ms slower"
        return (passed if within else failed)(f"{summary}; {limit}", proof)
