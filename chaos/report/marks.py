"""What the timeline picture of a report shows, as plain values.

The figure (``timeline_figure``) draws these and the HTML page lists them in a
table beside it, so a person (or a test) can check every mark in text too.
Times are seconds since the first event of the run. Pure: no plotting here.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from chaos.events import (
    CheckpointEvent,
    DoneEvent,
    ErrorEvent,
    ExitEvent,
    RestartEvent,
    RestoredEvent,
    StartEvent,
    StepEvent,
)
from chaos.report.model import Report

# A slowdown is at least SLOW_RUN consecutive steps each over SLOW_FACTOR x the
# pre-fault median. Measured on real runs (docs/report.md): single steps of 10-40x
# the median are normal (an epoch end's backup), a 100 ms latency gives 20+ in a row.
SLOW_FACTOR = 3.0
SLOW_RUN = 3


@dataclass(frozen=True)
class Window:
    """A fault window (see ``Timeline.fault_windows``)."""

    index: int
    label: str  # e.g. "0: kill_worker on worker-1"
    start: float
    end: float
    open: bool  # never healed nor followed by a restart: ran to the end of the run


@dataclass(frozen=True)
class Mark:
    """One event drawn on a worker's lane, at its step when it happened."""

    kind: str  # error, exit, oom_kill, restart, restored, resumed, checkpoint_used, done, slow_step
    worker: int
    t: float
    step: int
    label: str


@dataclass(frozen=True)
class Lane:
    """One worker: its progress, its losses and its step times."""

    worker: int
    # (t, global step) with None between runs of the process, so a line breaks at a restart
    steps: list[tuple[float, int | None]]
    losses: list[tuple[float, float | None]]  # with the same breaks
    step_times: list[tuple[float, float]]  # (t of the step, seconds since the previous step)


@dataclass(frozen=True)
class Picture:
    lanes: list[Lane]
    windows: list[Window]
    marks: list[Mark]
    # The pace of an uninterrupted run: (t, step) from the first step at the
    # pre-fault median step time to the final step; empty when unknown.
    pace: list[tuple[float, float]]
    # The uninterrupted reference run's progress (t, step), its first step put at
    # this run's first step; empty when no reference was run (then: ``pace``).
    reference: list[tuple[float, float]]
    median_step_s: float | None
    final_step: int
    reference_final_loss: float | None
    duration: float

    @property
    def empty(self) -> bool:
        return not any(lane.steps for lane in self.lanes) and not self.marks and not self.windows


def _short(error_class: str) -> str:
    return error_class.rsplit(".", 1)[-1] or "error"


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def picture(report: Report) -> Picture:
    """Everything the figure draws, from the report's timeline."""
    timeline = report.timeline
    t0 = timeline.start or 0.0
    seen = {e.worker for e in timeline.events if e.worker is not None}
    workers = sorted(set(timeline.workers()) | seen)
    lanes = [_lane(timeline, w, t0) for w in workers]
    windows = [
        Window(w.index, f"{w.index}: {w.fault} on {w.inject.target}", w.start - t0, w.end - t0, w.open)
        for w in timeline.fault_windows()
    ]
    marks = [m for w in workers for m in _marks(timeline, w, t0)]
    median = _median_before_faults(timeline)
    marks += _slow_steps(lanes, median)
    final = timeline.info.final_step
    reference = _reference(lanes, timeline.info.reference_curve)
    pace = _pace(lanes, median, final) if windows and not reference else []
    ref_loss = timeline.info.reference_final_loss
    return Picture(
        lanes=lanes,
        windows=windows,
        marks=sorted(marks, key=lambda m: (m.t, m.worker)),
        pace=pace,
        reference=reference,
        median_step_s=median,
        final_step=final,
        reference_final_loss=ref_loss if _finite(ref_loss) else None,
        duration=(timeline.end or t0) - t0,
    )


def _lane(timeline, worker: int, t0: float) -> Lane:
    steps: list[tuple[float, int | None]] = []
    losses: list[tuple[float, float | None]] = []
    for e in timeline.events:
        if e.worker != worker:
            continue
        if isinstance(e, (RestartEvent, StartEvent)) and steps and steps[-1][1] is not None:
            steps.append((e.t - t0, None))  # a new process: do not join its line to the last one
            losses.append((e.t - t0, None))
        elif isinstance(e, StepEvent):
            steps.append((e.t - t0, e.step))
            if _finite(e.loss):
                losses.append((e.t - t0, float(e.loss)))
    step_times = [(e.t - t0, d) for e, d in timeline.step_durations(worker) if _finite(d)]
    return Lane(worker, steps, losses, step_times)


