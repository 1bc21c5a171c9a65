"""Whether the recovered run ended where it should: in sync, complete, exact."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from chaos.checks.base import RecoveryCheck, register_check
from chaos.checks.recovery_state import restored_in
from chaos.checks.select import last_by_worker, names, short_digest
from chaos.checks.symptom_nonfinite import non_finite_at_end
from chaos.checks.verdict import Undecidable, Verdict, failed, passed
from chaos.events import CheckpointEvent, DoneEvent
from chaos.timeline import Timeline


def final_done(timeline: Timeline) -> tuple[dict[int, DoneEvent], list[int]]:
    done = last_by_worker(timeline.done())
    return done, [w for w in timeline.workers() if w not in done]


def _differ(events: dict) -> str:
    return ", ".join(f"worker-{w} {short_digest(e.weights_digest)}" for w, e in sorted(events.items()))


@register_check
class Completed(RecoveryCheck):
    """Every worker emitted done at the final step."""

    name: ClassVar[str] = "completed"
    evidence: ClassVar[frozenset[str]] = frozenset({"done"})

    def judge(self, timeline: Timeline) -> Verdict:
        done, missing = final_done(timeline)
        final = timeline.info.final_step
        if missing:
            return failed(f"{names(missing)} never emitted done", list(done.values()))
        if not final:  # a job that did not say its last step: done is its own word
            return passed("every worker reported done (the workload did not say its final step)", list(done.values()))
        short = {w: d for w, d in done.items() if d.step != final}
        if short:
            detail = ", ".join(f"worker-{w} at step {d.step}" for w, d in sorted(short.items()))
            return failed(f"finished early: {detail}; the final step is {final}", list(short.values()))
        return passed(f"every worker finished at step {final}", list(done.values()))


@register_check
class IdenticalWeights(RecoveryCheck):
    """Every worker has the same weights digest after the restore and at the end."""

    name: ClassVar[str] = "identical_weights"
    evidence: ClassVar[frozenset[str]] = frozenset({"weights_digest"})

    def judge(self, timeline: Timeline) -> Verdict:
        done, missing = final_done(timeline)
        if missing:
            return failed(f"{names(missing)} never emitted done", list(done.values()))
        if any(not d.weights_digest for d in done.values()):
            raise Undecidable("done events carry no weights digest", list(done.values()))
        if len({d.weights_digest for d in done.values()}) > 1:
            return failed(f"final weights differ: {_differ(done)}", list(done.values()))
        proof = list(done.values())
        rounds = timeline.last_restart_round()
        where = "at the end (nothing restarted, so no restore to compare)"
        if rounds and not timeline.before(rounds[0]).of(CheckpointEvent):
            where = "at the end (no backup existed before the restart: training started over)"
        elif rounds:
            restored = restored_in(timeline.after(rounds[0]))
            absent = [w for w in timeline.workers() if w not in restored]
            if absent:
                return failed(f"{names(absent)} emitted no restored event after the restart", proof)
            if any(not r.weights_digest for r in restored.values()):
                raise Undecidable("restored events carry no weights digest", list(restored.values()))
            if len({r.weights_digest for r in restored.values()}) > 1:
                return failed(f"weights differ right after the restore: {_differ(restored)}", list(restored.values()))
            proof = [*restored.values(), *proof]
            where = "after the restore and at the end"
        digest = short_digest(next(iter(done.values())).weights_digest)
        nan, last = non_finite_at_end(timeline)
        if nan:
            return failed(f"every worker has weights {digest} {where}, but they are not finite: {nan}", [*proof, *last])
        return passed(f"every worker has weights {digest} {where}", proof)


@register_check
class MatchesUninterrupted(RecoveryCheck):
    """The final weights equal those of an uninterrupted run with the same seed (bit-exact)."""

    name: ClassVar[str] = "matches_uninterrupted"
    evidence: ClassVar[frozenset[str]] = frozenset({"weights_digest"})
    needs_reference: ClassVar[bool] = True  # the runner computes (or reuses) an uninterrupted run
    tolerance: float | None = Field(
        None, ge=0, description="when digests differ, accept a final global loss this close to the reference"
    )

    def judge(self, timeline: Timeline) -> Verdict:
        reference = timeline.info.reference_digest
        if not reference:  # None: not computed; "": that run reported none (info.unproduced says why)
            raise Undecidable("no reference digest: the runner did not compute an uninterrupted run")
        done, missing = final_done(timeline)
        if missing:
            return failed(f"{names(missing)} never emitted done", list(done.values()))
        proof = list(done.values())
        if any(not d.weights_digest for d in done.values()):
            raise Undecidable("done events carry no weights digest", proof)
        mismatched = {w: d for w, d in done.items() if d.weights_digest != reference}
        if not mismatched:
            return passed(f"bit-exact: final weights {short_digest(reference)} equal the uninterrupted run's", proof)
        summary = f"final weights differ from the uninterrupted run's {short_digest(reference)} ({_differ(mismatched)})"
        if self.tolerance is None:
            return failed(summary, proof)
        reference_loss = timeline.info.reference_final_loss
        last = timeline.last_step()
        if reference_loss is None or last is None:
            raise Undecidable(f"{summary}, and no final loss to compare within tolerance", proof)
        delta = abs(last.loss - reference_loss)
        loss_text = f"final loss {last.loss:.6g} vs {reference_loss:.6g} (|diff| {delta:.3g})"
        if delta <= self.tolerance:
            return passed(f"not bit-exact ({summary}), but {loss_text} <= tolerance {self.tolerance:g}", [*proof, last])
        return failed(f"{summary}; {loss_text} > tolerance {self.tolerance:g}", [*proof, last])
