"""What one cell's timeline shows inside its fault window, judged as every check of this
framework is (``chaos.checks.verdict.Verdict``): does the job stay bounded under the
cell's fault, or hang silently?

* pass: it is bounded. It erred or exited (``outcome`` ``error``), or trained on, at its
  speed (``normal``), slowed (``slowed``), or with no fault-free steps to compare with
  (``progress``);
* fail: a silent hang (``outcome`` ``hang``), no step and no error for ``HANG_S``;
* unknown: not judged (``outcome`` ``not judged``): the run broke, or the fault was
  never injected.

The verdict's evidence is the inject, then the first sign (the first error, failed exit or
step after the fault landed) or, for a hang, the last step before the quiet.
"""

from __future__ import annotations

import statistics

from chaos.checks.verdict import Status, Verdict
from chaos.events import DoneEvent, ErrorEvent, ExitEvent, HealEvent, InjectEvent, LogLine, StepEvent
from chaos.report.model import Report
from chaos.stragglers import describe_stragglers

SLOWED = 1.5  # median step time in the window / before: at or above, "slowed"
HANG_S = 10.0  # no step and no error this long inside the window: a hang (a heartbeat timeout is 10 s)


CHECK = "bounded"  # the matrix's one question of a cell


def _judged(outcome: str, detail: str, evidence: tuple = ()) -> Verdict:
    """The cell's verdict: ``detail`` (the error class and first line, the factor, or why
    not judged) is its reason; ``outcome`` its ``params``."""
    status = {"hang": Status.FAIL, "not judged": Status.UNKNOWN}.get(outcome, Status.PASS)
    return Verdict(status, detail, tuple(evidence), check=CHECK, role="matrix", params={"outcome": outcome})


def outcome(verdict: Verdict) -> str:
    return verdict.params["outcome"]


def first_sign_s(verdict: Verdict) -> float | None:
    """Inject -> the first error, exit or step in the window; a hang or an unjudged cell has none."""
    if outcome(verdict) in ("hang", "not judged") or len(verdict.evidence) < 2:
        return None
    inject, sign = verdict.evidence[:2]
    return sign.t - inject.t


def bit_exact(report: Report) -> str:
    """yes | no | unknown: the run's own ``matches_uninterrupted`` verdict, when it has one."""
    status = next((v.status for v in report.verdicts if v.check == "matches_uninterrupted"), None)
    return {Status.PASS: "yes", Status.FAIL: "no"}.get(status, "unknown")


NOISE = (
    "Graph execution error",
    "Detected at node",
    "File ",
    "Additional GRPC error",
    ":UNKNOWN:",
    "The error could be",
)


def _first_line(message: str) -> str:
    """The line that says what happened: TF's message starts with where the op was
    defined (a traceback), the cause comes after it."""
    lines = [line.strip() for line in message.splitlines()]
    useful = [line for line in lines if line and not line.startswith(NOISE)]
    return (useful[0] if useful else message.strip())[:120]


def missing_party(window: list, steps: list[StepEvent], workers: int) -> str:
    """A hang's missing party: the tasks a coordination service logged as not
    connected; else each worker's last step by the window's end (a collective with no
    deadline names nobody, and every worker then stops at the same step)."""
    said, _ = describe_stragglers([e for e in window if isinstance(e, LogLine)])
    if said:
        return said
    last = {w: max((e.step for e in steps if e.worker == w), default=None) for w in range(workers)}
    if all(step is None for step in last.values()):
        return "no task named missing in the logs, and no worker stepped"
    shown = ", ".join(f"worker-{w} {'none' if s is None else f'step {s}'}" for w, s in last.items())
    return f"no task named missing in the logs; last steps: {shown}"


def judge_cell(report: Report) -> Verdict:
    """The cell's verdict (see the module's text) from its run's report."""
    timeline = report.timeline
    injects = timeline.of(InjectEvent)
    if report.status is Status.ERROR or not injects:
        return _judged("not judged", report.error or "the fault was never injected")
    inject = injects[0]
    t0 = inject.t
    heals = [h.t for h in timeline.of(HealEvent) if h.t >= t0]
    t1 = heals[0] if heals else timeline.end
    done = {e.worker: e.t for e in timeline.of(DoneEvent) if t0 <= e.t <= t1}
    if len(done) == timeline.info.num_workers:
        t1 = max(done.values())  # training finished inside the window: it ends there
    window = [e for e in timeline.events if t0 <= e.t <= t1]
    errors = [e for e in window if isinstance(e, ErrorEvent)]
    if errors:
        first = errors[0]
        return _judged(
            "error", f"{first.error_class.rsplit('.', 1)[-1]}: {_first_line(first.message)}", (inject, first)
        )
    exits = [e for e in window if isinstance(e, ExitEvent) and e.exit_code != 0]
    if exits:
        return _judged(
            "error", f"worker-{exits[0].worker} exited {exits[0].exit_code} with no error", (inject, exits[0])
        )
    durations = timeline.step_durations()
    # The fault-free step time: before the fault; for a fault applied at bring-up, after its heal.
    before = [d for e, d in durations if e.t < t0] or [d for e, d in durations if e.t > t1]
    # Step times from when the fault had landed (its inject completed): a packet
    # fault's helper took 4.2 s to land under load, and the 208 normal steps taken
    # meanwhile made a 51x slowdown read x1.3 (chaos/faults/packet.py).
    landed = max(t0, injects[0].completed_t or t0)
    during = [(e, d) for e, d in durations if landed <= e.t <= t1]
    steps = [e for e in window if isinstance(e, StepEvent)]
    last = max((e.t for e in steps), default=t0)
    if t1 - last >= HANG_S:
        # The steps in flight when the fault landed may still finish; a hang is
        # the window going quiet after them, with no error.
        missing = missing_party(window, [e for e in timeline.of(StepEvent) if e.t <= t1], timeline.info.num_workers)
        if not steps:
            return _judged("hang", f"no step and no error for {t1 - t0:.0f} s; {missing}", (inject,))
        return _judged(
            "hang",
            f"no error; last step {last - t0:+.1f} s after the inject, then none for {t1 - last:.0f} s; {missing}",
            (inject, max(steps, key=lambda e: e.t)),
        )
    if not steps:
        return _judged(
            "not judged", f"no step and no error in a window of {t1 - t0:.0f} s, under the {HANG_S:g} s a hang needs"
        )
    if not during or not before:
        # Trained on (to the end, here) with no fault-free steps in this run to compare with.
        return _judged(
            "progress", f"{len(steps)} step events in the window, no fault-free steps to compare", (inject, steps[0])
        )
    factor = statistics.median(d for _, d in during) / statistics.median(before)
    return _judged("slowed" if factor >= SLOWED else "normal", f"step time x{factor:.1f}", (inject, during[0][0]))
