"""Drive one scenario on a live cluster: bring it up, then carry out what the
policy (chaos.runner.policy.decide) decides, until it says finish.

The decisions are a pure function of what was seen and the time; this loop
only observes (the event log), acts (faults, restarts, redeploys through the
cluster) and says what happens. A fault that changes how workers are created
(``applies_at_create``) is in place before bring-up when it fires
``at: bring_up``.

Before a restart the supervisor reads the whole run's logs for a restart loop
(chaos.diagnose.loops, as ``chaos diagnose`` and the report's ``restart_loop``
notice read them) and decides again with what it found (``Seen.loop``): the
policy then ends the run instead of restarting (and a run that ends with its
budget spent on the loop says the loop). It is read only then (one reading of
every log line so far per restart and at the end, not one per poll), and
``decide`` is pure, so deciding again with it is the decision it would have made
knowing it.

Between decisions the loop waits POLL_S, or less: a step event that makes the next
fault's step or epoch trigger due, or an active fault's ``until``, wakes it at once
(``_wake_if_due``, run by the log follower that records the event), so a fault fires
and heals within milliseconds of its step being seen, not up to a poll later, while a
run still decides five times a second.

Two things the policy cannot see are noticed here and recorded as notice
events (they reach the report): a fault that reached the cluster after every
worker it targets had already finished (its symptom cannot be judged), and a
heal that failed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from chaos.backends.abilities import CheckpointListing, RestartsAhead
from chaos.backends.base import Cluster
from chaos.checks.select import first_by_worker, names
from chaos.diagnose.loops import from_events
from chaos.errors import ChaosError, InfrastructureError
from chaos.events import RUNNER, Event, NoticeEvent, PhaseEvent, PlanEvent, StartEvent, StepEvent
from chaos.faults.undo import Undo
from chaos.fingerprints import skews
from chaos.runner.policy import Abort, AwaitRestart, Finish, Heal, Inject, Plan, Redeploy, Restart, Seen, State, decide
from chaos.scenario.model import Scenario
from chaos.scenario.triggers import Trigger
from chaos.timeline import finished_workers

POLL_S = 0.2


@dataclass
class _Active:
    step: object  # the scenario's FaultStep
    injected_at: float
    undo: Undo = field(default_factory=Undo)  # filled as the inject acts: a half-done one is undone too
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
    cluster: Cluster
    progress: Callable[[str], None] | None = None
    clock: Callable[[], float] = time.time
    # How the loop waits between decisions; None: POLL_S, or until the next fault is due.
    sleep: Callable[[float], None] | None = None
    _active: dict[int, _Active] = field(default_factory=dict)
    # The step and epoch triggers due next: the next fault's `at` and each active fault's `until`
    # (set by the loop, read by _wake_if_due in a follower's thread; replaced whole, never mutated).
    _watched: tuple[Trigger, ...] = ()
    _due: threading.Event = field(default_factory=threading.Event)

    def _say(self, text: str) -> None:
        if self.progress:
            self.progress(text)

    def _phase(self, name: str) -> None:
        self.cluster.record(PhaseEvent(t=self.clock(), source=RUNNER, phase=name))

    def _notice(self, topic: str, text: str) -> None:
        self.cluster.record(NoticeEvent(t=self.clock(), source=RUNNER, topic=topic, text=text))

    def _expect_restarts(self, expected: bool) -> None:
        if isinstance(self.cluster, RestartsAhead):  # a cluster that makes the next containers ahead
            self.cluster.expect_restarts(expected)

    # --- faults ----------------------------------------------------------

    def _inject(self, index: int, generation_start: float) -> float:
        """Inject fault ``index``; returns when it acted."""
        step = self.scenario.faults[index]
        # Stamp before acting: the fault's effects (an exit, an error) can be
        # reported before a slow Docker call returns. Tracked first, so
        # heal_all undoes a half-done inject too.
        now = self.clock()
        active = _Active(step, now)
        self._active[index] = active
        try:
            step.fault.inject(self.cluster, active.undo)
        except ChaosError:
            raise
        except Exception as exc:
            raise InfrastructureError(
                f"fault {step.fault.name} ({step.at.describe()}) could not be injected into "
                f"{step.fault.target}: {type(exc).__name__}: {exc}",
                hint="a fault on a worker needs it running: fire it earlier, or train longer (steps_per_epoch, epochs)",
            ) from exc
        event = step.fault.inject_event(now)
        completed = self.clock()
        self.cluster.record(replace(event, completed_t=completed))
        active.recorded = True
        self._warn_if_late(index, event, generation_start, completed)
        return now

    def _prepare(self, index: int) -> None:
        """A fault's work ahead (Fault.prepare); if it fails, its inject does it all."""
        step = self.scenario.faults[index]
        try:
            step.fault.prepare(self.cluster)
        except Exception as exc:  # noqa: BLE001 - the inject tries again, and says why if it fails
            self._say(
                f"fault {index} ({step.fault.name}) could not be prepared ahead ({type(exc).__name__}: {exc}); "
                "its inject will do it"
            )

    def _warn_if_late(self, index: int, event, generation_start: float, completed: float) -> None:
        if step_at_bring_up(self.scenario, index):
            return
        current = [e for e in self.cluster.events.snapshot() if e.t >= generation_start]
        targets = event.target_workers(self.scenario.cluster.workers)
        if set(targets) <= finished_workers(current, event.t, completed, self._final_step(current)):
            self._notice(
                "fault_late",
                f"fault {index} ({event.fault} on {event.target}) reached the cluster after "
                f"{'it' if len(targets) == 1 else 'every target'} had finished training: its symptom "
                "cannot be judged (fire it earlier or train longer)",
            )

    def _final_step(self, events) -> int:
        """The step training ends at: the scenario's for the harness, the job's plan event for a user's job."""
        if self.scenario.cluster.workload is None:
            return self.scenario.cluster.training.total_steps
        return max((e.total_steps for e in events if isinstance(e, PlanEvent)), default=0)

    def _heal(self, index: int) -> None:
        active = self._active.get(index)
        if active is None or active.healed:
            return
        now = self.clock()
        active.undo(self.cluster)
        active.healed = True
        if active.recorded:
            self.cluster.record(active.step.fault.heal_event(now))

    def heal_all(self) -> None:
        """Heal every injected fault; used in ``finally``. A heal that fails
        is recorded (a notice in the report), and the others still heal."""
        for index in list(self._active):
            self._try_heal(index)

    def _try_heal(self, index: int) -> None:
        try:
            self._heal(index)
        except Exception as exc:  # keep healing the others
            active = self._active[index]
            active.healed = True  # do not retry forever; the report says it failed
            self._notice(
                "heal_failed",
                f"fault {index} ({active.step.fault.name} on {active.step.fault.target}) could not be "
                f"healed: {type(exc).__name__}: {exc}",
            )

    def _warn_if_no_checkpoint(self) -> None:
        """A user's job restarting with nothing in its checkpoint_dir starts over
        from step 0: say so, the usual cause is a checkpoint_dir that is not
        where the job writes its backups."""
        workload = self.scenario.cluster.workload
        if workload is None or not isinstance(self.cluster, CheckpointListing) or self.cluster.checkpoint_files() != 0:
            return
        text = (
            f"nothing was written to checkpoint_dir {workload.checkpoint_dir} before this restart: the job "
            "will start over from step 0, and the recovery checks judge that. Is checkpoint_dir where its "
            "BackupAndRestore / CheckpointManager writes, and did training reach its first save?"
        )
        self._notice("checkpoint_empty", text)
        self._say(f"WARNING: {text}")

    def _restart_loop(self, events: list) -> str:
        """The restart loop the run's logs show so far, said as the report's notice says it; "" for none."""
        try:
            _, loop = from_events(events, self.scenario.name)
        except Exception as exc:  # noqa: BLE001 - a reading that breaks costs the early stop, never the run
            self._say(f"could not read the run's logs for a restart loop ({type(exc).__name__}: {exc}); restarting")
            return ""
        return loop.said() if loop is not None else ""

    def _tail(self, index: int, lines: int = 12) -> str:
        tail = self.cluster.log_tail(index)[-lines:]
        return f"\n--- worker-{index}, last lines ---\n" + "\n".join(tail) if tail else ""

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

    # --- waiting -----------------------------------------------------------

    def _wake_if_due(self, event: Event) -> None:
        """Wake the loop when ``event`` makes a watched trigger due (cheap: a comparison or two)."""
        if not isinstance(event, StepEvent):
            return
        if any(t.due(step=event.step, epoch=event.epoch) for t in self._watched):
            self._due.set()

    def _watch(self, state: State) -> None:
        """Watch the step triggers that act next: the next fault's ``at``, and the ``until`` of every
        active fault (a heal at step 30 that lands a poll late can miss the save at step 40)."""
        faults = self.scenario.faults
        pending = state.next_fault
        watched = [faults[pending].at] if pending < len(faults) and not faults[pending].at.before_start else []
        watched += [faults[i].until for i, s in enumerate(state.faults) if s.active and faults[i].until is not None]
        self._watched = tuple(t for t in watched if t.tag in ("step", "epoch"))

    def _pause(self) -> None:
        if self.sleep is not None:
            self.sleep(POLL_S)
            return
        self._due.wait(POLL_S)
        self._due.clear()

    # --- the run ---------------------------------------------------------

    def run(self) -> Outcome:
        sc = self.scenario
        # Every container: the workers, or a parameter-server cluster's chief +
        # workers + ps. A fault that overrides "every worker" overrides each of
        # them (ClusterControl.num_slots counts containers), so a redeploy
        # replaces each of them too, and each one's start and log count.
        n = sc.cluster.containers
        plan = Plan.of(sc)
        self._phase("bring_up")
        created = self.clock()
        at_bring_up = [i for i, s in enumerate(sc.faults) if s.at.before_start]
        injected: dict[int, float] = {}
        for i in [i for i in at_bring_up if sc.faults[i].fault.applies_at_create]:
            injected[i] = self._inject(i, created)  # the workers are created with it
        if not plan.may_restart:
            self._expect_restarts(False)  # no next containers made ahead: nothing would start them
        self.cluster.start_workers()
        for i in [i for i in at_bring_up if not sc.faults[i].fault.applies_at_create]:
            injected[i] = self._inject(i, created)  # needs the running workers' proxy routes
        for i in [i for i in range(len(sc.faults)) if i not in injected]:
            self._prepare(i)  # while TensorFlow imports
        self.cluster.wait_started(sc.timeouts.bring_up)
        self._phase("training")
        started = self.clock()
        # A bring-up fault's `for` counts from here, when every worker has
        # started (TensorFlow imported), not from its inject: the import takes
        # 2 s on a quiet machine and 40 s on a loaded one, and the fault acts
        # from the first connection on. Its window still spans the whole bring-up.
        state = State.start(plan, started, {i: started for i in injected})
        skew_said = False
        self.cluster.events.subscribe(self._wake_if_due)

        while True:
            self.cluster.events.raise_if_stopped()
            now = self.clock()
            events = self.cluster.events.snapshot()
            if not skew_said:
                skew_said = self._warn_skew([e for e in events if e.t >= created], n)
            seen = Seen.of([e for e in events if e.t >= state.generation_start])
            decision = decide(plan, state, seen, now)
            if any(restarts_or_gives_up(a) for a in decision.actions):
                loop = self._restart_loop(events)
                if loop:
                    self._say(loop)
                    decision = decide(plan, state, replace(seen, loop=loop), now)
            state = decision.state
            acted = False
            for action in decision.actions:
                if isinstance(action, Inject):
                    state = state.injected(action.index, self._inject(action.index, state.generation_start))
                elif isinstance(action, Heal):
                    self._try_heal(action.index)
                    state = state.healed(action.index, self.clock())
                elif isinstance(action, Redeploy):
                    self._phase("recover" if action.reason.endswith("healed") else "fault")
                    self._say(f"restarting every worker ({action.reason})")
                    self._expect_restarts(restarts_ahead(state))
                    # A redeploy replaces healthy, training workers: no grace
                    # (it would only let the old config train on).
                    self.cluster.restart(list(range(n)), reason=action.reason, grace_s=0)
                    created = self.clock()
                    state, skew_said = state.new_generation(created, failure_restart=False), False
                    acted = True
                elif isinstance(action, Restart):
                    self._phase("recover")
                    self._warn_if_no_checkpoint()
                    self._say(f"restarting {', '.join(f'worker-{i}' for i in action.workers)} ({action.reason})")
                    self._expect_restarts(restarts_ahead(state))
                    self.cluster.restart(list(action.workers), reason=action.reason)
                    created = self.clock()
                    state, skew_said = state.new_generation(created, failure_restart=True), False
                    acted = True
                elif isinstance(action, AwaitRestart):
                    # The orchestrator's restart policy restarts them (cluster.recovery.by): nothing is
                    # restarted here; the cluster follows the new containers and records their restarts.
                    self._phase("recover")
                    self._warn_if_no_checkpoint()
                    who = names(list(action.workers))
                    self._say(f"waiting for the orchestrator to restart {who} ({action.reason})")
                    restarted = self.cluster.await_restarts(
                        list(action.workers), action.reason, timeout_s=sc.timeouts.bring_up
                    )
                    missing = sorted(set(action.workers) - set(restarted))
                    if missing:
                        return Outcome(
                            False,
                            f"{action.reason}; the orchestrator did not restart "
                            f"{names(missing)} within {sc.timeouts.bring_up:g}s (timeouts.bring_up)",
                            state.restarts,
                        )
                    created = self.clock()
                    state, skew_said = state.new_generation(created, failure_restart=True), False
                    acted = True
                elif isinstance(action, Finish):
                    if action.notice:
                        self._notice("exit_after_done", action.notice)
                        self._say(f"NOTICE: {action.notice}")
                    return Outcome(action.completed, action.reason, state.restarts)
                elif isinstance(action, Abort):
                    raise InfrastructureError(
                        action.reason + "".join(self._tail(i) for i in range(n)),
                        hint="run the job's image by hand with the same command to see why; "
                        "the full worker logs are in the report folder (--report-dir)",
                    )
            self._watch(state)
            if not acted:
                self._pause()


def restarts_or_gives_up(action) -> bool:
    """A decision the run's restart loop changes or explains: a restart, or the end of an incomplete run
    (a budget spent on a loop is said as the loop)."""
    return isinstance(action, Restart | AwaitRestart) or (isinstance(action, Finish) and not action.completed)


def restarts_ahead(state: State) -> bool:
    """Whether a fault has yet to fire or to heal: only then is another restart
    to be expected (a job that fails again with every fault healed is restarted
    all the same, only not from containers made ahead)."""
    return any(f.injected_at is None or f.active for f in state.faults)


def step_at_bring_up(scenario: Scenario, index: int) -> bool:
    return scenario.faults[index].at.before_start
