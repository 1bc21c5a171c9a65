"""Who is missing: the tasks (or ranks, or peers) the logs show the others
waiting for or losing, read from any worker's lines.

    TF 1.x   CreateSession still waiting for response from worker: /job:ps/replica:0/task:0
    TF 2.x   Example stragglers: /job:worker/replica:0/task:1   (coordination service)
             /job:worker/replica:0/task:1 seems down | is down, aborting collectives
             Task /job:worker/replica:0/task:37 heartbeat timeout
             Device /job:worker/replica:0/task:1/device:GPU:0 current incarnation doesn't match
             remote target /job:ps/replica:0/task:0 ... Socket closed | failed to connect
    Horovod  [missing ranks: 1]   Stalled ranks: 4: [...]   [ready ranks: 5, 6, 3, 1, 4, 0]
    mpirun   process rank 7 ... exited on signal 9 (Killed)
    NCCL     Call to connect failed : Connection timed out (with the peer's address)
    gRPC     failed to connect to 'ipv4:10.160.113.47:2222' | "target_address":"ipv4:10.0.1.4:14417"

A task is named as ``worker-1``, ``ps-0``, ``chief-0``; a Horovod or MPI rank
as ``rank 4``; a peer known only by address as that address.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chaos.diagnose.observations import Evidence, WorkerObservations
from chaos.events import LogLine
from chaos.stragglers import waiting_for
from chaos.workload.grammar import line_time, unwrap

_T = r"/job:(?P<job>\w+)/replica:\d+/task:(?P<task>\d+)"
# TF 1's master at bring-up: "CreateSession still waiting for response from worker: /job:ps/replica:0/task:0"
_STILL_WAITING = re.compile(r"still waiting for response from \w+:?\s*" + _T)

# (pattern, what it says of the task it names, strength: higher is surer)
_TASK_FORMS: list[tuple[re.Pattern, str, int]] = [
    (_STILL_WAITING, "never answered: others wait for it at start", 3),
    (re.compile(_T + r" (?:seems down|is down)"), "stopped answering: declared down", 4),
    (re.compile(r"Task " + _T + r" heartbeat timeout"), "stopped sending heartbeats", 4),
    (re.compile(_T + r" has been set to ERROR"), "set to ERROR by the coordination service", 4),
    (
        re.compile(r"Device " + _T + r"/device:\S+ current incarnation doesn't match"),
        "restarted while the others ran on",
        4,
    ),
    (re.compile(r"Remote function on worker " + _T + r" failed"), "its remote calls failed", 2),
    (re.compile(r"remote target " + _T), "a call to it failed", 1),
]
_MISSING_RANKS = re.compile(r"\[missing ranks: (?P<ranks>[\d, ]+)\]")
_READY_RANKS = re.compile(r"\[ready ranks: (?P<ranks>[\d, ]+)\]")
_STALLED_RANK = re.compile(r"^\s*(?:\[[^\]]*\]<std\w+>:)?\s*(?P<rank>\d+): \[")
_MPI_RANK = re.compile(r"process rank (?P<rank>\d+) .*exited on signal (?P<signal>\d+)")
_ADDRESS = re.compile(
    r"failed to connect to '?ipv4:(?P<addr>[\d.]+:\d+)|target_address\"?:\"?ipv4:(?P<addr2>[\d.]+:\d+)|"
    r"(?:connect|recv|send)(?: to| from)? (?P<addr3>\d+\.\d+\.\d+\.\d+)(?:<\d+>)? failed"
)


@dataclass(frozen=True)
class Missing:
    who: str  # worker-1, ps-0, rank 4, 10.0.1.4:14417
    what: str
    evidence: Evidence
    strength: int


def _ranks(text: str) -> list[int]:
    return [int(r) for r in re.findall(r"\d+", text)]


def straggler_report(lines: list[Evidence], *, timed: bool = True) -> tuple[Evidence, list[str]] | None:
    """The last report of the coordination service's stragglers in these lines
    (one worker's; ``chaos.stragglers.waiting_for`` reads it, as for a run) and
    the line that says it, with the tasks it lists. ``timed``: each line is
    dated by its own time stamp, so a task that connected within seconds of
    being listed was only starting; untimed, a connect never clears a report."""
    report = waiting_for(
        [LogLine(t=(line_time(unwrap(e.text)) or 0.0) if timed else 0.0, source="", text=e.text) for e in lines]
    )
    if not report:
        return None
    header, tasks = report
    return next(e for e in lines if e.text == header.text), tasks


def missing_tasks(lines: list[Evidence]) -> dict[str, Evidence]:
    """The tasks a waiting worker says are missing (``worker-1``) in these lines
    (one generation's: a healthy bring-up after a restart names its own
    stragglers), and the line that says it: TF 2's coordination service lists
    ``Example stragglers:``, TF 1's master logs ``CreateSession still waiting
    for response from worker``. (What ``HangSignature`` checks its ``missing``
    against; ``who_is_missing`` below reads every form, for the user.)"""
    found: dict[str, Evidence] = {}
    report = straggler_report(lines, timed=False)
    if report:
        where, tasks = report
        found.update({task: where for task in tasks})
    for e in lines:
        match = _STILL_WAITING.search(e.text)
        if match:
            found.setdefault(f"{match['job']}-{match['task']}", e)
    return found


def who_is_missing(workers: list[WorkerObservations]) -> list[Missing]:
    """Every task the logs show missing, surest first; each named once, by its surest line."""
    found: list[Missing] = []
    for w in workers:
        lines = [e for e, _ in w.flagged]
        # every coordination line (the flagged ones keep a repeated line once, and a restarted job repeats them)
        report_lines = w.coordination or lines
        report = straggler_report(report_lines)
        if report:
            where, tasks = report
            found += [
                Missing(
                    task,
                    "had not connected: the coordination service listed it as a straggler while the others waited",
                    where,
                    4,
                )
                for task in tasks
            ]
        stalled = False
        for e in lines:
            text = e.text
            for pattern, what, strength in _TASK_FORMS:
                match = pattern.search(text)
                if match:
                    found.append(Missing(f"{match['job']}-{match['task']}", what, e, strength))
                    break
            match = _MISSING_RANKS.search(text)
            if match:
                found += [
                    Missing(f"rank {r}", "never submitted its part of a collective", e, 3)
                    for r in _ranks(match["ranks"])
                ]
            match = _READY_RANKS.search(text)
            if match:
                ready = set(_ranks(match["ranks"]))
                gaps = [r for r in range(max(ready)) if r not in ready]
                # One rank below the highest ready one and not ready is the one the others wait
                # for (it exists: a higher rank does); several, or only the top, cannot be told apart.
                found += [
                    Missing(f"rank {r}", "not among the ranks ready for a collective", e, 3 if len(gaps) == 1 else 2)
                    for r in gaps
                ]
            if "Stalled ranks:" in text:
                stalled = True
                continue
            if stalled:
                match = _STALLED_RANK.match(text)
                if match:
                    found.append(Missing(f"rank {match['rank']}", "stalled: the others wait for its collectives", e, 3))
                    continue
                stalled = False
            match = _MPI_RANK.search(text)
            if match:
                found.append(Missing(f"rank {match['rank']}", f"exited on signal {match['signal']}", e, 4))
            match = _ADDRESS.search(text)
            if match:
                addr = match["addr"] or match["addr2"] or match["addr3"]
                found.append(Missing(addr, "could not be reached", e, 1))
    best: dict[str, Missing] = {}
    for m in found:
        if m.who not in best or m.strength > best[m.who].strength:
            best[m.who] = m
    return sorted(best.values(), key=lambda m: -m.strength)
