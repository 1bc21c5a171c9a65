"""Trends no single line shows: a loss that explodes without ever becoming NaN.

Training logs print the loss on every few steps in a handful of forms
(``loss = 3.54, step = 5800``, ``cross_entropy = 3936.8``, ``- loss: 0.1038``,
``train loss:1.10886``, ``Total loss is 721.2``); the reader keeps them by name
(``observations.LossSeries``). A loss that diverges may climb by orders of
magnitude for hundreds of steps before it overflows to NaN, or never
overflow at all; the step lines then say more than any error line. Two
readings, each needing a peak of at least ``FLOOR``:

* in one log, the values of the later half peak at 100 times the lowest early
  value and above every early value (a loss that grows, not one that starts
  high and falls);
* across the logs of one job (ranks, replicas), one worker's typical value of a
  loss is 100 times another's: in synchronous training the replicas' losses
  stay close, so one of them diverged.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from chaos.checks.verdict import Verdict
from chaos.diagnose.history import LogHistory
from chaos.diagnose.observations import Evidence, WorkerObservations
from chaos.diagnose.signatures import EXCERPT, Signature

MIN_VALUES = 4
GROWTH = 100.0
FLOOR = 10.0  # a peak below this is no explosion whatever the ratio (0.001 -> 0.2)


def growing(values: list[tuple[float, Evidence]]) -> Evidence | None:
    """The line where a loss peaks after growing a hundredfold, if it does."""
    if len(values) < MIN_VALUES:
        return None
    early = values[: max(2, len(values) // 4)]
    late = values[len(values) // 2 :]
    low = min(v for v, _ in early)
    peak, where = max(late, key=lambda item: item[0])
    if peak >= FLOOR and peak >= GROWTH * max(low, 1e-3) and peak > max(v for v, _ in early):
        return where
    return None


def apart(workers: list[WorkerObservations]) -> list[Evidence]:
    """Two workers' lines whose typical values of one loss are a hundredfold apart."""
    by_key: dict[str, list[tuple[float, Evidence]]] = {}
    for w in workers:
        for key, series in w.losses.items():
            values = series.values()
            if len(values) >= 2:
                by_key.setdefault(key, []).append((statistics.median(v for v, _ in values), values[-1][1]))
    for typical in by_key.values():
        if len(typical) < 2:
            continue
        high, low = max(typical, key=lambda t: t[0]), min(typical, key=lambda t: t[0])
        if high[0] >= FLOOR and high[0] >= GROWTH * max(low[0], 1e-3):
            return [high[1], low[1]]
    return []


@dataclass(frozen=True)
class LossExplodesSignature(Signature):
    """The loss grows by orders of magnitude (no NaN needed), or one replica's loss is far above the others'."""

    weight: float = 3.0

    def label(self) -> str:
        return (
            "the loss grows a hundredfold or more over the logged steps, or one replica's is a hundredfold the others'"
        )

    def judge(self, logs: LogHistory) -> Verdict:
        workers = logs.workers
        hits: list[Evidence] = []
        for w in workers:
            for series in w.losses.values():
                where = growing(series.values())
                if where is not None:
                    hits.append(where)
                    break
        hits += apart(workers)
        return self.seen(hits[:2]) if hits else self.cannot_tell("no loss grows so, or stands so far apart")


def _line(evidence: Evidence) -> tuple[str, int] | None:
    origin, _, number = evidence.where.rpartition(":")
    return (origin, int(number)) if number.isdigit() else None


def training_began(w: WorkerObservations) -> tuple[str, int] | None:
    """Where the worker's log first prints a loss value: training ran from there on."""
    firsts = [_line(series.early[0][1]) for series in w.losses.values() if series.early]
    firsts = [f for f in firsts if f is not None]
    return min(firsts, key=lambda f: f[1]) if firsts else None


@dataclass(frozen=True)
class BringUpShapeSignature(Signature):
    """A line of these shapes printed before the worker trained (or by a worker
    that never printed a loss). A connection refused or timed out at bring-up may
    be a blocked port; the same line after training ran is a consequence: the
    port was reachable, and the peer behind it went away (its own log says why)."""

    shapes: tuple[str, ...]
    weight: float = 3.0
    why: str = ""

    def label(self) -> str:
        return self.why or "a line like " + " | ".join(self.shapes) + " before training began"

    def judge(self, logs: LogHistory) -> Verdict:
        workers = logs.workers
        hits = []
        for w in workers:
            began = training_began(w)
            for e in w.shaped(self.shapes):
                at = _line(e)
                if began is None or at is None or at[0] != began[0] or at[1] < began[1]:
                    hits.append(e)
        return self.seen(hits[:4]) if hits else self.cannot_tell(EXCERPT)
