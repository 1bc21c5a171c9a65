"""The orchestration policy as a pure function of what was seen and the time.

    decision = decide(plan, state, seen, now)

``plan`` is what the scenario asks (faults with their triggers, timeouts, the
recovery policy), ``state`` what the runner did so far (which faults fired
and healed, when this worker generation started, restarts used), ``seen``
what the current generation's events show (progress, done, exits). The
decision is a list of actions for the supervisor's loop to carry out, in
order, and the state with what ``decide`` itself learned (the first failure,
the last progress). Nothing here reads a clock or touches Docker, so every
branch is a table-driven unit test.

MWMS has no elasticity: when a worker fails, the collectives abort
everywhere and "the user is responsible to bring jobs back". The policy
waits for the symptom to settle (every worker exited, or the symptom timeout
passed) or for training to stall, heals every fault, and restarts the failed
workers (or all), up to ``max_restarts``, and not once more when the run is in a
restart loop (``Seen.loop``: the same root cause after each of the last restarts,
with no step of progress); or, when the orchestrator restarts
them (``recovery.by: orchestrator``), waits for its restart policy to have
started the failed ones again (it never restarts a worker that hangs). A fault that changes how workers are
created (``applies_at_create``) needs every worker redeployed when it fires or
heals mid-training; a redeploy is not a failure restart.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal

from chaos.checks.select import names
from chaos.events import DoneEvent, ErrorEvent, Event, ExitEvent, StepEvent
from chaos.scenario.triggers import Trigger
from chaos.text import first_line

# --- what the scenario asks --------------------------------------------------------


@dataclass(frozen=True)
class FaultPlan:
    name: str
    at: Trigger
    for_s: float | None = None
    until: Trigger | None = None
    applies_at_create: bool = False

    @property
    def timed(self) -> bool:
        """Healed on its own schedule (``for`` or ``until``), not by a failure."""
        return self.for_s is not None or self.until is not None

    @property
    def healed_by_training(self) -> bool:
        """Healed only when training reaches a step or an epoch (``until: {step: N}``): a job
        with no live worker never gets there, so it must not wait for it."""
        return self.for_s is None and self.until is not None and self.until.tag in ("step", "epoch")


@dataclass(frozen=True)
class Plan:
    workers: int
    faults: tuple[FaultPlan, ...] = ()
    symptom_s: float = 60.0
    total_s: float = 300.0
    restart: Literal["all", "failed", "none"] = "all"
    max_restarts: int = 1
    bring_up_s: float = 120.0  # a fault-free job must reach its first step within this
    reports_done: bool = True  # False: a job that exits 0 has finished (no done events)
    reports_steps: bool = True
    # Containers 0..reporters-1 report training (0: all). Parameter servers:
    # only the coordinator; the ps and worker servers never exit by themselves.
    reporters: int = 0
    # Who restarts failed workers (cluster.recovery.by): the orchestrator restarts only those
    # that exit with a failure, by its own policy; the runner then waits for it (AwaitRestart).
    restarted_by: Literal["runner", "orchestrator"] = "runner"

    @property
    def trainers(self) -> int:
        return self.reporters or self.workers

    @property
    def may_restart(self) -> bool:
        """Whether any worker can be started again: the recovery policy allows a
        restart, or a fault that changes how workers are made redeploys them."""
        return (self.restart != "none" and self.max_restarts > 0) or any(f.applies_at_create for f in self.faults)

    @classmethod
    def of(cls, scenario) -> Plan:
        c = scenario.cluster
        evidence = None if c.workload is None else {e.value for e in c.workload.evidence}
        return cls(
            workers=c.containers,
            reporters=c.reporters if c.containers != c.workers else 0,
            faults=tuple(
                FaultPlan(s.fault.name, s.at, s.for_s, s.until, s.fault.applies_at_create) for s in scenario.faults
            ),
            symptom_s=scenario.timeouts.symptom,
            total_s=scenario.timeouts.total,
            restart=c.recovery.restart,
            max_restarts=c.recovery.max_restarts,
            restarted_by=c.recovery.by,
            bring_up_s=scenario.timeouts.bring_up,
            reports_done=evidence is None or "done" in evidence,
            reports_steps=evidence is None or "steps" in evidence,
        )


# --- what was seen -------------------------------------------------------------------


@dataclass(frozen=True)
class Seen:
    """What the current worker generation's events show."""

    max_step: int = 0
    epoch: int = 0
    last_step_t: float | None = None
    done: frozenset[int] = frozenset()
    exited: frozenset[int] = frozenset()
    failed: frozenset[int] = frozenset()  # exited with a non-zero code
    last_done_t: float | None = None
    exit_codes: tuple[tuple[int, int], ...] = ()  # (worker, code) of each non-zero exit, first first
    errors: tuple[tuple[int, str], ...] = ()  # (worker, "ErrorClass: message"): each worker's last error
    # The restart loop the run's logs show so far, as chaos diagnose says it ("stop retrying: restart loop:
    # <cause> ...", chaos.diagnose.loops); "" for none. Not from this generation's events alone: the
    # supervisor reads the whole run for it, and only when this decision would restart (supervisor.py).
    loop: str = ""

    @classmethod
    def of(cls, events: Iterable[Event]) -> Seen:
        events = list(events)
        steps = [e for e in events if isinstance(e, StepEvent)]
        exits = [e for e in events if isinstance(e, ExitEvent)]
        dones = [e for e in events if isinstance(e, DoneEvent)]
        last_error: dict[int, str] = {}
        for e in sorted((e for e in events if isinstance(e, ErrorEvent) and e.worker is not None), key=lambda e: e.t):
            last_error[e.worker] = f"{e.error_class.rsplit('.', 1)[-1] or 'error'}: {e.message}".strip()
        return cls(
            max_step=max((e.step for e in steps), default=0),
            epoch=max((e.epoch for e in steps), default=0),
            last_step_t=max((e.t for e in steps), default=None),
            last_done_t=max((e.t for e in dones), default=None),
            done=frozenset(e.worker for e in dones),
            exited=frozenset(e.worker for e in exits),
            failed=frozenset(e.worker for e in exits if e.exit_code != 0),
            exit_codes=tuple((e.worker, e.exit_code) for e in sorted(exits, key=lambda e: e.t) if e.exit_code != 0),
            errors=tuple(sorted(last_error.items())),
        )


