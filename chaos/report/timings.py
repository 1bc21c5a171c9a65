"""Phase timings measured from the timeline."""

from __future__ import annotations

from chaos.checks.verdict import Verdict
from chaos.events import RUNNER, ErrorEvent, ExitEvent, InjectEvent, PhaseEvent, StepEvent
from chaos.report.model import PhaseTimings
from chaos.timeline import Timeline


def _phase(timeline: Timeline, name: str) -> float | None:
    return next((e.t for e in timeline.of(PhaseEvent) if e.phase == name), None)


def phase_timings(timeline: Timeline, verdicts: list[Verdict] = ()) -> PhaseTimings:
    if not timeline.events:
        return PhaseTimings()
    steps = timeline.of(StepEvent)
    begin = _phase(timeline, "bring_up")
    begin = timeline.start if begin is None else begin
    training = _phase(timeline, "training")
    training = (steps[0].t if steps else None) if training is None else training
    bring_up = training - begin if training is not None and begin is not None else None

    to_symptom = None
    injects = timeline.of(InjectEvent)
    if injects:
        t0 = injects[0].t
        # The first error or exit; for symptoms with neither (a slowdown), the
        # earliest worker event a passing symptom check gave as proof.
        signs = [e.t for e in timeline.events if isinstance(e, (ErrorEvent, ExitEvent)) and e.t >= t0]
        if not signs:
            signs = [
                e.t
                for v in verdicts
                if v.role == "expect" and v.passed
                for e in v.evidence
                if e.source != RUNNER and e.t >= t0
            ]
        to_symptom = min(signs) - t0 if signs else None

    to_recover = None
    start = timeline.recovery_start()
    if start is not None:
        first = next((s for s in steps if s.t > start), None)
        to_recover = first.t - start if first else None

    return PhaseTimings(
        bring_up_s=bring_up,
        time_to_symptom_s=to_symptom,
        time_to_recover_s=to_recover,
        # From bring-up: a scenario prepared ahead waited for its turn (chaos.runner.suite),
        # and that wait is not its own time.
        total_s=timeline.end - begin,
    )
