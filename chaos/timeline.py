"""One ordered history of a run: every worker event and every runner event.

The runner builds it while the run goes (``Timeline(info)`` then ``append`` each
parsed event, or ``Timeline.from_events``); checks only read it. Besides the
events it carries the run metadata a check needs and no event holds
(``RunInfo``): the save interval, the final step, the reference digest of an
uninterrupted run with the same seed.

Vocabulary of the helpers:

* fault window: the i-th ``inject`` event is the scenario's i-th fault (faults
  fire in order). Its window runs from the inject to its matching ``heal``
  (same fault and target), or, for a fault that never heals (a kill), to the
  first ``restart`` after it, or else to the end of the timeline (open window).
* recovery start: the later of the last ``heal`` and the start of the last
  restart round (consecutive ``restart`` events with no ``step`` between them).
  ``after_recovery()`` is everything from there on.

Events of no time: a log line read by ``chaos diagnose`` may give none (its event holds
``t = NaN``, ``chaos.diagnose.read_events.NO_TIME``). Such an event keeps its place right after
the event it came after (it is ordered at the last time before it), and falls in no time
window (``between`` compares times).

Serializable to and from JSON for the report (``to_dict`` / ``from_dict``).
"""

from __future__ import annotations

import bisect
import operator
import statistics
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from chaos.events import (
    DoneEvent,
    ErrorEvent,
    Event,
    ExitEvent,
    HealEvent,
    InjectEvent,
    RestartEvent,
    RestoredEvent,
    StartEvent,
    StepEvent,
    event_from_dict,
)
from chaos.workload.evidence import Evidence

E = TypeVar("E", bound=Event)


# Everything a workload can report (a run record without the list: the built-in harness).
ALL_EVIDENCE = tuple(e.value for e in Evidence)


_time = operator.attrgetter("t")


def order_keys(events: list[Event]) -> list[float]:
    """The time each event is ordered at: its own, or, for one of no time (NaN), the last time
    before it in the list (-inf when there is none)."""
    keys, last = [], float("-inf")
    for e in events:
        if e.t == e.t:  # only NaN differs from itself
            last = e.t
        keys.append(last)
    return keys


def finished_workers(events: list[Event], started: float, reached: float, final_step: int = 0) -> set[int]:
    """Workers whose training had ended when a fault, begun at ``started``,
    reached the cluster at ``reached``: they reported done or their final step
    by ``reached`` (a fault that lands as the last step ends acts on nothing),
    or exited before ``started``. An exit in between can be the fault's own
    effect (a kill whose Docker call returns slowly), so it does not count."""
    return {
        e.worker
        for e in events
        if e.worker is not None
        and (
            (isinstance(e, DoneEvent) and e.t <= reached)
            or (final_step > 0 and isinstance(e, StepEvent) and e.step >= final_step and e.t <= reached)
            or (isinstance(e, ExitEvent) and e.t < started)
        )
    }


@dataclass(frozen=True)
class RunInfo:
    """Run metadata the checks need that no event carries.

    For the built-in harness it comes from the scenario's training settings;
    for a user's job from what the job said it would train (its plan event),
    with 0 for what it did not say.
    """

    num_workers: int
    steps_per_epoch: int
    epochs: int
    save_interval_steps: int
    # Final weights digest of an uninterrupted run with the same seed; None when
    # the runner did not compute one.
    reference_digest: str | None = None
    # Final global loss of that run (for matches_uninterrupted's tolerance).
    reference_final_loss: float | None = None
    # That run's chief progress, (seconds since its first step, step, loss): for reports.
    reference_curve: tuple[tuple[float, int, float | None], ...] = ()
    # The last step when not epochs x steps_per_epoch (a custom loop's); 0: that product.
    total_steps: int = 0
    # What the workload reports (chaos.workload.evidence.Evidence values).
    evidence: tuple[str, ...] = ALL_EVIDENCE
    workload: str = "the built-in harness"
    # (evidence, why) the job did not produce although its kind could: seen in its
    # uninterrupted run, or in this run when it ended cleanly (every worker exited 0).
    unproduced: tuple[tuple[str, str], ...] = ()

    @property
    def final_step(self) -> int:
        """The global step training ends at; 0 when the workload did not say."""
        return self.total_steps or self.epochs * self.steps_per_epoch