# --- what the runner did -----------------------------------------------------------------


@dataclass(frozen=True)
class FaultStatus:
    injected_at: float | None = None
    healed: bool = False

    @property
    def active(self) -> bool:
        return self.injected_at is not None and not self.healed


@dataclass(frozen=True)
class State:
    t_train: float  # training started (``seconds`` triggers count from here)
    generation_start: float  # the current worker generation was created
    last_progress: float  # the last step, inject, heal or (re)start
    faults: tuple[FaultStatus, ...] = ()
    first_failure: float | None = None  # when this generation's first failure was seen
    restarts: int = 0  # failure restarts used (redeploys do not count)
    stepped: bool = False  # some worker reported a step (in any generation)

    @classmethod
    def start(cls, plan: Plan, t_train: float, injected: dict[int, float] | None = None) -> State:
        """Training started; ``injected``: faults already fired at bring-up (index -> time)."""
        injected = injected or {}
        return cls(
            t_train=t_train,
            generation_start=t_train,
            last_progress=t_train,
            faults=tuple(FaultStatus(injected.get(i)) for i in range(len(plan.faults))),
        )

    @property
    def next_fault(self) -> int:
        """Faults fire in order: the first that has not fired."""
        return next((i for i, f in enumerate(self.faults) if f.injected_at is None), len(self.faults))

    # Transitions the supervisor applies as it carries out actions (with the real times).
    def injected(self, index: int, t: float) -> State:
        faults = list(self.faults)
        faults[index] = FaultStatus(t, False)
        return replace(self, faults=tuple(faults), last_progress=max(self.last_progress, t))

    def healed(self, index: int, t: float) -> State:
        faults = list(self.faults)
        faults[index] = replace(faults[index], healed=True)
        return replace(self, faults=tuple(faults), last_progress=max(self.last_progress, t))

    def new_generation(self, t: float, *, failure_restart: bool) -> State:
        return replace(
            self,
            generation_start=t,
            last_progress=t,
            first_failure=None,
            restarts=self.restarts + int(failure_restart),
        )


# --- actions -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Inject:
    index: int


@dataclass(frozen=True)
class Heal:
    index: int


@dataclass(frozen=True)
class Redeploy:
    """Restart every worker with the new config, no grace (not a failure restart)."""

    reason: str


@dataclass(frozen=True)
class Restart:
    workers: tuple[int, ...]
    reason: str


@dataclass(frozen=True)
class AwaitRestart:
    """The orchestrator restarts these failed workers by its own restart policy: wait for it,
    restart nothing (a failure restart all the same)."""

    workers: tuple[int, ...]
    reason: str


@dataclass(frozen=True)
class Finish:
    completed: bool  # every worker finished training
    reason: str = ""
    notice: str = ""  # something the report must carry although training completed


