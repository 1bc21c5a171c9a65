"""The job's own counters: the same on every worker, and restored as saved.

A custom loop counts more than steps: examples, positive labels, tokens, in an
integer ``tf.Variable`` it checkpoints. Under MultiWorkerMirroredStrategy a count
updated inside ``strategy.run`` is kept as its synchronization and aggregation say,
and two of the ways are silent (docs/findings.md, "A counter variable under each
aggregation"): a plain ``tf.Variable`` (aggregation NONE) keeps each worker's own
count in copies that differ, and every worker resumes from the chief's; an
integer on-read SUM counter (how Keras keeps a metric's totals) is saved as the
sum and restored as the sum divided by the workers on each, losing the remainder.

The agent reports each counter at every save and every restore
(``CheckpointEvent.job_counters``, ``job_counter_parts``). A counter's *reading* is
what ``int(counter)`` gives the job: a worker's own value, or, for an on-read SUM
counter, the sum of every worker's part. Two pairs of checks: ``job_counters_differ``
(a symptom) and ``job_counters_agree``; ``job_counters_changed_by_restore`` (a
symptom) and ``job_counters_restored``.
"""

from __future__ import annotations

from collections import defaultdict
from typing import ClassVar

from pydantic import Field

from chaos.checks.base import RecoveryCheck, SymptomCheck, register_check
from chaos.checks.symptom_restore import first_generation_after
from chaos.checks.verdict import Undecidable, Verdict, failed, passed
from chaos.events import CheckpointEvent, Event, RestoredEvent
from chaos.timeline import Timeline

NO_COUNTERS = (
    "no worker reported a counter of its own (no integer variable at the top of its tf.train.Checkpoint, "
    "or no agent on a custom loop)"
)


def _counted(e: Event) -> bool:
    return e.worker is not None and bool(e.job_counters or e.job_counter_parts)


def reading(events: dict[int, Event], name: str, worker: int | None = None) -> int | None:
    """What ``int(name)`` read: ``worker``'s own value (the lowest worker's for None), else the sum of
    every worker's part of an on-read SUM counter (None unless all ``workers`` reported theirs)."""
    own = {w: e.job_counters[name] for w, e in events.items() if name in e.job_counters}
    if own:
        return own.get(worker) if worker is not None else own[min(own)]
    parts = [e.job_counter_parts.get(name) for e in events.values()]
    return sum(parts) if parts and None not in parts else None


def names_in(events, wanted: list[str]) -> list[str]:
    found = sorted({n for e in events for n in (*e.job_counters, *e.job_counter_parts)})
    return [n for n in found if n in wanted] if wanted else found


def require(events, wanted: list[str]) -> None:
    """Undecidable when the counters a scenario names are in none of ``events`` (never a vacuous pass)."""
    missing = [n for n in wanted if n not in names_in(events, [n])]
    if missing:
        raise Undecidable(f"no worker reported the counter {', '.join(missing)} (its saves and restores hold none)")


# -- the same on every worker ------------------------------------------------


def saves(timeline: Timeline) -> list[dict[int, CheckpointEvent]]:
    """The saves every worker reported counters at: per (checkpoint, step) the last event of each worker."""
    by_save: dict[tuple[str, int], dict[int, CheckpointEvent]] = defaultdict(dict)
    for e in timeline.of(CheckpointEvent):
        if _counted(e):
            by_save[(e.path, e.step)][e.worker] = e
    return [row for row in by_save.values() if len(row) > 1]


def disagreements(
    timeline: Timeline, wanted: list[str]
) -> tuple[list[str], list[Event], list[dict[int, CheckpointEvent]]]:
    """(what differed, its evidence, the saves compared) over ``timeline``."""
    rows = saves(timeline)
    if not rows:
        raise Undecidable(NO_COUNTERS + " at a save more than one worker reported")
    require([e for row in rows for e in row.values()], wanted)
    said, evidence = [], []
    for row in rows:
        for name in names_in(row.values(), wanted):
            values = {w: e.job_counters[name] for w, e in sorted(row.items()) if name in e.job_counters}
            if len(set(values.values())) > 1:
                first = next(iter(row.values()))
                each = ", ".join(f"worker-{w} {v}" for w, v in values.items())
                said.append(f"{name} read {each} at {first.path} (step {first.step})")
                evidence += list(row.values())
    return said, evidence, rows


@register_check
class JobCountersDiffer(SymptomCheck):
    """In the fault window, a counter the job checkpoints read differently on two workers at the same save."""

    name: ClassVar[str] = "job_counters_differ"
    evidence: ClassVar[frozenset[str]] = frozenset({"job_counters", "checkpoints"})
    counters: list[str] = Field(default_factory=list, description="the counters to compare (default: every one)")

    def judge(self, timeline: Timeline) -> Verdict:
        window = self.window(timeline)
        said, evidence, rows = disagreements(timeline.between(window.start, window.end), self.counters)
        if said:
            return passed(f"the job's counters differed between workers: {said[0]} ({len(said)} in all)", evidence[:4])
        return failed(f"every counter read the same on every worker at all {len(rows)} saves in the fault window")


@register_check
class JobCountersAgree(RecoveryCheck):
    """After recovery, every counter the job checkpoints read the same on every worker at each save."""

    name: ClassVar[str] = "job_counters_agree"
    evidence: ClassVar[frozenset[str]] = frozenset({"job_counters", "checkpoints"})
    counters: list[str] = Field(default_factory=list, description="the counters to compare (default: every one)")

    def judge(self, timeline: Timeline) -> Verdict:
        after = timeline.between(self.recovery_start(timeline))
        said, evidence, rows = disagreements(after, self.counters)
        if said:
            return failed(
                f"the job's counters differ between workers: {said[0]} ({len(said)} in all); a counter updated "
                "inside strategy.run with aggregation NONE or ONLY_FIRST_REPLICA keeps each worker's own",
                evidence[:4],
            )
        last = rows[-1]
        shown = ", ".join(f"{n} {reading(last, n)}" for n in names_in(last.values(), self.counters))
        return passed(
            f"every counter read the same on every worker at all {len(rows)} saves "
            f"(at {next(iter(last.values())).path}: {shown})",
            list(last.values()),
        )


