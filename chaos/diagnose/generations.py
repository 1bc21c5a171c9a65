"""A worker's generations: one life of its process each (a restart, or a new
``start``, begins the next), and what the lines of a life count for. Lines
after the worker said training was done, the runner's teardown kill and the
stop of this framework's redeploy say nothing of the failure a run was
about: a generation keeps them apart (``Generation.add_*``), and ``settle``
drops what a redeploy round caused across every worker's log."""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field, replace

from chaos.diagnose.observations import MAX_EVIDENCE, Evidence, WorkerObservations
from chaos.diagnose.read_events import error_cls, when
from chaos.events import (
    DoneEvent,
    ErrorEvent,
    Event,
    ExitEvent,
    PhaseEvent,
    RestartEvent,
    StartEvent,
    StepEvent,
    StopEvent,
)
from chaos.events_text import short_class
from chaos.fingerprints import fingerprint_of

# What a worker's observations keep, whatever the log's length: a long log
# repeats its errors, waits and step times; the first ones (the last waits and
# the longest step times) say what the rest would.
MAX_KEPT = 2000  # errors, exits, wait lines and Keras step times per generation
REDEPLOY_AFTERMATH_S = 3.0
STOP_CODE = 137  # the runner's redeploy stops workers without grace: SIGKILL
# How long before its restart line a worker's SIGKILL exit can be the runner's stop: it
# stops every worker, then recreates them, and only then writes the restart lines
# (under load the whole round takes seconds; a kill long before it is a failure's).
REDEPLOY_STOP_S = 30.0


@dataclass
class Generation:
    """One life of the worker process: a restart (or a new ``start``) begins the next."""

    steps: list[StepEvent] = field(default_factory=list)
    errors: list[ErrorEvent] = field(default_factory=list)
    exits: list[ExitEvent] = field(default_factory=list)
    hang_lines: list[tuple[float | None, Evidence]] = field(default_factory=list)
    step_ms: list[float] = field(default_factory=list)  # Keras' "Nms/step", when no step times are known
    first_t: float | None = None
    last_t: float | None = None
    fingerprint: dict[str, str] | None = None
    start: Evidence | None = None
    started: StartEvent | None = None  # its start event (its line: ``start``), as the timeline holds it
    notable: list[Evidence] = field(
        default_factory=list
    )  # this generation's flagged lines (shapes, errors, exits, waits)
    done_t: float | None = None  # when it said training was done (the framework's own logs)
    redeployed: bool = False  # begun by the runner's redeploy: until its start, lines are the old process's
    # A redeployed generation: when the runner's stop of the old process was seen in this
    # log (its SIGKILL exit, 137), for ``settle`` to date the whole redeploy from.
    stopped_t: float | None = None
    more_errors: int = 0  # errors past MAX_KEPT: counted, not kept
    # This framework's runner began its teardown (its line in the log), or stopped this worker,
    # still running, to restart it (its stop event): what follows is its kill.
    torn_down_t: float | None = None
    stopped_for_restart: bool = False  # by its stop event: then an exit of any code is the stop's
    teardown_exits: int = 0  # exits by that kill: counted, not read as the failure's
    torn: list[ExitEvent] = field(default_factory=list)  # the first of them, for attribution to label (MAX_EVIDENCE)

    def _aftermath(self, t: float | None) -> bool:
        """Lines of a process the run was done with: after it said training was
        done (a worker whose peer left first can fail its own shutdown with
        `Socket closed`), or the old process's last words after the runner's
        redeploy stopped it (they reach the log after the restart line on a busy
        machine). Neither says anything of the failure the run was about."""
        # at or after it: a line of no stamp is dated by the line before it, the done event itself
        after_done = self.done_t is not None and t is not None and t >= self.done_t
        return after_done or (self.redeployed and self.start is None) or self._torn_down(t)

    def add_error(self, error: ErrorEvent) -> None:
        if not self._aftermath(when(error)):
            if len(self.errors) < MAX_KEPT:
                self.errors.append(error)
            else:
                self.more_errors += 1

    def add_exit(self, exit_: ExitEvent) -> None:
        t = when(exit_)
        if self.redeployed and self.start is None:
            # the old process's exit, after the restart line: the runner's stop (kept only as its time)
            if exit_.exit_code == STOP_CODE and t is not None:
                self.stopped_t = t if self.stopped_t is None else min(self.stopped_t, t)
            return
        if self._after_done_failed(exit_):
            return
        if self._torn_down(t) and (exit_.exit_code == STOP_CODE or self.stopped_for_restart):
            # the runner's kill of a worker that outlived the failed run (its stop sends SIGTERM first:
            # a job that handles it exits 0, 1 or 143, one that trains through it 137)
            self.teardown_exits += 1
            if len(self.torn) < MAX_EVIDENCE:
                self.torn.append(exit_)
            return
        if len(self.exits) < MAX_KEPT:
            self.exits.append(exit_)

    def _torn_down(self, t: float | None) -> bool:
        return self.torn_down_t is not None and t is not None and t >= self.torn_down_t

    def _after_done_failed(self, exit_: ExitEvent) -> bool:
        """A failed exit after the worker said training was done: its shutdown
        failing (its peer left first), or the runner's teardown killing a process
        that lingered past the symptom timeout (137), or TF's line about it
        (`... the leader task was preempted/died ...`). Like the errors of that
        moment, it says nothing of the failure the run was about; an exit 0 is
        kept (it says the job ended)."""
        failed = exit_.exit_code != 0 or exit_.oom_killed  # code None: a line saying it went away ("preempted")
        t = when(exit_)
        return failed and self.done_t is not None and t is not None and t >= self.done_t

    def add_hang(self, t: float | None, evidence: Evidence) -> None:
        self.hang_lines.append((t, evidence))
        if len(self.hang_lines) >= 2 * MAX_KEPT:  # the last ones are read (what it waited at last)
            del self.hang_lines[:MAX_KEPT]

    def add_step_ms(self, ms: float) -> None:
        self.step_ms.append(ms)
        if len(self.step_ms) >= 2 * MAX_KEPT:  # the first and the longest ones are read
            self.step_ms[1:] = heapq.nlargest(MAX_KEPT - 1, self.step_ms[1:])