@dataclass(frozen=True)
class FaultWindow:
    """Where one fault was active: ``start`` at its inject, ``end`` at its heal,
    at the first restart after it, or at the end of the timeline (``open``)."""

    index: int
    inject: InjectEvent
    heal: HealEvent | None
    start: float
    end: float
    open: bool

    @property
    def fault(self) -> str:
        return self.inject.fault

    @property
    def duration(self) -> float:
        return self.end - self.start

    def contains(self, t: float) -> bool:
        return self.start <= t <= self.end


@dataclass
class Timeline:
    info: RunInfo
    events: list[Event] = field(default_factory=list)

    def __post_init__(self) -> None:
        # Stable sort: events with equal times keep their arrival order.
        if any(e.t != e.t for e in self.events):  # an event of no time (NaN) is ordered by the one before it
            keys = order_keys(self.events)
            order = sorted(range(len(self.events)), key=keys.__getitem__)
            self.events = [self.events[i] for i in order]
        else:
            self.events = sorted(self.events, key=_time)

    @classmethod
    def from_events(cls, info: RunInfo, events: Iterable[Event]) -> Timeline:
        return cls(info=info, events=list(events))

    def append(self, event: Event) -> None:
        """Insert in time order (after any event with the same time); one of no time goes last
        (it came after the last one)."""
        if not self.events or event.t != event.t or event.t >= self.events[-1].t:  # the usual case
            self.events.append(event)
            return
        index = bisect.bisect_right(order_keys(self.events), event.t)
        self.events.insert(index, event)

    def __len__(self) -> int:
        return len(self.events)

    def __iter__(self):
        return iter(self.events)

    # --- selection ------------------------------------------------------

    def of(self, kind: type[E], worker: int | None = None) -> list[E]:
        """Events of one type, optionally from one worker."""
        return [e for e in self.events if isinstance(e, kind) and (worker is None or e.worker == worker)]

    def between(self, start: float, end: float = float("inf")) -> Timeline:
        """A timeline of the events with ``start <= t <= end`` (same info)."""
        return Timeline(self.info, [e for e in self.events if start <= e.t <= end])

    def before(self, event: Event) -> Timeline:
        """The events ahead of this one in the history (by position, so events
        with the same time stay on the side they arrived on)."""
        return Timeline(self.info, self.events[: self._position(event)])

    def after(self, event: Event) -> Timeline:
        """This event and everything after it in the history."""
        return Timeline(self.info, self.events[self._position(event) :])

    def _position(self, event: Event) -> int:
        return next(i for i, e in enumerate(self.events) if e is event)

    def workers(self) -> list[int]:
        """Every worker index of the cluster (from the run info)."""
        return list(range(self.info.num_workers))

    @property
    def start(self) -> float | None:
        return self.events[0].t if self.events else None

    @property
    def end(self) -> float | None:
        return self.events[-1].t if self.events else None

    # --- faults and recovery --------------------------------------------

    def fault_windows(self) -> list[FaultWindow]:
        windows: list[FaultWindow] = []
        used_heals: set[int] = set()
        end_of_timeline = self.end or 0.0
        for index, inject in enumerate(self.of(InjectEvent)):
            heal = None
            for position, event in enumerate(self.events):
                if (
                    isinstance(event, HealEvent)
                    and position not in used_heals
                    and event.t >= inject.t
                    and event.fault == inject.fault
                    and event.target == inject.target
                ):
                    heal = event
                    used_heals.add(position)
                    break
            if heal is not None:
                end, is_open = heal.t, False
            else:
                restart = next((r for r in self.of(RestartEvent) if r.t >= inject.t), None)
                end, is_open = (restart.t, False) if restart else (end_of_timeline, True)
            windows.append(FaultWindow(index, inject, heal, inject.t, max(end, inject.t), is_open))
        return windows

    def fault_window(self, index: int) -> FaultWindow | None:
        windows = self.fault_windows()
        return windows[index] if 0 <= index < len(windows) else None

    def generation_bounds(self, t: float, worker: int | None = None) -> tuple[float, float]:
        """(from, until) the generation current at ``t`` ran: the last restart at or
        before it and the first after it (of ``worker``, or of any worker); unbounded
        where there is none."""
        restarts = [r.t for r in self.of(RestartEvent, worker)]
        return (
            max((r for r in restarts if r <= t), default=float("-inf")),
            min((r for r in restarts if r > t), default=float("inf")),
        )

    def finished_before(self, worker: int, started: float, reached: float) -> bool:
        """Whether ``worker``'s current process had finished when a fault, begun
        at ``started``, reached the cluster at ``reached``: it reported done by
        ``reached``, or exited before ``started`` (see ``finished_workers``)."""
        since, _ = self.generation_bounds(started, worker)
        current = [e for e in self.events if e.worker == worker and since <= e.t]
        return worker in finished_workers(current, started, reached, self.info.final_step)

    def acting_from(self, window: FaultWindow) -> float:
        """When the fault could first act: its inject, or, for a fault the
        workers were (re)created with (at bring-up, or by a redeploy), when the
        last of them came up with it before anything happened (a step or an
        error). Bring-up takes 20 s on a quiet machine and over 70 s on a busy
        one; a symptom's clock must not run while TF is still importing."""
        start = window.inject.t
        first = next((e.t for e in self.events if e.t >= start and isinstance(e, (StepEvent, ErrorEvent))), window.end)
        came_up = [e.t for e in self.of(StartEvent) if start <= e.t <= first]
        return max(came_up, default=start)

    def landed_late(self, window: FaultWindow) -> str | None:
        """Why this fault could not act (it reached the cluster after every
        worker it targets had finished training), or None."""
        inject = window.inject
        reached = inject.completed_t or inject.t
        targets = inject.target_workers(self.info.num_workers)
        if not self.of(StartEvent) or not all(self.finished_before(w, inject.t, reached) for w in targets):
            return None
        who = ", ".join(f"worker-{w}" for w in targets)
        return (
            f"fault {window.index} ({inject.fault} on {inject.target}) reached the cluster after {who} "
            "had finished training, so it could not act: fire it earlier or train longer"
        )

    def before_first_fault(self) -> Timeline:
        injects = self.of(InjectEvent)
        return self.before(injects[0]) if injects else Timeline(self.info, list(self.events))

    def last_restart_round(self) -> list[RestartEvent]:
        """The last group of restart events with no step event between them."""
        group: list[RestartEvent] = []
        for event in reversed(self.events):
            if isinstance(event, RestartEvent):
                group.append(event)
            elif isinstance(event, StepEvent) and group:
                break
        return list(reversed(group))

    def recovery_start(self) -> float | None:
        """The later of the last heal and the start of the last restart round;
        None when nothing healed and nothing restarted."""
        candidates = [h.t for h in self.of(HealEvent)[-1:]]
        restarts = self.last_restart_round()
        if restarts:
            candidates.append(restarts[0].t)
        return max(candidates) if candidates else None

    def after_recovery(self) -> Timeline:
        start = self.recovery_start()
        if start is None:
            return Timeline(self.info, [])
        return self.between(start)

    # --- training progress ----------------------------------------------

    def step_durations(self, worker: int | None = None) -> list[tuple[StepEvent, float]]:
        """(step event, seconds since that worker's previous step) for every
        step that directly follows the previous one (step N+1 after step N)
        with no restart of that worker in between."""
        out: list[tuple[StepEvent, float]] = []
        workers = [worker] if worker is not None else self.workers()
        for w in workers:
            previous: StepEvent | None = None
            for event in self.events:
                if event.worker != w:
                    continue
                if isinstance(event, (RestartEvent, StartEvent)):
                    previous = None
                elif isinstance(event, StepEvent):
                    if previous is not None and event.step == previous.step + 1:
                        out.append((event, event.t - previous.t))
                    previous = event
        return sorted(out, key=lambda pair: pair[0].t)

    def median_step_time(self, worker: int | None = None) -> float | None:
        durations = [d for _, d in self.step_durations(worker)]
        return statistics.median(durations) if durations else None

    def last_step(self) -> StepEvent | None:
        steps = self.of(StepEvent)
        return max(steps, key=lambda e: (e.step, e.t)) if steps else None

    def errors(self) -> list[ErrorEvent]:
        return self.of(ErrorEvent)

    def exits(self) -> list[ExitEvent]:
        return self.of(ExitEvent)

    def restored(self) -> list[RestoredEvent]:
        return self.of(RestoredEvent)

    def done(self) -> list[DoneEvent]:
        return self.of(DoneEvent)

    # --- serialization ----------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {"info": asdict(self.info), "events": [e.to_dict() for e in self.events]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Timeline:
        return cls(
            info=RunInfo(
                **{
                    **data["info"],
                    "evidence": tuple(data["info"].get("evidence", ALL_EVIDENCE)),
                    "reference_curve": tuple(tuple(p) for p in data["info"].get("reference_curve", ())),
                    "unproduced": tuple(tuple(p) for p in data["info"].get("unproduced", ())),
                }
            ),
            events=[event_from_dict(e) for e in data.get("events", [])],
        )
