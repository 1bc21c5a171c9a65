"""Which peer a hung bring-up waits for, read from TF's own log lines.

While tasks are missing, the coordination service on the chief logs
``Waiting for 1/2 tasks to connect.`` then ``Example stragglers:`` followed
by one ``/job:worker/replica:0/task:1`` line per missing task. The answer
users ask for most in a silent bring-up hang is exactly this: who is missing.
"""

from __future__ import annotations

import re

from chaos.events import Event, ExitEvent, LogLine, RestartEvent
from chaos.proxy_links import describe_links

_TASK = re.compile(r"^/job:(\w+)/replica:\d+/task:(\d+)\s*$")
_STRAGGLERS = "Example stragglers:"
_SERVER = "Started server with target:"
# Said after a report once its tasks came: every task connected (0 still awaited), or one did.
_ALL_CONNECTED = re.compile(r"Waiting for 0/\d+ tasks to connect")
_CONNECTED = re.compile(r"/job:(\w+)/replica:\d+/task:(\d+) has connected to coordination service")


def task_name(text: str) -> str | None:
    """``worker-1`` for a ``/job:worker/replica:0/task:1`` line; None for others."""
    match = _TASK.match(text.strip())
    return f"{match.group(1)}-{match.group(2)}" if match else None


class StragglerWatch:
    """Fed one run's log lines as they come: names each task a worker's
    coordination service reports as not yet connected, as soon as it is logged."""

    def __init__(self) -> None:
        self._listing: dict[str, bool] = {}  # source -> inside an "Example stragglers:" list

    def feed(self, line: LogLine) -> str | None:
        task = task_name(line.text)
        listing = self._listing.get(line.source, False)
        self._listing[line.source] = _STRAGGLERS in line.text or (listing and task is not None)
        return task if listing and task else None


# A straggler that connects this soon after it was first listed was only starting: the
# coordination service lists the tasks not yet there at every start-up (0.2-1 s measured).
ROUTINE_WAIT_S = 10.0


def waiting_for(lines: list[LogLine]) -> tuple[LogLine, list[str]] | None:
    """The last straggler report in ``lines`` (one worker's, in order): the
    header line and the missing tasks as ``worker-N`` (or ``ps-N``...). A task
    that connected within ROUTINE_WAIT_S of being first listed was not missing,
    only starting; one that came later was (the wait was the symptom). Times are
    the lines' ``t`` (0 where unknown: then a connect never clears a report)."""
    found = None
    listed_since: dict[str, float] = {}  # task -> when a report first listed it, while it stays listed
    for i, line in enumerate(lines):
        if found is not None and (_ALL_CONNECTED.search(line.text) or _CONNECTED.search(line.text)):
            match = _CONNECTED.search(line.text)
            came = [f"{match.group(1)}-{match.group(2)}"] if match else list(found[1])
            routine = [
                t
                for t in came
                if t in found[1] and line.t > 0 and 0 <= line.t - listed_since.get(t, 0.0) <= ROUTINE_WAIT_S
            ]
            for task in came:
                listed_since.pop(task, None)
            tasks = [t for t in found[1] if t not in routine]
            found = (found[0], tasks) if tasks else None
            continue
        if _STRAGGLERS not in line.text:
            continue
        tasks = []
        for following in lines[i + 1 :]:
            task = task_name(following.text)
            if task is None:
                break
            tasks.append(task)
        if tasks:
            found = (line, tasks)
            for task in tasks:
                listed_since.setdefault(task, line.t)
    return found


def _reports(timeline_lines: list[LogLine]) -> dict[str, tuple[LogLine, list[str]]]:
    """Each worker's last straggler report, by source."""
    by_source: dict[str, list[LogLine]] = {}
    for line in timeline_lines:
        by_source.setdefault(line.source, []).append(line)
    return {source: found for source, lines in sorted(by_source.items()) if (found := waiting_for(lines))}


def why_missing(task: str, events: list[Event], *, live: bool = False) -> tuple[str, Event | None]:
    """What the run shows of a missing task (``worker-2``): never started, exited,
    or running and where its own log stopped; with the event that shows it.
    ``live``: said while the run goes on, when a silent task may only be slow."""
    own = [e for e in events if e.source == task]
    # Only its current life: after a restart, the previous container's exit is not why it is missing now.
    restarts = [i for i, e in enumerate(own) if isinstance(e, RestartEvent)]
    if restarts:
        own = own[restarts[-1] + 1 :]
        if not own:
            return "restarted, nothing from it since", None
    if not own:
        if live:
            return "nothing from it yet", None
        return "nothing from it: listed in the cluster, but no such worker ran", None
    exits = [e for e in own if isinstance(e, ExitEvent)]
    if exits:
        return f"it exited {exits[-1].exit_code}", exits[-1]
    servers = [e for e in own if isinstance(e, LogLine) and _SERVER in e.text]
    if servers:
        target = servers[-1].text.split(_SERVER, 1)[1].strip()
        return f"running, its server at {target}: it has not reached the chief", servers[-1]
    return "running", None


def why_missing_with_link(
    task: str, events: list[Event], history: list[Event], now: float, *, live: bool = False
) -> tuple[str, list[Event]]:
    """``why_missing`` and what the proxy saw of the task's link up to ``now``
    (``history``: the run's events from its start, for when the link began)."""
    why, shown = why_missing(task, events, live=live)
    proof = [shown] if shown else []
    links = describe_links(task, history, now)
    if links is not None:
        why = f"{why}; proxy: {links[0]}"
        proof += links[1]
    return why, proof


def describe_stragglers(
    timeline_lines: list[LogLine],
    events: list[Event] | None = None,
    history: list[Event] | None = None,
) -> tuple[str, list[Event]]:
    """A sentence naming the missing peers per reporting worker, and its proof;
    with the run's ``events``, what each missing peer was doing, and with its
    ``history`` (every event from the run's start), what the proxy saw of its link."""
    reports = _reports(timeline_lines)
    proof: list[Event] = [header for header, _ in reports.values()]
    parts = []
    for source, (header, tasks) in reports.items():
        named = []
        for task in tasks:
            if events is None:
                named.append(task)
                continue
            why, shown = why_missing_with_link(task, events, history or events, header.t)
            named.append(f"{task} ({why})")
            proof += shown
        parts.append(f"{source}'s coordination service was still waiting for {', '.join(named)}")
    return "; ".join(parts), proof


def missing_tasks(timeline_lines: list[LogLine]) -> set[str]:
    """Every task some worker's last straggler report names."""
    return {task for _, tasks in _reports(timeline_lines).values() for task in tasks}
