"""Restart loops: the same root cause again after each restart, with no step of
progress. A job in one restarts for as long as its budget lasts (Megatron-LM#5281:
44 restarts at ~90 s a cycle on a corrupt checkpoint), and each cycle tells
nothing the last did not: the answer is to stop and change something.

LOOP_CYCLES = 2: two restarts in a row that met the same root cause and made no
step. One is not enough: the first restart after a fault often meets the fault's
aftermath rather than the fault (measured: in
corrupt-checkpoint-fails-every-restore-until-restarts-run-out the first run dies of
the kill, the restarts of the restore), and a single failed restart can be chance (a
peer still coming up, a heal not applied yet). Two identical ones with no progress
between them are already the loop (that scenario's budget, max_restarts 2, shows
exactly two), and a third would cost another whole bring-up (16-22 s here, ~90 s
on a big job) to say the same.

Pure functions of the attributions (``chaos.diagnose.attribution``); ``from_events``
reads a run's events the way ``chaos diagnose`` reads its logs, so the runner's
report says the same as ``chaos diagnose`` on the report's logs.
"""

from __future__ import annotations

from dataclasses import dataclass

from chaos.diagnose.attribution import Attribution, attribute
from chaos.diagnose.families import Outlook, outlook
from chaos.diagnose.logs import WorkerLog
from chaos.diagnose.observations import Evidence
from chaos.diagnose.observe import observe_all
from chaos.events import Event
from chaos.events_text import log_lines

LOOP_CYCLES = 2


@dataclass(frozen=True)
class Loop:
    cause: str  # the root cause as said: "IndexError: Read less bytes than requested"
    root_worker: str | None
    cycles: tuple[int, ...]  # the restarted cycles that met it
    evidence: tuple[Evidence, ...]  # its root line in each of them

    def said(self) -> str:
        where = f" on {self.root_worker}" if self.root_worker else " on every worker"
        return (
            f"stop retrying: restart loop: {self.cause}{where} again after each of the last "
            f"{len(self.cycles)} restarts, with no step of progress"
        )


def _progress(cycle: Attribution, best: int | None) -> bool:
    """Whether the cycle trained: a step past the best any earlier cycle reached (a
    Keras progress line with no step number counts: it cannot tell)."""
    if cycle.max_step is not None:
        return best is None or cycle.max_step > best
    return cycle.steps > 0


def restart_loop(attributions: list[Attribution], n: int = LOOP_CYCLES) -> Loop | None:
    """The loop the last ``n`` restarted cycles show, if they all failed with the same
    root cause and none made a step of progress; else None."""
    if len(attributions) < n + 1:
        return None  # n restarts need n cycles after the first run
    tail = attributions[-n:]
    best = max((a.max_step for a in attributions[:-n] if a.max_step is not None), default=None)
    for cycle in tail:
        if not cycle.failed or not cycle.cause or _progress(cycle, best):
            return None
    if len({c.cause for c in tail}) != 1:
        return None
    last = tail[-1]
    said = last.root.what if last.root is not None else last.no_root
    return Loop(
        said, last.root_worker, tuple(c.cycle for c in tail), tuple(c.root.evidence for c in tail if c.root is not None)
    )


def worker_logs_of(events: list[Event], scenario: str) -> list[WorkerLog]:
    """Each worker's log as the report writes it (``chaos.report.outputs.worker_logs``): its
    lines and events, and the runner's teardown line in every one. The proxy's lines are no
    worker's (the self-check reads the ``worker-N log`` artifacts only, and so does this)."""
    return [
        WorkerLog(source, f"{scenario}/{source}.log", tuple(text), tuple(range(1, len(text) + 1)))
        for source, text in sorted(log_lines(events).items())
        if source.startswith("worker-")
    ]


def from_events(events: list[Event], scenario: str) -> tuple[list[Attribution], Loop | None]:
    """The attributions and the restart loop of a run, from its events."""
    cycles = attribute(observe_all(worker_logs_of(list(events), scenario)))
    return cycles, restart_loop(cycles)


def retry_outlook(family: str, cycles: list[Attribution], loop: Loop | None) -> Outlook:
    """The family's outlook (``chaos.diagnose.families``), for a failure before any step of its
    generation when the last failed cycle's was; a restart loop seen overrides it."""
    if loop is not None:
        return Outlook(False, f"the logs show it already: {loop.said()}")
    failed = [c for c in cycles if c.failed]
    return outlook(family, before_first_step=bool(failed) and failed[-1].before_first_step)
