"""The symptom of a non-finite value in one worker's input or gradient: under
MWMS the gradients are all-reduced, so every worker's weights turn NaN or inf,
and so, on most CPUs, every loss (with TF's oneDNN ops on, the fused Dense+ReLU
maps a NaN pre-activation to 0 and the loss stays finite: non_finite_weights).
Where it began shows in the local losses: at the first bad step only the
poisoned worker's own loss is non-finite (the others' were computed with the
weights from before the all-reduce)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from chaos.checks.base import SymptomCheck, register_check
from chaos.checks.select import first_by_worker, last_by_worker, names, short_digest
from chaos.checks.verdict import Undecidable, Verdict, failed, passed
from chaos.events import DoneEvent, ExitEvent, StepEvent
from chaos.timeline import Timeline
from chaos.workload.evidence import Evidence


def finite(value: float) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def loss_not_finite(e: StepEvent) -> bool:
    return e.loss_reported and not finite(e.loss)


def weights_not_finite(e: StepEvent) -> bool:
    return e.weights_finite is False  # None: not reported


def first_non_finite(
    steps: list[StepEvent], bad: Callable[[StepEvent], bool] = loss_not_finite
) -> dict[int, StepEvent]:
    """worker -> its first step event that is ``bad`` (by default: its global loss is not finite)."""
    out: dict[int, StepEvent] = {}
    for e in steps:
        if e.worker is not None and e.worker not in out and bad(e):
            out[e.worker] = e
    return out


def together(bad: dict[int, StepEvent]) -> str:
    return "at the same step" if len({e.step for e in bad.values()}) == 1 else "not at the same step"


def at_step(steps: list[StepEvent], step: int) -> dict[int, StepEvent]:
    """worker -> its first event with this step number."""
    out: dict[int, StepEvent] = {}
    for e in steps:
        if e.step == step and e.worker is not None:
            out.setdefault(e.worker, e)
    return out


def origin(row: dict[int, StepEvent], has_local_loss: bool) -> str:
    """Where the non-finite value began, said from the local losses of the first bad step."""
    if not has_local_loss:
        return "which worker it began on cannot be seen: the workload reports no local loss"
    bad = sorted(w for w, e in row.items() if not finite(e.local_loss))
    good = sorted(w for w, e in row.items() if finite(e.local_loss))
    if bad and good:
        theirs = ", ".join(f"worker-{w}'s {row[w].local_loss:.6g}" for w in good)
        mine = ", ".join(f"{row[w].local_loss}" for w in bad)
        verb = "was" if len(good) == 1 else "were"
        return f"it began on {names(bad)} (local loss {mine}, while {theirs} {verb} finite)"
    if bad:
        return f"every worker's local loss was non-finite at once ({names(bad)}): where it began cannot be seen"
    return "every local loss was still finite: the non-finite value came from the all-reduce"


@dataclass(frozen=True)
class Watched:
    """What a non-finite check watches, as its reasons say it."""

    had: str  # "a non-finite loss"
    stayed: str  # "it stayed finite"
    report: str  # what a silent worker did not send: "step"
    what: str  # "loss"
    shown: Callable[[StepEvent], str]  # the value beside a worker's last step


LOSS = Watched("a non-finite loss", "it stayed finite", "step", "loss", lambda e: f" (loss {e.loss:.6g})")
WEIGHTS = Watched("non-finite weights", "they stayed finite", "weights check", "weights", lambda e: "")


def not_every_worker(
    timeline: Timeline, window, steps: list[StepEvent], bad: dict[int, StepEvent], watched: Watched
) -> Verdict | None:
    """Fail when the non-finite value reached only some workers; unknown when a
    worker said nothing in the window; None when it reached every worker."""
    seen = {e.worker for e in steps}
    stayed = [w for w in timeline.workers() if w not in bad and w in seen]
    if stayed:
        finals = {w: [e for e in steps if e.worker == w][-1] for w in stayed}
        detail = ", ".join(f"worker-{w} through step {e.step}{watched.shown(e)}" for w, e in finals.items())
        return failed(
            f"only {names(sorted(bad))} had {watched.had}; {watched.stayed} on {detail}: it did not spread",
            [window.inject, *bad.values(), *finals.values()],
        )
    silent = [w for w in timeline.workers() if w not in seen]
    if silent:
        raise Undecidable(
            f"{names(silent)} reported no {watched.report} in the fault window: "
            f"whether its {watched.what} turned non-finite cannot be seen",
            [window.inject, *bad.values()],
        )
    return None


@register_check
class NonFiniteLoss(SymptomCheck):
    """Every worker's loss became non-finite (NaN or inf) in the fault window; names the first step and, from the local losses, the worker where it began."""

    name: ClassVar[str] = "non_finite_loss"
    evidence: ClassVar[frozenset[str]] = frozenset({"steps"})

    def judge(self, timeline: Timeline) -> Verdict:
        window = self.window(timeline)
        steps = timeline.between(window.start, window.end).of(StepEvent)
        if not steps:
            raise Undecidable("no training step in the fault window: no loss to judge", [window.inject])
        bad = first_non_finite(steps)
        if not bad:
            last = steps[-1]
            return failed(
                f"every loss stayed finite over {len(steps)} step events in the fault window "
                f"(last: {last.source} step {last.step} loss {last.loss:.6g})",
                [window.inject, last],
            )
        unspread = not_every_worker(timeline, window, steps, bad, LOSS)
        if unspread is not None:
            return unspread
        first = min(e.step for e in bad.values())
        row = at_step(steps, first)
        when = ", ".join(f"worker-{w} at step {e.step} ({e.loss})" for w, e in sorted(bad.items()))
        has_local = Evidence.LOCAL_LOSS.value in timeline.info.evidence
        return passed(
            f"every worker's loss became non-finite, {together(bad)}: {when}; {origin(row, has_local)}",
            [window.inject, *row.values(), *bad.values()],
        )


