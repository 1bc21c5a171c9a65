"""The figures a comparison looks at, read from one scenario's report."""

from __future__ import annotations

import statistics

from chaos.events import InjectEvent, RestartEvent, RestoredEvent, StartEvent, StepEvent
from chaos.report.model import Report

# name -> (label, unit); larger is worse for every one of them.
METRICS = {
    "time_to_symptom_s": ("time to symptom", "s"),
    "time_to_recover_s": ("time to recover", "s"),
    "steps_lost": ("steps lost", "steps"),
    "step_time_ms": ("fault-free step time", "ms"),
    "bring_up_s": ("bring-up", "s"),
}


def figures(report: Report) -> dict[str, float]:
    """Each metric the report can give (a metric it cannot give is absent, never 0)."""
    out: dict[str, float] = {}
    t = report.timings
    for name, value in (
        ("time_to_symptom_s", t.time_to_symptom_s),
        ("time_to_recover_s", t.time_to_recover_s),
        ("bring_up_s", t.bring_up_s),
    ):
        if value is not None:
            out[name] = value
    lost = steps_lost(report)
    if lost is not None:
        out["steps_lost"] = float(lost)
    step = fault_free_step_time_ms(report)
    if step is not None:
        out["step_time_ms"] = step
    return out


def steps_lost(report: Report) -> int | None:
    """Steps done before the first restart that training had to do again."""
    timeline = report.timeline
    restarts = timeline.of(RestartEvent)
    if not restarts:
        return None
    first = restarts[0].t
    before = [e.step for e in timeline.of(StepEvent) if e.t < first]
    restored = [e.step for e in timeline.of(RestoredEvent) if e.t >= first]
    if not before:
        return None
    return max(before) - (min(restored) if restored else 0)


def fault_free_step_time_ms(report: Report) -> float | None:
    """Median interval between the chief's steps before the first fault."""
    timeline = report.timeline
    injects = timeline.of(InjectEvent)
    end = injects[0].t if injects else float("inf")
    steps = [e.t for e in timeline.of(StepEvent) if e.worker == 0 and e.t < end]
    gaps = [b - a for a, b in zip(steps, steps[1:])]
    return statistics.median(gaps) * 1000 if len(gaps) >= 3 else None


def environment(report: Report) -> dict[str, str]:
    """worker-0's fingerprint and versions in its first start event (empty if it never started)."""
    starts = [e for e in report.timeline.of(StartEvent) if e.worker == 0]
    if not starts:
        return {}
    s = starts[0]
    return {"tf_version": s.tf_version, "keras_version": s.keras_version, **s.fingerprint}
