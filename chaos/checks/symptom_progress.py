"""Symptoms in training progress: a stall, a slowdown, a hang at bring-up."""

from __future__ import annotations

import statistics
from typing import ClassVar, Literal

from pydantic import Field

from chaos.checks.base import SymptomCheck, register_check
from chaos.checks.select import first_by_worker
from chaos.checks.verdict import Undecidable, Verdict, failed, passed, unknown
from chaos.events import ErrorEvent, Event, ExitEvent, LogLine, StartEvent, StepEvent
from chaos.stragglers import describe_stragglers, missing_tasks
from chaos.timeline import FaultWindow, Timeline


def longest_gap(steps: list[StepEvent], window: FaultWindow) -> tuple[float, StepEvent | None, StepEvent | None]:
    """The longest time inside the window with none of these steps, and the
    steps bounding it (None where the window's edge bounds it)."""
    inside = [s for s in steps if window.contains(s.t)]
    bounds: list[tuple[float, StepEvent | None]] = [
        (window.start, None),
        *[(s.t, s) for s in inside],
        (window.end, None),
    ]
    best = (0.0, None, None)
    for (t0, s0), (t1, s1) in zip(bounds, bounds[1:]):
        if t1 - t0 > best[0]:
            best = (t1 - t0, s0, s1)
    return best


def _proof(window: FaultWindow, *events: Event | None) -> list[Event]:
    proof: list[Event] = [window.inject, *[e for e in events if e is not None]]
    if window.heal is not None:
        proof.append(window.heal)
    return proof


@register_check
class Stall(SymptomCheck):
    """No training progress for at least min_s seconds inside the fault window."""

    name: ClassVar[str] = "stall"
    evidence: ClassVar[frozenset[str]] = frozenset({"steps"})
    min_s: float = Field(gt=0, description="seconds without a step event")
    scope: Literal["all", "any"] = Field(
        "all", description="all: no worker progressed; any: at least one worker did not"
    )

    def judge(self, timeline: Timeline) -> Verdict:
        steps = timeline.of(StepEvent)
        if not steps:
            raise Undecidable("no step event at all: a stall cannot be told from a run that never trained")
        window = self.window(timeline)
        if self.scope == "all":
            gap, before, after = longest_gap(steps, window)
            who = "any worker"
        else:
            gaps = {w: longest_gap(timeline.of(StepEvent, worker=w), window) for w in timeline.workers()}
            worker, (gap, before, after) = max(gaps.items(), key=lambda item: item[1][0])
            who = f"worker-{worker}"
        if gap >= self.min_s:
            return passed(
                f"no step from {who} for {gap:.1f} s in the fault window (>= {self.min_s:g} s)",
                _proof(window, before, after),
            )
        if window.duration < self.min_s:
            return unknown(
                f"the fault window lasted {window.duration:.1f} s, shorter than {self.min_s:g} s", _proof(window)
            )
        return failed(
            f"steps kept coming: the longest gap from {who} in the fault window was {gap:.1f} s < {self.min_s:g} s",
            _proof(window, before, after),
        )


@register_check
class Slowdown(SymptomCheck):
    """Median step time in the fault window is at least factor x the fault-free median before it."""

    name: ClassVar[str] = "slowdown"
    evidence: ClassVar[frozenset[str]] = frozenset({"steps"})
    timing_sensitive: ClassVar[bool] = True
    factor: float = Field(2.0, gt=1, description="required ratio of medians")
    min_samples: int = Field(3, ge=1, description="step times needed on each side to judge")
    workers: list[int] | None = Field(None, description="each of these must slow down; default: all steps together")

    def judge(self, timeline: Timeline) -> Verdict:
        if self.workers is None:
            return self._judge(timeline, None)
        verdicts = [self._judge(timeline, w) for w in self.workers]
        worst = next((v for v in verdicts if not v.passed), None)
        if worst is not None:
            return worst
        return passed("; ".join(v.reason for v in verdicts), [e for v in verdicts for e in v.evidence][:6])

    def _judge(self, timeline: Timeline, worker: int | None) -> Verdict:
        window = self.window(timeline)
        durations = timeline.step_durations(worker)
        who = "" if worker is None else f"worker-{worker}: "
        before = [d for e, d in durations if e.t < window.start]
        # From when the fault had landed (its inject completed): a fault whose inject
        # takes seconds (a helper container in the worker's namespace under load:
        # 0.3-9 s, chaos.faults.packet) would otherwise count the normal steps taken
        # meanwhile (measured: 50 of 68 steps in the window of a 20 % packet loss).
        landed = max(window.start, window.inject.completed_t or window.start)
        during = [(e, d) for e, d in durations if e.t - d >= landed and e.t <= window.end]
        if len(before) < self.min_samples:
            raise Undecidable(
                f"only {len(before)} step times before the fault (need {self.min_samples}) for a baseline"
            )
        if len(during) < self.min_samples:
            raise Undecidable(
                f"only {len(during)} step times inside the fault window (need {self.min_samples})", _proof(window)
            )
        base = statistics.median(before)
        slow = statistics.median(d for _, d in during)
        ratio = slow / base if base > 0 else float("inf")
        proof = _proof(window, during[0][0], during[-1][0])
        summary = (
            f"{who}median step time {slow * 1000:.0f} ms in the window vs {base * 1000:.0f} ms before ({ratio:.1f}x)"
        )
        if ratio >= self.factor:
            return passed(f"{summary} >= {self.factor:g}x", proof)
        return failed(f"{summary} < {self.factor:g}x", proof)


