"""Symptoms of faults TF says nothing about: skewed environments, reused data,
workers that trained apart, and the absence of any error itself."""

from __future__ import annotations

from collections import defaultdict
from typing import ClassVar

from pydantic import Field

from chaos.checks.base import SymptomCheck, register_check
from chaos.checks.select import first_by_worker, names
from chaos.checks.verdict import Undecidable, Verdict, failed, passed
from chaos.events import DoneEvent, ErrorEvent, ExitEvent, StartEvent, StepEvent
from chaos.fingerprints import skews
from chaos.timeline import Timeline


def steps_by_number(steps: list[StepEvent]) -> dict[int, dict[int, StepEvent]]:
    """step number -> worker -> its (last) step event with that number."""
    out: dict[int, dict[int, StepEvent]] = defaultdict(dict)
    for e in steps:
        if e.worker is not None:
            out[e.step][e.worker] = e
    return out


def common_steps(steps: list[StepEvent], workers: list[int]) -> list[dict[int, StepEvent]]:
    """The steps every one of ``workers`` reported, in step order."""
    by_step = steps_by_number(steps)
    return [by_step[s] for s in sorted(by_step) if all(w in by_step[s] for w in workers)]


def lanes(events: dict[int, StepEvent]) -> dict[str, tuple[str, float | None]]:
    """(batch digest, local loss) per lane of one step: each worker, or each of
    its replicas when it runs several in one container (MirroredStrategy)."""
    out: dict[str, tuple[str, float | None]] = {}
    for w, e in sorted(events.items()):
        if len(e.replica_batch_digests) > 1:
            losses = e.replica_local_losses
            for r, digest in enumerate(e.replica_batch_digests):
                out[f"worker-{w} replica-{r}"] = (digest, losses[r] if r < len(losses) else None)
        else:
            out[f"worker-{w}"] = (e.batch_digest, e.local_loss)
    return out


def _loss(value: float | None) -> str:
    return "?" if value is None else f"{value:.6g}"


def describe_step(events: dict[int, StepEvent]) -> str:
    step = next(iter(events.values())).step
    parts = ", ".join(f"{lane} batch {d[:12]} local loss {_loss(l)}" for lane, (d, l) in lanes(events).items())
    return f"step {step}: {parts}"


def one_lane(rows: list[dict[int, StepEvent]]) -> bool:
    return any(len(lanes(row)) < 2 for row in rows)


@register_check
class IdenticalBatches(SymptomCheck):
    """Every worker trained on the same batches: identical batch digests and local losses on every step."""

    name: ClassVar[str] = "identical_batches"
    evidence: ClassVar[frozenset[str]] = frozenset({"batch_digests"})
    min_steps: int = Field(5, ge=1, description="at least this many steps reported by every worker in the window")

    def judge(self, timeline: Timeline) -> Verdict:
        window = self.window(timeline)
        workers = timeline.workers()
        inside = timeline.between(window.start, window.end)
        rows = common_steps(inside.of(StepEvent), workers)
        if one_lane(rows) or not workers:
            raise Undecidable("one worker with one replica: there is nothing to compare its batches with")
        if len(rows) < self.min_steps:
            raise Undecidable(
                f"only {len(rows)} steps reported by every worker in the fault window; need {self.min_steps}",
                [window.inject],
            )
        for row in rows:
            digests = {d for d, _ in lanes(row).values()}
            losses = {loss for _, loss in lanes(row).values()}
            if len(digests) > 1 or len(losses) > 1:
                return failed(f"workers trained on different data: {describe_step(row)}", list(row.values()))
        first, last = rows[0], rows[-1]
        return passed(
            f"all {len(rows)} steps in the window had one batch and one local loss on every worker "
            f"(first {describe_step(first)})",
            [window.inject, *first.values(), *last.values()],
        )


@register_check
class EnvironmentSkew(SymptomCheck):
    """Given workers' environment fingerprints differ from the others' (in given keys) as they start."""

    name: ClassVar[str] = "environment_skew"
    evidence: ClassVar[frozenset[str]] = frozenset({"start"})
    workers: list[int] = Field(min_length=1, description="the workers that must differ")
    keys: list[str] = Field(
        default_factory=list,
        description="fingerprint keys that must differ, e.g. pkg:tensorflow-cpu, env:LD_LIBRARY_PATH (default: any)",
    )

    def judge(self, timeline: Timeline) -> Verdict:
        window = self.window(timeline)
        starts = first_by_worker(timeline.between(window.start, window.end).of(StartEvent))
        others = [w for w in sorted(starts) if w not in self.workers]
        missing = [w for w in self.workers if w not in starts]
        if missing or not others:
            raise Undecidable(
                f"no start event in the fault window from {names(missing) or 'a worker to compare with'}",
                [window.inject, *starts.values()],
            )
        baseline = others[0]
        found = {s.worker: s for s in skews(starts, baseline)}
        for w in self.workers:
            skew = found.get(w)
            if skew is None:
                return failed(
                    f"worker-{w} has the same environment as worker-{baseline}: no skew reached it",
                    [window.inject, starts[w], starts[baseline]],
                )
            absent = [k for k in self.keys if k not in skew.diffs]
            if absent:
                return failed(
                    f"{skew.describe()}; but not in {', '.join(absent)}", [window.inject, starts[w], starts[baseline]]
                )
        return passed(
            "; ".join(found[w].describe() for w in self.workers),
            [window.inject, *(starts[w] for w in self.workers), starts[baseline]],
        )


@register_check
class NoError(SymptomCheck):
    """No worker raised an error or exited non-zero in the fault window: the fault is silent."""

    name: ClassVar[str] = "no_error"
    evidence: ClassVar[frozenset[str]] = frozenset({"errors"})

    def judge(self, timeline: Timeline) -> Verdict:
        window = self.window(timeline)
        inside = timeline.between(window.start, window.end)
        loud = [e for e in inside.events if isinstance(e, ErrorEvent) or (isinstance(e, ExitEvent) and e.exit_code)]
        if loud:
            return failed(
                f"{len(loud)} errors or failed exits in the fault window, the first from {loud[0].source}",
                [window.inject, *loud[:3]],
            )
        steps = inside.of(StepEvent)
        if not steps:
            raise Undecidable("no training step in the fault window: silence proves nothing", [window.inject])
        return passed(
            f"no error and no failed exit while {len(steps)} step events were reported in the fault window",
            [window.inject, steps[0], steps[-1]],
        )


@register_check
class WeightsDiverged(SymptomCheck):
    """Workers finished in the fault window with different weights: each trained on its own, not together."""

    name: ClassVar[str] = "weights_diverged"
    evidence: ClassVar[frozenset[str]] = frozenset({"done", "weights_digest"})

    def judge(self, timeline: Timeline) -> Verdict:
        window = self.window(timeline)
        done = first_by_worker(timeline.between(window.start, window.end).of(DoneEvent))
        if len(done) < 2:
            raise Undecidable(
                f"{len(done)} worker(s) finished in the fault window ({names(sorted(done)) or 'none'}); "
                "at least two must, to compare their weights",
                [window.inject, *done.values()],
            )
        digests = ", ".join(f"worker-{w} {e.weights_digest[:12]}" for w, e in sorted(done.items()))
        if len({e.weights_digest for e in done.values()}) == 1:
            return failed(
                f"every worker finished with the same weights ({digests}): they trained together",
                [window.inject, *done.values()],
            )
        return passed(f"workers finished with different weights: {digests}", [window.inject, *done.values()])