def _before(event: Event, since: float) -> bool:
    """Whether the event came before ``since``; one of no time is kept as if it did."""
    t = when(event)
    return t is None or t < since


def _forget_redeploy(gen: Generation, restart_t: float) -> None:
    """This framework's runner redeploys workers to apply a configuration (its
    ``restart`` event says ``redeploy: ...``): it stops them without grace, so
    their exits and the errors the stop caused in its last seconds are the
    runner's doing, not the failure's. A user's logs have no such event."""
    since = restart_t - REDEPLOY_AFTERMATH_S
    gen.exits[:] = [e for e in gen.exits if _before(e, since)]
    gen.errors[:] = [e for e in gen.errors if _before(e, since)]


def _stop_exit_t(gen: Generation, restart_t: float) -> float | None:
    """When the runner's redeploy stopped this worker, as its log shows it: its stop event
    (a runner that writes one), else the generation's last exit, if a SIGKILL shortly before
    the restart line."""
    if gen.stopped_for_restart:
        t = gen.torn_down_t
    else:
        last = gen.exits[-1] if gen.exits else None
        t = None if last is None or last.exit_code != STOP_CODE else when(last)
    if t is None or not 0 <= restart_t - t <= REDEPLOY_STOP_S:
        return None
    return t


def settle(workers: list[WorkerObservations]) -> list[WorkerObservations]:
    """What only the logs of every worker together show: a redeploy (this
    framework's runner; a user's logs have none) stops the workers one after
    another and writes each one's restart line only once it has recreated them
    all. The first SIGKILL of the round (or its first restart line) dates the
    stop for every worker: a peer's `Socket closed` when the first one was
    stopped, and its own stop, may come well over 3 s before its own restart
    line on a loaded machine. Their exits and errors from 3 s before that on
    are the runner's doing and are dropped."""
    rounds: dict[int, list[tuple[Generation, Generation]]] = {}
    for w in workers:
        n = 0
        for old, new in zip(w.generations, w.generations[1:]):
            if new.redeployed:
                rounds.setdefault(n, []).append((old, new))
                n += 1
    for pairs in rounds.values():
        times = [t for _, new in pairs for t in (new.stopped_t, new.first_t) if t is not None]
        if not times:
            continue
        since = min(times) - REDEPLOY_AFTERMATH_S
        for old, _ in pairs:
            old.exits[:] = [e for e in old.exits if _before(e, since)]
            old.errors[:] = [e for e in old.errors if _before(e, since)]
    return workers


def add_event(event: Event, evidence: Evidence, generations: list[Generation]) -> None:
    """One of this framework's JSON events into the worker's generations, kept with the line it
    was read from: a restart (or a second ``start``) begins the next one."""
    gen = generations[-1]
    stopped_t = None
    if isinstance(event, RestartEvent) and event.reason.startswith("redeploy"):
        stopped_t = _stop_exit_t(gen, event.t)
        _forget_redeploy(gen, event.t)
    restarted = isinstance(event, RestartEvent) or (isinstance(event, StartEvent) and gen.start is not None)
    if restarted and (gen.start or gen.steps or gen.errors or gen.exits or gen.hang_lines):
        redeploy = isinstance(event, RestartEvent) and event.reason.startswith("redeploy")
        generations.append(
            Generation(first_t=event.t, last_t=event.t, redeployed=redeploy, stopped_t=stopped_t if redeploy else None)
        )
        gen = generations[-1]
    if isinstance(event, StartEvent):
        gen.start = evidence
        gen.started = replace(event, evidence=evidence)
        gen.fingerprint = fingerprint_of(event)
    elif isinstance(event, StepEvent):
        gen.steps.append(replace(event, evidence=evidence))
    elif isinstance(event, ErrorEvent):
        short = short_class(event.error_class)
        # the traceback printed beside the event says the same: keep one
        if not any(error_cls(e) == short and e.message[:80] == event.message[:80] for e in gen.errors):
            gen.add_error(replace(event, evidence=evidence))
    elif isinstance(event, ExitEvent):
        gen.add_exit(replace(event, evidence=evidence))
    elif isinstance(event, DoneEvent):
        gen.done_t = event.t
    elif isinstance(event, StopEvent) or (isinstance(event, PhaseEvent) and event.phase == "teardown"):
        gen.torn_down_t = event.t if gen.torn_down_t is None else min(gen.torn_down_t, event.t)
        gen.stopped_for_restart = gen.stopped_for_restart or isinstance(event, StopEvent)
