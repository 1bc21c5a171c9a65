"""Symptoms of a fault in the checkpoint path, which show only at the restart:
the restore fails with a named error, and the restart policy gives up.

They are symptom checks (``expect:``) although judged after the restart: the
fault's window closes at the restart, but a damaged backup shows itself only
when it is read back. Each states how recovery failed
(``states_failed_recovery``), so a scenario that asserts a failure to recover
needs no ``recover:`` checks (which would judge a run that never completed).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from chaos.checks.base import SymptomCheck, register_check
from chaos.checks.select import first_by_worker, names
from chaos.checks.symptom_errors import ErrorRaised
from chaos.checks.verdict import Undecidable, Verdict, failed, passed
from chaos.events import DoneEvent, ErrorEvent, Event, ExitEvent, RestartEvent, StepEvent
from chaos.registry import MAX_SECONDS
from chaos.timeline import FaultWindow, Timeline

# What ends a restart round: anything a new generation does.
_GENERATION = (ExitEvent, ErrorEvent, StepEvent, DoneEvent)


def restart_rounds(events: list[Event]) -> list[list[RestartEvent]]:
    """Restart events grouped by round: a round is the restarts with nothing a
    restarted worker did (exit, error, step, done) between them. An exit or error of
    a worker not yet restarted in the round is its old generation's end, not the new
    one's: an orchestrator restarts each failed worker as it exits (cluster.recovery.by),
    so a peer that fails later exits after the first restart of the same round."""
    rounds: list[list[RestartEvent]] = []
    restarted: set = set()
    open_round = False
    for event in events:
        if isinstance(event, RestartEvent):
            if not open_round:
                rounds.append([])
                restarted = set()
            rounds[-1].append(event)
            restarted.add(event.worker)
            open_round = True
        elif isinstance(event, _GENERATION) and (
            isinstance(event, (StepEvent, DoneEvent)) or event.worker in restarted
        ):
            open_round = False
    return rounds


def _rounds_after(timeline: Timeline, t: float) -> list[list[RestartEvent]]:
    return restart_rounds([e for e in timeline.events if e.t >= t])


def first_generation_after(timeline: Timeline, window: FaultWindow, nothing: str) -> tuple[RestartEvent, list[Event]]:
    """The first restart after the fault's inject and the events of the generation it
    started (up to the next restart round); Undecidable (``nothing``) without one."""
    rounds = _rounds_after(timeline, window.start)
    if not rounds:
        raise Undecidable(nothing, [window.inject])
    restart = rounds[0][0]
    end = rounds[1][0].t if len(rounds) > 1 else float("inf")
    return restart, [e for e in timeline.events if restart.t <= e.t < end]


@register_check
class RestoreFailed(ErrorRaised):
    """After the first restart that follows the fault, workers fail with a named error before any training step."""

    states_failed_recovery: ClassVar[bool] = True
    name: ClassVar[str] = "restore_failed"
    within_s: float = Field(
        120.0, gt=0, le=MAX_SECONDS, description="seconds after the first restart that follows the inject"
    )

    def judge(self, timeline: Timeline) -> Verdict:
        restart, generation = first_generation_after(
            timeline, self.window(timeline), "nothing was restarted after the fault: no restore was attempted"
        )
        steps = [e for e in generation if isinstance(e, StepEvent)]
        if steps:
            return failed(
                f"training resumed after the restart (worker-{steps[0].worker} at step {steps[0].step}): "
                "the restore did not fail",
                [restart, steps[0]],
            )
        errors = [e for e in generation if isinstance(e, ErrorEvent) and e.t <= restart.t + self.within_s]
        hits = [e for e in errors if self.matches(e)]
        wanted = f"{' or '.join(self.classes)} matching /{self.message}/"
        targets = self.workers or sorted({e.worker for e in hits})
        missing = [w for w in targets if not any(h.worker == w for h in hits)]
        if not hits or missing:
            who = f"{names(missing)} raised no" if missing else "no worker raised"
            return failed(
                f"{who} {wanted} within {self.within_s:g} s of the restart ({len(errors)} errors in all)",
                [restart, *[e for e in errors if e not in hits][:3]],
            )
        first = {w: next(h for h in hits if h.worker == w) for w in targets}
        return passed(
            f"the restore failed: {names(targets)} raised {wanted} "
            f"{max(h.t for h in first.values()) - restart.t:.1f} s after the restart, before any step",
            [restart, *first.values()],
        )


@register_check
class RestartsExhausted(SymptomCheck):
    """The runner restarted exactly ``restarts`` times after the fault, then stopped: the last generation failed too."""

    states_failed_recovery: ClassVar[bool] = True
    name: ClassVar[str] = "restarts_exhausted"
    restarts: int = Field(1, ge=1, le=10, description="restart rounds expected after the inject (the max_restarts)")

    def judge(self, timeline: Timeline) -> Verdict:
        window = self.window(timeline)
        rounds = _rounds_after(timeline, window.start)
        proof = [window.inject, *[r[0] for r in rounds]]
        if len(rounds) != self.restarts:
            more = "kept restarting" if len(rounds) > self.restarts else "stopped early"
            return failed(
                f"{len(rounds)} restart rounds after the inject, expected {self.restarts}: the runner {more}", proof
            )
        last = [e for e in timeline.events if e.t >= rounds[-1][0].t]
        done = [e for e in last if isinstance(e, DoneEvent)]
        if done:
            return failed(
                f"training completed after restart {len(rounds)} ({names(sorted({d.worker for d in done}))} "
                "reported done): the restart budget was not what stopped it",
                [*proof, done[0]],
            )
        exits = {e.worker: e for e in last if isinstance(e, ExitEvent)}
        bad = {w: e for w, e in exits.items() if e.exit_code != 0}
        if not bad:
            return failed(f"no worker failed after restart {len(rounds)}: nothing exhausted the restarts", proof)
        codes = ", ".join(f"worker-{w} exit {e.exit_code}" for w, e in sorted(bad.items()))
        return passed(
            f"restarted {len(rounds)} time(s), then stopped: the last generation failed ({codes})",
            [*proof, *bad.values()],
        )


@register_check
class CheckpointsDisagree(SymptomCheck):
    """After the first restart that follows the fault, the workers restored different backups (each one named)."""

    states_failed_recovery: ClassVar[bool] = True
    name: ClassVar[str] = "checkpoints_disagree"
    evidence: ClassVar[frozenset[str]] = frozenset({"restored"})

    def judge(self, timeline: Timeline) -> Verdict:
        restart, events = first_generation_after(
            timeline, self.window(timeline), "nothing was restarted after the fault: no restore happened"
        )
        generation = Timeline(timeline.info, events)
        restored = first_by_worker(generation.restored())
        # A worker that started training with no restored event restored nothing: it began at step 0.
        fresh = {s.worker for s in generation.of(StepEvent) if s.worker not in restored and s.step == 1}
        where = {w: f"{r.checkpoint or '?'} at step {r.step}" for w, r in restored.items()}
        where.update({w: "no backup (started at step 0)" for w in fresh})
        detail = "; ".join(f"worker-{w}: {text}" for w, text in sorted(where.items()))
        proof = [restart, *restored.values()]
        if len(where) < 2:
            return failed(f"fewer than two workers said where they resumed ({detail or 'none did'})", proof)
        if len(set(where.values())) == 1:
            return failed(f"every worker restored the same backup ({detail})", proof)
        return passed(f"the workers restored different backups: {detail}", proof)