# -- restored as saved ---------------------------------------------------------


def restores(timeline: Timeline, within: Timeline) -> list[tuple[dict[int, RestoredEvent], dict[int, CheckpointEvent]]]:
    """Each restore in ``within`` (the restored events of one generation naming one checkpoint), with
    the save it read: the last checkpoint event of that name before it, of each worker (``timeline``)."""
    groups: dict[tuple[float, str], dict[int, RestoredEvent]] = defaultdict(dict)
    for e in within.of(RestoredEvent):
        if _counted(e):
            groups[(timeline.generation_bounds(e.t)[0], e.checkpoint)][e.worker] = e
    out = []
    for (_, name), row in groups.items():
        first = min(e.t for e in row.values())
        saved: dict[int, CheckpointEvent] = {}
        for e in timeline.of(CheckpointEvent):
            if e.t < first and e.path == name and _counted(e):
                saved[e.worker] = e
        if saved:
            out.append((row, saved))
    return out


def held_in(saved: dict[int, CheckpointEvent], name: str, workers) -> int | None:
    """What the checkpoint file holds of ``name``: the chief's own value (the chief writes the file; the
    other workers' copies of a plain counter may differ), or the sum of the parts of an on-read SUM
    counter of every one of ``workers``. None when a save that is needed was not reported (its worker
    stopped between its write and its report: a redeploy that lands on a save)."""
    if any(name in e.job_counters for e in saved.values()):
        return reading(saved, name, 0) if 0 in saved else None
    return reading(saved, name) if set(workers) <= set(saved) else None


def changed(
    timeline: Timeline, within: Timeline, wanted: list[str]
) -> tuple[list[str], list[Event], list[tuple[dict[int, RestoredEvent], dict[int, CheckpointEvent]]]]:
    """(what a restore changed, its evidence, the restores compared with their saves)."""
    pairs = restores(timeline, within)
    if not pairs:
        raise Undecidable(NO_COUNTERS + " at a restore of a save it reported")
    require([e for row, saved in pairs for e in (*row.values(), *saved.values())], wanted)
    said, evidence, compared = [], [], 0
    for row, saved in pairs:
        for name in names_in([*row.values(), *saved.values()], wanted):
            held = held_in(saved, name, row)
            if held is None:
                continue
            compared += 1
            workers = sorted(row) if any(name in e.job_counters for e in row.values()) else [None]
            for w in workers:
                got = reading(row, name, w)
                if got is not None and got != held:
                    who = f"worker-{w}" if w is not None else "the workers' parts summed"
                    first = next(iter(row.values()))
                    said.append(
                        f"{name} was {held} at the save of {first.checkpoint}, {got} on {who} after its restore"
                    )
                    evidence += [saved.get(0, next(iter(saved.values()))), *row.values()]
                    break
    if not compared:
        raise Undecidable(
            "no restore could be compared with its save: no save restored was reported by the workers that "
            "tell what it holds (the chief, which writes the file; every worker for an on-read SUM counter): "
            "a worker stopped between its write and its report"
        )
    return said, evidence, pairs


@register_check
class JobCountersChangedByRestore(SymptomCheck):
    """After the first restart that follows the fault, a restore gave a job's counter another value than its save held."""

    # Judged after the restart, as restore_failed is: a restore is where a counter's way of saving shows.

    name: ClassVar[str] = "job_counters_changed_by_restore"
    evidence: ClassVar[frozenset[str]] = frozenset({"job_counters", "checkpoints", "restored"})
    counters: list[str] = Field(default_factory=list, description="the counters to compare (default: every one)")

    def judge(self, timeline: Timeline) -> Verdict:
        _, generation = first_generation_after(
            timeline, self.window(timeline), "nothing was restarted after the fault: nothing was restored"
        )
        said, evidence, _ = changed(timeline, Timeline(timeline.info, generation), self.counters)
        if said:
            return passed(f"the restore after the restart changed the job's counter: {said[0]}", evidence[:4])
        return failed("every counter read as saved after the restore that followed the restart")


@register_check
class JobCountersRestored(RecoveryCheck):
    """After recovery, every counter the job checkpoints read after each restore what its save held."""

    name: ClassVar[str] = "job_counters_restored"
    evidence: ClassVar[frozenset[str]] = frozenset({"job_counters", "checkpoints", "restored"})
    counters: list[str] = Field(default_factory=list, description="the counters to compare (default: every one)")

    def judge(self, timeline: Timeline) -> Verdict:
        after = timeline.between(self.recovery_start(timeline))
        said, evidence, pairs = changed(timeline, after, self.counters)
        if said:
            return failed(
                f"a restore changed the job's counter: {said[0]}; an integer on-read SUM counter is restored "
                "as the sum divided by the workers, the remainder lost",
                evidence[:4],
            )
        row, saved = pairs[-1]
        first = next(iter(row.values()))
        shown = ", ".join(f"{n} {reading(row, n)}" for n in names_in(row.values(), self.counters))
        return passed(
            f"every counter read as saved after all {len(pairs)} restores (after {first.checkpoint}: {shown})",
            [*saved.values(), *row.values()],
        )
