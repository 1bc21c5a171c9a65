"""A sample plugin: one fault and two checks of your own, loaded like the built-in ones.

docs/write-a-fault.md and docs/write-a-check.md walk through this file. Load it with

    PYTHONPATH=examples/plugins TFCHAOS_PLUGINS=tfchaos_samples chaos list

or, from a package, with an entry point in the group ``tfchaos.plugins``.
tests/unit/docs/test_guide_samples.py loads it, validates a scenario that uses it,
injects the fault into the unit tests' fake cluster and judges hand-built timelines.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from chaos.backends.abilities import Freezing
from chaos.backends.base import ClusterControl
from chaos.checks.base import RecoveryCheck, SymptomCheck, register_check
from chaos.checks.verdict import Verdict, failed, passed
from chaos.events import RestartEvent, StepEvent
from chaos.faults.base import WorkersFault, register_fault
from chaos.faults.undo import Undo
from chaos.timeline import Timeline


@register_fault
class PauseWorkers(WorkersFault):
    """Freeze several workers at once (docker pause on each); heal unpauses them."""

    name: ClassVar[str] = "pause_workers"
    # pause/unpause are an optional ability of a cluster: a backend without it refuses the
    # scenario before anything starts, and inject refuses a cluster without it.
    uses_abilities: ClassVar[tuple[type, ...]] = (Freezing,)

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        for w in self.workers:
            cluster.pause(w)
            # Added only once this worker is paused: unpausing a running container is an
            # error in Docker. If pausing the next one raises, the runner still unpauses
            # the ones paused so far.
            undo.add(lambda c, w=w: c.unpause(w))


@register_check
class FirstToFail(SymptomCheck):
    """The first error after the fault's inject came from one of the given workers."""

    name: ClassVar[str] = "first_to_fail"
    evidence: ClassVar[frozenset[str]] = frozenset({"errors"})
    workers: list[int] = Field(min_length=1, description="the workers one of which must raise first")
    within_s: float = Field(60.0, gt=0, le=86_400, description="seconds after the inject")

    def judge(self, timeline: Timeline) -> Verdict:
        window = self.window(timeline)  # unknown if the fault never reached the cluster
        errors = [e for e in timeline.errors() if window.start <= e.t <= window.start + self.within_s]
        if not errors:
            return failed(f"no error within {self.within_s:g} s of the inject", [window.inject])
        first = errors[0]
        said = f"worker-{first.worker} raised {first.error_class.rsplit('.', 1)[-1]} first, {first.t - window.start:.1f} s after the inject"
        return (passed if first.worker in self.workers else failed)(said, [window.inject, first])


@register_check
class RestartRoundsAtMost(RecoveryCheck):
    """The workers were restarted in at most `rounds` rounds (restarts with no step between them)."""

    name: ClassVar[str] = "restart_rounds_at_most"
    needs: ClassVar[frozenset[str]] = frozenset({"restart"})
    rounds: int = Field(1, ge=0, description="restart rounds allowed in the whole run")

    def judge(self, timeline: Timeline) -> Verdict:
        self.recovery_start(timeline)  # unknown if nothing healed and nothing restarted
        starts: list[RestartEvent] = []  # the first restart of each round
        stepped = True
        for event in timeline:
            if isinstance(event, RestartEvent) and stepped:
                starts.append(event)
                stepped = False
            elif isinstance(event, StepEvent):
                stepped = True
        said = f"{len(starts)} restart round(s); allowed {self.rounds}"
        return (passed if len(starts) <= self.rounds else failed)(said, starts[:3])