def _step_at(timeline, worker: int, t: float) -> int:
    """The worker's last reported global step at time ``t`` (0 before any)."""
    last = 0
    for e in timeline.events:
        if e.t > t:
            break
        if e.worker == worker and isinstance(e, (StepEvent, RestoredEvent)):
            last = e.step
    return last


def _marks(timeline, worker: int, t0: float) -> list[Mark]:
    out: list[Mark] = []

    def mark(kind: str, e, label: str, step: int | None = None) -> None:
        out.append(Mark(kind, worker, e.t - t0, _step_at(timeline, worker, e.t) if step is None else step, label))

    restored_steps = {e.step for e in timeline.of(RestoredEvent, worker)}
    pending_resume = finished = False
    for e in timeline.events:
        if e.worker != worker:
            continue
        if isinstance(e, (StartEvent, RestartEvent)):
            finished = False
        if isinstance(e, ErrorEvent):
            mark("error", e, _short(e.error_class))
        elif isinstance(e, ExitEvent):
            if e.exit_code == 0 and finished:
                continue  # the normal end of a worker that said done
            if e.oom_killed:
                mark("oom_kill", e, f"OOM kill (exit {e.exit_code})")
            else:
                mark("exit", e, f"exit {e.exit_code}")
        elif isinstance(e, RestartEvent):
            mark("restart", e, "restart" + (f" ({e.reason})" if e.reason else ""))
        elif isinstance(e, RestoredEvent):
            where = e.checkpoint.rstrip("/").rsplit("/", 1)[-1] if e.checkpoint else "checkpoint"
            mark("restored", e, f"restored {where} (epoch {e.epoch}, step {e.step})", step=e.step)
            pending_resume = True
        elif isinstance(e, StepEvent) and pending_resume:
            mark("resumed", e, f"resumed at step {e.step}", step=e.step)
            pending_resume = False
        elif isinstance(e, CheckpointEvent) and e.step in restored_steps:
            mark("checkpoint_used", e, f"checkpoint saved at step {e.step}, later restored", step=e.step)
        elif isinstance(e, DoneEvent):
            mark("done", e, f"done at step {e.step}", step=e.step)
            finished = True
    return out


def _median_before_faults(timeline) -> float | None:
    windows = timeline.fault_windows()
    cut = windows[0].start if windows else float("inf")
    durations = [d for e, d in timeline.step_durations() if e.t < cut and _finite(d)]
    return statistics.median(durations) if durations else timeline.median_step_time()


def _slow_steps(lanes: list[Lane], median: float | None) -> list[Mark]:
    """One mark per run of at least SLOW_RUN consecutive steps that each took
    more than SLOW_FACTOR x the pre-fault median (a slow phase is one label, not fifty)."""
    if not median:
        return []
    out = []
    for lane in lanes:
        steps = {t: s for t, s in lane.steps if s is not None}
        run: list[tuple[float, float]] = []
        for t, d in [*lane.step_times, (math.inf, 0.0)]:
            if d > SLOW_FACTOR * median:
                run.append((t, d))
                continue
            if len(run) >= SLOW_RUN:
                worst = max(d for _, d in run)
                t_first = run[0][0]
                out.append(
                    Mark(
                        "slow_step",
                        lane.worker,
                        t_first,
                        steps.get(t_first, 0),
                        f"{len(run)} slow steps (up to {worst:.2f} s, median {median:.2f} s)",
                    )
                )
            run = []
    return out


def _reference(lanes: list[Lane], curve) -> list[tuple[float, float]]:
    firsts = [t for lane in lanes for t, s in lane.steps[:1] if s is not None]
    if not curve or not firsts:
        return []
    t = min(firsts)
    return [(t + dt, float(step)) for dt, step, _ in curve]


def _pace(lanes: list[Lane], median: float | None, final: int) -> list[tuple[float, float]]:
    firsts = [(t, s) for lane in lanes for t, s in lane.steps[:1] if s is not None]
    if not median or not firsts or final <= 0:
        return []
    t, s = min(firsts)
    return [(t, float(s)), (t + (final - s) * median, float(final))]