def what_the_loss_said(bad: dict[int, StepEvent]) -> str:
    """Whether the loss showed it at the step the weights went bad."""
    finite_loss = sorted(w for w, e in bad.items() if finite(e.loss))
    if not finite_loss:
        return "the loss was non-finite there too"
    losses = ", ".join(f"worker-{w}'s {bad[w].loss:.6g}" for w in finite_loss)
    return f"the loss did not show it ({losses}: finite), so a NaN check on the loss would not fire"


@register_check
class NonFiniteWeights(SymptomCheck):
    """Every worker's weights became non-finite (NaN or inf) in the fault window, whatever the loss shows (with TF's oneDNN fused Dense+ReLU a NaN weight can give a finite loss); names the first step and what the loss said there."""

    name: ClassVar[str] = "non_finite_weights"
    evidence: ClassVar[frozenset[str]] = frozenset({"steps", "weights_finite"})

    def judge(self, timeline: Timeline) -> Verdict:
        window = self.window(timeline)
        steps = timeline.between(window.start, window.end).of(StepEvent)
        if not steps:
            raise Undecidable("no training step in the fault window: no weights to judge", [window.inject])
        reported = [e for e in steps if e.weights_finite is not None]
        if not reported:
            raise Undecidable("no step event in the fault window says whether the weights were finite", [window.inject])
        bad = first_non_finite(reported, weights_not_finite)
        if not bad:
            last = reported[-1]
            return failed(
                f"every worker's weights stayed finite over {len(reported)} step events in the fault window "
                f"(last: {last.source} step {last.step})",
                [window.inject, last],
            )
        unspread = not_every_worker(timeline, window, reported, bad, WEIGHTS)
        if unspread is not None:
            return unspread
        when = ", ".join(f"worker-{w} after step {e.step}" for w, e in sorted(bad.items()))
        return passed(
            f"every worker's weights became non-finite, {together(bad)}: {when}; {what_the_loss_said(bad)}",
            [window.inject, *bad.values()],
        )


