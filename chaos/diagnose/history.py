"""What ``chaos diagnose`` read, as the runner's own history: one ``Timeline`` of the events
(``chaos.events``) it found in every worker's log, each with the line it came from.

``LogHistory`` is what the signatures judge: that timeline, and each log's observations
(``chaos.diagnose.observations``) for what no event states: the lines a worker waited at,
the shapes of lines, the loss values a log printed, where a log's generations begin. The
signatures of errors, exits, batches and environments read the timeline alone; a run's own timeline and
what diagnose reads back from its logs can be set side by side (``chaos diagnose
--timeline``; tests/unit/diagnose/test_diagnose_history.py).

Within a log, events keep the log's order; across logs they are ordered by time, and an event
of no time (``NO_TIME``: its line and every line before it gave none) stays right after the
one its log printed before it (``chaos.timeline``).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from typing import TypeVar

from chaos.diagnose.observations import WorkerObservations
from chaos.events import Event
from chaos.timeline import RunInfo, Timeline, order_keys

E = TypeVar("E", bound=Event)

WORKLOAD = "the logs chaos diagnose read"


def _line_number(event: Event) -> int:
    where = event.evidence.where if event.evidence is not None else ""
    number = where.rpartition(":")[2]
    return int(number) if number.isdecimal() else 0


def _in_log_order(worker: WorkerObservations) -> list[Event]:
    """The worker's events, generation by generation, each generation's in the order of its lines."""
    out: list[Event] = []
    for gen in worker.generations:
        started = [gen.started] if gen.started is not None else []
        out += sorted([*started, *gen.steps, *gen.errors, *gen.exits], key=_line_number)
    return out


def timeline_of(workers: list[WorkerObservations]) -> Timeline:
    """One timeline of every start, error, exit and step diagnose read from these logs (as it counts
    them: not the lines after a worker said it was done, nor the runner's teardown kills).
    Its run info knows only how many workers the logs name; what a job would train is not in
    its logs, so nothing is claimed of it (no evidence, no steps per epoch)."""
    indexed = [w.index for w in workers if w.index is not None]
    info = RunInfo(
        num_workers=max(indexed) + 1 if indexed else len(workers),
        steps_per_epoch=0,
        epochs=0,
        save_interval_steps=0,
        evidence=(),
        workload=WORKLOAD,
    )
    logs = [_in_log_order(w) for w in workers]
    # each event at its time, or the last time before it in its own log (not another log's)
    merged = heapq.merge(*(zip(order_keys(events), events) for events in logs), key=lambda item: item[0])
    return Timeline(info, [e for _, e in merged])


def timeline_json(timeline: Timeline) -> dict:
    """``Timeline.to_dict`` with an event of no time written as ``"t": null`` (JSON has no NaN),
    and each event's line (file:line, and its text) beside it."""
    data = timeline.to_dict()
    for event, out in zip(timeline.events, data["events"]):
        if event.t != event.t:
            out["t"] = None
        if event.evidence is not None:
            out["line"] = {"where": event.evidence.where, "text": event.evidence.text}
    return data


class LogHistory:
    """The history of a set of worker logs, as the signatures judge it: ``timeline`` (every
    event the logs state, as ``timeline_of`` orders them) and ``workers`` (each log's
    observations, for what no event states). ``timeline`` defaults to the one read from the
    workers' logs; a run's own may be given instead."""

    def __init__(self, workers: list[WorkerObservations], timeline: Timeline | None = None) -> None:
        self.workers = workers
        self.timeline = timeline_of(workers) if timeline is None else timeline
        # Each log's events in its lines' order: the timeline orders logs by time, and a log's
        # own clock may go back (two runs in one file); what a signature shows is read log by log.
        by_log: dict[str, list[Event]] = {w.name: [] for w in workers}
        for event in self.timeline.events:
            by_log.setdefault(event.evidence.log if event.evidence is not None else event.source, []).append(event)
        self._by_log = {name: sorted(events, key=_line_number) for name, events in by_log.items()}
        self._index = {w.name: w.index for w in workers}

    def events(self, kind: type[E], on: Iterable[int] | None = None) -> list[E]:
        """The timeline's events of this kind, log by log in the order the logs were given; ``on``:
        only the logs of these task indices (a log whose name gives no index may be any of them)."""
        wanted = None if on is None else set(on)
        return [
            e
            for name, events in self._by_log.items()
            if wanted is None or self._index.get(name) is None or self._index[name] in wanted
            for e in events
            if isinstance(e, kind)
        ]

    def per_log(self, kind: type[E]) -> list[list[E]]:
        """The events of this kind of each log that has any, a list per log."""
        lists = ([e for e in events if isinstance(e, kind)] for events in self._by_log.values())
        return [events for events in lists if events]
