"""Drive one scenario on a live cluster: fire faults at their triggers, heal
them after their duration, and play the orchestrator MWMS needs.

MWMS has no elasticity: when a worker fails, the collectives abort everywhere
and "the user is responsible to bring jobs back". The supervisor does that by
the scenario's recovery policy: once the symptom has settled (every worker
exited, or the symptom timeout passed) or training stalled, it heals every
fault and restarts the failed workers (or all), and BackupAndRestore resumes.

A fault that changes how workers are created (``applies_at_create``: another
image, environment or data settings) is in place before bring-up when it
fires ``at: bring_up``; fired or healed during training, it needs a redeploy:
the supervisor restarts every worker with the new config (not counted as a
failure restart), as an operator rolling out a config would.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from chaos.cluster.docker_cluster import DockerCluster
from chaos.errors import ChaosError, InfrastructureError
from chaos.checks.select import first_by_worker
from chaos.events import DoneEvent, ExitEvent, PhaseEvent, RUNNER, StartEvent, StepEvent
from chaos.fingerprints import skews
from chaos.scenario.model import Scenario

POLL_S = 0.2


@dataclass
class _Active:
    step: object  # the scenario's FaultStep
    injected_at: float
    healed: bool = False
    recorded: bool = False  # the inject completed and its event is in the timeline


@dataclass
class Outcome:
    finished: bool  # every worker completed training
    reason: str = ""  # why the run ended otherwise
    restarts: int = 0


@dataclass
class Supervisor:
    scenario: Scenario
    cluster: DockerCluster
    progress: object = None  # callable(str) or None
    _active: list[_Active] = field(default_factory=list)

    def _say(self, text: str) -> None:
        if self.progress:
            self.progress(text)

    def _phase(self, name: str) -> None:
        self.cluster.record(PhaseEvent(t=time.time(), source=RUNNER, phase=name))

    # --- faults ----------------------------------------------------------

    def _inject(self, step) -> None:
        # Stamp before acting: the fault's effects (an exit, an error) can be
        # reported before a slow Docker call returns.
        now = time.time()
        # Recorded first, so heal_all undoes a half-done inject too.
        active = _Active(step, now)
        self._active.append(active)
        try:
            step.fault.inject(self.cluster)
        except ChaosError:
            raise
        except Exception as exc:
            raise InfrastructureError(
                f"fault {step.fault.name} ({step.at.describe()}) could not be injected into "
                f"{step.fault.target}: {type(exc).__name__}: {exc}",
                hint="a fault on a worker needs it running: fire it earlier, or train longer "
                "(steps_per_epoch, epochs)",
            ) from exc
        self.cluster.record(step.fault.inject_event(now))
        active.recorded = True

    def _heal(self, active: _Active) -> None:
        if active.healed:
            return
        now = time.time()
        active.step.fault.heal(self.cluster)
        active.healed = True
        if active.recorded:
            self.cluster.record(active.step.fault.heal_event(now))

    def heal_all(self) -> None:
        """Heal every injected fault; used before restarts and in ``finally``."""
        errors = []
        for active in self._active:
            try:
                self._heal(active)
            except Exception as exc:  # keep healing the others
                errors.append(f"{active.step.fault.name}: {exc}")
        if errors:
            self._say("heal failed: " + "; ".join(errors))

    @staticmethod
    def _heal_due(active: _Active, *, step: int, epoch: int, now: float, t_train: float) -> bool:
        s = active.step
        if s.for_s is not None:
            return now >= active.injected_at + s.for_s
        if s.until is not None:
            return s.until.due(step=step, epoch=epoch, elapsed_s=now - t_train)
        return False

    def _timed_fault_active(self) -> bool:
        return any(a.step.timed and not a.healed for a in self._active)

    def _warn_skew(self, generation: list, n: int) -> bool:
        """Once every worker of this generation started, say how their environments differ.

        Returns whether it could compare (every worker had started).
        """
        starts = first_by_worker([e for e in generation if isinstance(e, StartEvent)])
        if len(starts) < n:
            return False
        for skew in skews(starts):
            self._say(f"ENVIRONMENT SKEW: {skew.describe()}")
        return True

    # --- the run ---------------------------------------------------------

    def run(self) -> Outcome:
        sc = self.scenario
        n = sc.cluster.workers
        pending = list(sc.faults)
        self._phase("bring_up")
        t_bring_up = time.time()
        at_bring_up = [s for s in pending if s.at.before_start]
        pending = [s for s in pending if not s.at.before_start]
        for step in [s for s in at_bring_up if s.fault.applies_at_create]:
            self._inject(step)  # the workers are created with it
        self.cluster.start_workers()
        for step in [s for s in at_bring_up if not s.fault.applies_at_create]:
            self._inject(step)  # needs the running workers' proxy routes
        self.cluster.wait_started(sc.timeouts.bring_up)
        self._phase("training")
        t_train = time.time()
        deadline = t_train + sc.timeouts.total
        generation_start = t_train  # events of the current worker generation
        created = t_bring_up  # when it was created: its start events come after this
        last_progress = t_train
        first_failure: float | None = None
        skew_said = False
        restarts = 0

        while True:
            now = time.time()
            if now > deadline:
                return Outcome(False, f"total timeout of {sc.timeouts.total:g}s reached", restarts)
            events = self.cluster.events.snapshot()
            current = [e for e in events if e.t >= generation_start]
            if not skew_said:
                skew_said = self._warn_skew([e for e in events if e.t >= created], n)
            steps = [e for e in current if isinstance(e, StepEvent)]
            max_step = max((e.step for e in steps), default=0)
            epoch = max((e.epoch for e in steps), default=0)
            if steps:
                last_progress = max(last_progress, steps[-1].t)

            # Faults fire in order: the next one only after the previous fired.
            redeploy: list[str] = []
            while pending and pending[0].at.due(step=max_step, epoch=epoch, elapsed_s=now - t_train):
                step = pending.pop(0)
                self._inject(step)
                last_progress = max(last_progress, time.time())
                if step.fault.applies_at_create:
                    redeploy.append(f"{step.fault.name} injected")
            for active in self._active:
                if not active.healed and self._heal_due(active, step=max_step, epoch=epoch, now=now, t_train=t_train):
                    self._heal(active)
                    last_progress = max(last_progress, time.time())
                    if active.step.fault.applies_at_create:
                        redeploy.append(f"{active.step.fault.name} healed")
            if redeploy:
                why = "redeploy: " + ", ".join(redeploy)
                self._phase("recover" if any(r.endswith("healed") for r in redeploy) else "fault")
                self._say(f"restarting every worker ({why})")
                # A redeploy replaces healthy, training workers: no grace (it
                # would only let the old config train on).
                self.cluster.restart(list(range(n)), reason=why, grace_s=0)
                generation_start = created = last_progress = time.time()
                first_failure, skew_said = None, False
                continue

            done = {e.source for e in current if isinstance(e, DoneEvent)}
            exits = [e for e in current if isinstance(e, ExitEvent)]
            exited = {e.source for e in exits}
            failed = {e.source for e in exits if e.exit_code != 0}
            if len(done) == n and len(exited) == n and not failed:
                return Outcome(True, "", restarts)

            if failed and first_failure is None:
                first_failure = now
            stalled = now - last_progress > sc.timeouts.symptom
            if not (failed or stalled) or self._timed_fault_active():
                time.sleep(POLL_S)
                continue
            # Let the symptom settle: the peers of a failed worker fail too.
            if failed and len(exited) < n and now - first_failure < sc.timeouts.symptom:
                time.sleep(POLL_S)
                continue

            why = f"{', '.join(sorted(failed))} failed" if failed else f"no progress for {sc.timeouts.symptom:g}s"
            self.heal_all()
            policy = sc.cluster.recovery
            if policy.restart == "none" or restarts >= policy.max_restarts:
                return Outcome(False, f"{why}; recovery policy allows no (further) restart", restarts)
            if policy.restart == "failed" and failed:
                indices = sorted(int(s.split("-")[1]) for s in failed)
            else:
                indices = list(range(n))
            self._phase("recover")
            self._say(f"restarting {', '.join(f'worker-{i}' for i in indices)} ({why})")
            self.cluster.restart(indices, reason=why)
            restarts += 1
            generation_start = created = last_progress = time.time()
            first_failure, skew_said = None, False