@register_check
class StoppedAtNonFiniteLoss(SymptomCheck):
    """Every worker stopped at its first non-finite loss (as TerminateOnNaN does), reported done there and exited 0: the job ends as a success, on NaN weights, and nothing restarts it."""

    name: ClassVar[str] = "stopped_at_non_finite_loss"
    # Exit 0 is success to every orchestrator: this is how recovery fails.
    states_failed_recovery: ClassVar[bool] = True
    evidence: ClassVar[frozenset[str]] = frozenset({"steps", "done"})

    def judge(self, timeline: Timeline) -> Verdict:
        window = self.window(timeline)
        inside = timeline.between(window.start, window.end)
        steps = inside.of(StepEvent)
        if not steps:
            raise Undecidable("no training step in the fault window: no loss to judge", [window.inject])
        bad = first_non_finite(steps)
        last = last_by_worker(steps)
        silent = [w for w in timeline.workers() if w not in last]
        if silent:
            raise Undecidable(f"{names(silent)} reported no step in the fault window", [window.inject])
        finite_only = [w for w in timeline.workers() if w not in bad]
        if finite_only:
            return failed(
                f"the loss of {names(finite_only)} never became non-finite: nothing to stop at",
                [window.inject, *(last[w] for w in finite_only)],
            )
        went_on = {w: e for w, e in last.items() if e.step > bad[w].step}
        if went_on:
            detail = ", ".join(
                f"worker-{w} to step {e.step} (non-finite from step {bad[w].step})" for w, e in sorted(went_on.items())
            )
            return failed(f"training went on past the non-finite loss: {detail}", [*bad.values(), *went_on.values()])
        done = first_by_worker(inside.of(DoneEvent))
        exits = first_by_worker(inside.of(ExitEvent))
        not_done = [w for w in timeline.workers() if w not in done]
        if not_done:
            return failed(
                f"{names(not_done)} stopped at the non-finite loss but never reported done",
                [*bad.values(), *exits.values()],
            )
        unexited = [w for w in timeline.workers() if w not in exits]
        if unexited:
            raise Undecidable(f"{names(unexited)} did not exit in the fault window", [*bad.values(), *done.values()])
        failing = {w: e for w, e in exits.items() if e.exit_code != 0}
        if failing:
            detail = ", ".join(f"worker-{w} exit {e.exit_code}" for w, e in sorted(failing.items()))
            return failed(f"stopped at the non-finite loss, but not as a success: {detail}", list(failing.values()))
        where = ", ".join(
            f"worker-{w} at step {bad[w].step} (done, weights {short_digest(done[w].weights_digest)})"
            for w in sorted(bad)
        )
        return passed(
            f"every worker stopped at its first non-finite loss, reported done there and exited 0: {where}",
            [*bad.values(), *done.values(), *exits.values()],
        )


def non_finite_at_end(timeline: Timeline) -> tuple[str, list[StepEvent]]:
    """Whether training ended on non-finite weights, said from each worker's last
    step: a NaN loss there, or the step's own report that a weight is not finite
    (the loss can stay finite on NaN weights with oneDNN's fused ReLU), means the
    weights the done event digests are not finite (NaN weights hash alike on every
    worker, so equal digests alone would pass them)."""
    last: dict[int, StepEvent] = {}
    for e in timeline.of(StepEvent):
        if e.worker is not None:
            last[e.worker] = e
    bad = {
        w: e
        for w, e in sorted(last.items())
        if (e.loss_reported and not (finite(e.loss) and finite(e.local_loss))) or weights_not_finite(e)
    }
    if not bad:
        return "", []
    detail = ", ".join(
        f"worker-{w}'s last step {e.step} had loss {e.loss}"
        + (" and non-finite weights" if weights_not_finite(e) else "")
        for w, e in bad.items()
    )
    return detail, list(bad.values())
