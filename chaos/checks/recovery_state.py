"""Where training resumed after the restart: which checkpoint, how much was lost."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from chaos.checks.base import RecoveryCheck, register_check
from chaos.checks.select import first_by_worker, names
from chaos.checks.verdict import Undecidable, Verdict, failed, passed
from chaos.events import CheckpointEvent, RestoredEvent, StepEvent
from chaos.timeline import Timeline


def restart_split(timeline: Timeline) -> tuple[Timeline, Timeline]:
    """(before, after) the last restart round; Undecidable when nothing restarted."""
    restarts = timeline.last_restart_round()
    if not restarts:
        raise Undecidable("no worker was restarted: nothing was restored")
    return timeline.before(restarts[0]), timeline.after(restarts[0])


def restored_in(after: Timeline) -> dict[int, RestoredEvent]:
    return first_by_worker(after.restored())


def resumed_position(after: Timeline) -> tuple[int, int, list] | None:
    """(epoch, step, proof) where training resumed: from the restored events,
    else from the first step after the restart; None if neither."""
    restored = restored_in(after)
    if restored:
        earliest = min(restored.values(), key=lambda r: (r.step, r.epoch))
        return earliest.epoch, earliest.step, list(restored.values())
    first = next(iter(after.of(StepEvent)), None)
    if first is None:
        return None
    return first.epoch, first.step - 1, [first]


@register_check
class RestoredSameCheckpoint(RecoveryCheck):
    """After the last restart every worker restored the same checkpoint, epoch and step."""

    name: ClassVar[str] = "restored_same_checkpoint"
    evidence: ClassVar[frozenset[str]] = frozenset({"restored"})
    needs: ClassVar[frozenset[str]] = frozenset({"restart"})

    def judge(self, timeline: Timeline) -> Verdict:
        _, after = restart_split(timeline)
        restored = restored_in(after)
        missing = [w for w in timeline.workers() if w not in restored]
        proof = [*timeline.last_restart_round()[:1], *restored.values()]
        if missing:
            return failed(f"{names(missing)} emitted no restored event after the restart", proof)
        points = {(r.checkpoint, r.epoch, r.step) for r in restored.values()}
        if len(points) > 1:
            detail = "; ".join(
                f"worker-{w}: {r.checkpoint or '?'} epoch {r.epoch} step {r.step}" for w, r in sorted(restored.items())
            )
            return failed(f"workers restored different checkpoints ({detail})", proof)
        checkpoint, epoch, step = points.pop()
        return passed(f"every worker restored {checkpoint or 'the checkpoint'} at epoch {epoch}, step {step}", proof)


@register_check
class ResumedFrom(RecoveryCheck):
    """Training resumed at or after a given epoch or step, not from 0."""

    name: ClassVar[str] = "resumed_from"
    evidence: ClassVar[frozenset[str]] = frozenset({"steps"})
    needs: ClassVar[frozenset[str]] = frozenset({"restart"})
    epoch: int | None = Field(None, ge=0, description="resume at this epoch or later")
    step: int | None = Field(None, ge=0, description="resume at this global step or later")

    def judge(self, timeline: Timeline) -> Verdict:
        _, after = restart_split(timeline)
        position = resumed_position(after)
        if position is None:
            return failed("no restored event and no step after the restart: training did not resume")
        epoch, step, proof = position
        where = f"epoch {epoch}, step {step}"
        if step <= 0 and epoch <= 0:
            return failed(f"training restarted from scratch ({where}): the checkpoint was not used", proof)
        if self.step is not None and step < self.step:
            return failed(f"resumed at {where}, before step {self.step}", proof)
        if self.epoch is not None and epoch < self.epoch:
            return failed(f"resumed at {where}, before epoch {self.epoch}", proof)
        return passed(f"resumed at {where}", proof)


@register_check
class LostWork(RecoveryCheck):
    """Steps lost (last step before the restart minus the step resumed from) are at most one save interval."""

    name: ClassVar[str] = "lost_work"
    evidence: ClassVar[frozenset[str]] = frozenset({"steps"})
    needs: ClassVar[frozenset[str]] = frozenset({"restart"})
    max_steps: int | None = Field(None, ge=0, description="default: the save interval in steps")
    min_steps: int = Field(
        0, ge=0, description="also require at least this many steps lost (to show a setup that loses work)"
    )

    def judge(self, timeline: Timeline) -> Verdict:
        head, after = restart_split(timeline)
        before = head.of(StepEvent)
        if not before:
            raise Undecidable("no step before the restart: nothing could be lost")
        last = max(before, key=lambda s: s.step)
        position = resumed_position(after)
        if position is None:
            return failed("training did not resume after the restart", [last])
        _, resumed, proof = position
        limit = self.max_steps if self.max_steps is not None else timeline.info.save_interval_steps
        if not limit and self.max_steps is None:
            raise Undecidable("the workload did not say how often it saves a backup: give max_steps")
        lost = last.step - resumed
        summary = f"reached step {last.step}, resumed from step {resumed}: {max(lost, 0)} steps lost"
        if lost > limit:
            return failed(f"{summary} (> {limit})", [last, *proof])
        if lost < self.min_steps:
            return failed(f"{summary} (< {self.min_steps}, the least this scenario expects)", [last, *proof])
        bounds = f"{self.min_steps}..{limit}" if self.min_steps else f"<= {limit}"
        return passed(f"{summary} ({bounds})", [last, *proof])


@register_check
class FellBack(RecoveryCheck):
    """Training resumed from an earlier step than the newest backup written before the last restart."""

    name: ClassVar[str] = "fell_back"
    evidence: ClassVar[frozenset[str]] = frozenset({"checkpoints", "steps"})
    needs: ClassVar[frozenset[str]] = frozenset({"restart"})

    def judge(self, timeline: Timeline) -> Verdict:
        head, after = restart_split(timeline)
        written = head.of(CheckpointEvent)
        if not written:
            raise Undecidable("no backup was written before the restart: there was nothing to fall back from")
        newest = max(written, key=lambda c: c.step)
        position = resumed_position(after)
        if position is None:
            return failed("training did not resume after the restart", [newest])
        _, step, proof = position
        if step < newest.step:
            return passed(
                f"fell back: resumed at step {step}, before the newest backup written ({newest.path}, step {newest.step})",
                [newest, *proof],
            )
        return failed(
            f"no fallback: resumed at step {step}, the newest backup written ({newest.path}, step "
            f"{newest.step}) was restored",
            [newest, *proof],
        )