@register_check
class HangAtBringUp(SymptomCheck):
    """No step at all for at least min_s seconds after the workers started, while the fault was active."""

    name: ClassVar[str] = "hang_at_bring_up"
    evidence: ClassVar[frozenset[str]] = frozenset({"steps", "start"})
    min_s: float = Field(gt=0, description="seconds without any step after every worker started")
    missing: list[int] | None = Field(
        None,
        description="these worker indices (and no other) must be the tasks TF's coordination service still "
        "waits for (its 'Example stragglers' log lines); default: not judged",
    )

    def judge(self, timeline: Timeline) -> Verdict:
        window = self.window(timeline)
        # The generation the fault was injected into: a worker made ahead may say it started
        # just before the inject, and a later generation (a restart after the heal) is not the one that hung.
        gen_start, gen_end = timeline.generation_bounds(window.start)
        starts = first_by_worker([e for e in timeline.of(StartEvent) if gen_start <= e.t < gen_end])
        if not starts:
            raise Undecidable("no worker emitted a start event after the inject", _proof(window))
        started = max(starts.values(), key=lambda e: e.t)  # when the last worker was up
        first_step = next((s for s in timeline.of(StepEvent) if started.t <= s.t < gen_end), None)
        if first_step is not None and first_step.t - started.t < self.min_s:
            return failed(
                f"step {first_step.step} came {first_step.t - started.t:.1f} s after the workers started: no hang",
                _proof(window, started, first_step),
            )
        if window.end - started.t < self.min_s:
            return unknown(
                f"the fault was active only {window.end - started.t:.1f} s after the workers started (< {self.min_s:g} s)",
                _proof(window, started),
            )
        hung_until = first_step.t if first_step else window.end
        # A hang means live workers making no progress; one that died is a crash.
        died = [
            e
            for e in timeline.events
            if isinstance(e, (ExitEvent, ErrorEvent)) and started.t <= e.t <= min(hung_until, started.t + self.min_s)
        ]
        if died:
            return failed(
                f"{died[0].source} {'exited' if isinstance(died[0], ExitEvent) else 'raised an error'} "
                f"{died[0].t - started.t:.1f} s after the workers started: a crash, not a hang",
                _proof(window, started, died[0]),
            )
        hung = hung_until - started.t
        # The fault's own generation only: after the heal, a redeployed chief
        # logs its (normal) start-up stragglers too.
        inside = [e for e in timeline.events if window.start <= e.t <= min(hung_until, window.end)]
        lines = [e for e in inside if isinstance(e, LogLine)]
        history = [e for e in timeline.events if e.t <= hung_until]
        said, proof = describe_stragglers(lines, inside, history)
        proof = [*_proof(window, started, first_step), *proof]
        what = f"no step for {hung:.1f} s after the workers started, with the fault active"
        if self.missing is not None:
            expected = {f"worker-{w}" for w in self.missing}
            named = missing_tasks(lines)
            if not named:
                raise Undecidable(
                    f"{what}, but no worker logged which tasks it waits for (TF's 'Example stragglers')", proof
                )
            if named != expected:
                return failed(f"{what}, but {said}; expected {', '.join(sorted(expected))}", proof)
        return passed(what + (f" ({said}, TF's log)" if said else ""), proof)