@dataclass(frozen=True)
class Abort:
    """The workload itself is broken (no fault injected yet): the run is an error, not a result."""

    reason: str


Action = Inject | Heal | Redeploy | Restart | AwaitRestart | Finish | Abort


@dataclass(frozen=True)
class Decision:
    actions: tuple[Action, ...]
    state: State
    waiting: str = ""  # why nothing happens yet (for tests and the live view)


# --- the policy -------------------------------------------------------------------------------


def heal_due(fault: FaultPlan, status: FaultStatus, seen: Seen, now: float, t_train: float) -> bool:
    if not status.active:
        return False
    if fault.for_s is not None:
        return now >= status.injected_at + fault.for_s
    if fault.until is not None:
        return fault.until.due(step=seen.max_step, epoch=seen.epoch, elapsed_s=now - t_train)
    return False


def _after_done(plan: Plan, seen: Seen, now: float, actions: list[Action], state: State) -> Decision:
    """Every worker reported done: training is complete and only the processes'
    exits remain. A worker that errs or lingers on its way out is reported, never
    restarted: a restart would train the finished job again from step 0 (the
    chief deleted its backup at the end of fit) and the checks would judge that
    second run instead."""
    lingering = [w for w in range(plan.trainers) if w not in seen.exited]
    if not lingering:
        # A parameter-server job's lost worker failed before the done, not after it.
        failed = sorted(w for w in seen.failed if w < plan.trainers)
        notice = f"{names(failed)} exited with an error after reporting done" if failed else ""
        return Decision((*actions, Finish(True, notice=notice)), state)
    if now - seen.last_done_t > plan.symptom_s:
        notice = f"{names(lingering)} reported done but did not exit within {plan.symptom_s:g}s (timeouts.symptom)"
        return Decision((*actions, Finish(True, notice=notice)), state)
    return Decision(tuple(actions), state, "training done; waiting for the workers to exit")


def own_failure(plan: Plan, state: State, seen: Seen) -> str:
    """Why a job that failed with no fault injected is an error: who exited,
    with which code, when, which fault had not fired yet, and the job's own error."""
    codes = dict(reversed(seen.exit_codes))  # a worker's first non-zero exit
    # The first to exit first: the one whose own error it likely is; its peers follow.
    failed = list(dict.fromkeys([w for w, _ in seen.exit_codes if w in seen.failed] + sorted(seen.failed)))
    exits = ", ".join(f"{names([w])} (exit code {codes[w]})" if w in codes else names([w]) for w in failed)
    if not state.stepped:
        when = "before the first training step"
    else:
        when = f"at step {seen.max_step}" if seen.max_step else "during training"
    pending = state.next_fault
    due = (
        f" (fault {pending}, {plan.faults[pending].name}, was due {plan.faults[pending].at.describe()})"
        if pending < len(plan.faults)
        else ""
    )
    text = (
        f"{exits} exited with an error {when}, with no fault injected{due}: the workload itself fails, not from a fault"
    )
    errors = dict(seen.errors)
    own = [f"{names([w])}: {first_line(errors[w])}" for w in failed if w in errors]
    return text + ("; its error: " + "; ".join(own) + " (the whole of it: the worker's log)" if own else "")


def decide(plan: Plan, state: State, seen: Seen, now: float) -> Decision:
    if now > state.t_train + plan.total_s:
        return Decision((Finish(False, f"total timeout of {plan.total_s:g}s reached"),), state)
    if seen.last_step_t is not None:
        state = replace(state, last_progress=max(state.last_progress, seen.last_step_t), stepped=True)
    fault_free = all(f.injected_at is None for f in state.faults)
    all_done = plan.reports_done and len(seen.done) == plan.trainers
    if fault_free and seen.failed and not all_done:
        # Nothing was done to the job yet: a crash is the job's own, before or
        # after its first step. (A fault fired at bring-up, such as a
        # create-time one, counts as injected; an error exit after every
        # worker reported done is a notice of the completed run.)
        return Decision((Abort(own_failure(plan, state, seen)),), state)
    if fault_free and not state.stepped:
        # A silent start is the job's own too.
        if plan.reports_steps and now - state.t_train > plan.bring_up_s:
            return Decision(
                (
                    Abort(
                        f"no training step within {plan.bring_up_s:g}s (timeouts.bring_up) of the "
                        "workers starting, with no fault injected"
                    ),
                ),
                state,
            )

    # Faults fire in order, the next only once the previous fired.
    injects: list[Inject] = []
    for index in range(state.next_fault, len(plan.faults)):
        if not plan.faults[index].at.due(step=seen.max_step, epoch=seen.epoch, elapsed_s=now - state.t_train):
            break
        injects.append(Inject(index))
    heals = [
        Heal(i)
        for i, (fault, status) in enumerate(zip(plan.faults, state.faults))
        if heal_due(fault, status, seen, now, state.t_train)
    ]
    changed = [f"{plan.faults[a.index].name} injected" for a in injects if plan.faults[a.index].applies_at_create]
    changed += [f"{plan.faults[a.index].name} healed" for a in heals if plan.faults[a.index].applies_at_create]
    actions: list[Action] = [*injects, *heals]
    if changed:
        return Decision((*actions, Redeploy("redeploy: " + ", ".join(changed))), state)

    n = plan.workers
    if plan.reports_done and len(seen.done) == plan.trainers:
        return _after_done(plan, seen, now, actions, state)
    if len(seen.exited) == n and not seen.failed:
        # Every worker exited 0: the job ended, also one that never reports done
        # (a custom loop with no report call): waiting for its done would stall.
        silent = [w for w in range(plan.trainers) if w not in seen.done] if plan.reports_done else []
        notice = (
            (
                f"{names(silent)} exited 0 without reporting done: the job ended (a job with no Keras fit "
                "and no report.done call reports none)"
            )
            if silent
            else ""
        )
        return Decision((*actions, Finish(True, notice=notice)), state)

    if seen.failed and state.first_failure is None:
        state = replace(state, first_failure=now)
    # A generation that has not stepped yet is still coming up (TF imports,
    # restores): it gets the bring-up time, not the symptom time, before it
    # counts as stalled.
    limit = (
        plan.symptom_s
        if seen.last_step_t is not None or not plan.reports_steps
        else max(plan.symptom_s, plan.bring_up_s)
    )
    stalled = now - state.last_progress > limit
    fired = {a.index for a in injects}
    # Every worker exited and nothing restarts them but this runner: no step comes, so a fault
    # healed at a step or an epoch would hold the restart back for ever (a killed job under
    # `until: {step: 35}` waited 270 s until interrupted); it is healed with the others instead.
    no_step_can_come = plan.restarted_by != "orchestrator" and len(seen.exited) >= n
    timed_active = any(
        f.timed
        and (s.active or i in fired)
        and not any(h.index == i for h in heals)
        and not (no_step_can_come and f.healed_by_training)
        for i, (f, s) in enumerate(zip(plan.faults, state.faults))
    )
    if not (seen.failed or stalled):
        return Decision(tuple(actions), state, "training")
    if timed_active:
        return Decision(tuple(actions), state, "a timed fault is still active")
    # Let the symptom settle: the peers of a failed worker fail too.
    settled = len(seen.exited) >= n or all(w in seen.exited for w in range(plan.trainers))
    if seen.failed and not settled and now - state.first_failure < plan.symptom_s:
        return Decision(tuple(actions), state, "waiting for the symptom to settle")

    why = f"{names(sorted(seen.failed))} failed" if seen.failed else f"no progress for {limit:g}s"
    healing = [
        Heal(i) for i, s in enumerate(state.faults) if (s.active or i in fired) and not any(h.index == i for h in heals)
    ]
    actions += healing
    if seen.loop:
        # The same root cause after each of the last restarts, with no step of progress: another restart
        # would meet it again (chaos.diagnose.loops), so the restarts left are not spent on it.
        left = plan.max_restarts - state.restarts
        budget = f"{left} of max_restarts {plan.max_restarts} left unused" if left > 0 else "max_restarts spent too"
        return Decision((*actions, Finish(False, f"{why}; {seen.loop} ({budget})")), state)
    if plan.restart == "none" or state.restarts >= plan.max_restarts:
        return Decision((*actions, Finish(False, f"{why}; recovery policy allows no (further) restart")), state)
    if plan.restarted_by == "orchestrator":
        if not seen.failed:
            return Decision(
                (
                    *actions,
                    Finish(
                        False,
                        (
                            f"{why}, and no worker exited with a failure: the orchestrator's restart policy restarts only "
                            "those, so a hung job is never restarted by the platform"
                        ),
                    ),
                ),
                state,
            )
        return Decision((*actions, AwaitRestart(tuple(sorted(seen.failed)), why)), state)
    if plan.restart == "failed" and seen.failed:
        workers = tuple(sorted(seen.failed))
    else:
        workers = tuple(range(n))
    return Decision((*actions, Restart(workers, why)), state)
