"""The one-line reporting calls for a custom training loop.

    try:
        from chaos.agent import report
    except ImportError:  # no tfchaos agent in this image: report nothing
        report = None
    ...
    if report: report.step(step, loss, epoch=epoch)

Every call is a no-op unless CHAOS_AGENT=1, never raises (a failure prints one
stderr line and is ignored) and returns None. Steps are global and 1-based: the
step that finished. ``restored``/``checkpoint`` take the number of steps the
checkpoint holds (training resumes with step + 1). Losses may be Python
numbers, NumPy or eager TF scalars. Weights are a list of arrays
(``model.get_weights()``) or a digest string.
"""

from __future__ import annotations

import os

from chaos.agent import errors, start
from chaos.agent.digest import digest_of
from chaos.agent.runtime import CHECKPOINT_DIR_ENV, emitter, enabled, guarded, job_reported
from chaos.events import CheckpointEvent, DoneEvent, EpochEndEvent, PlanEvent, RestoredEvent, StepEvent

_known = {"steps_per_epoch": 0, "step": 0, "epoch": 0}


def _epoch_of(step: int, completed: bool) -> int:
    """The epoch of a finished step (completed=False) or of the resume point."""
    spe = _known["steps_per_epoch"]
    if not spe:
        return _known["epoch"]
    return (step - 1) // spe if not completed and step > 0 else step // spe


def _emit(cls, **fields) -> None:
    job_reported()  # the job's calls win over what the agent sees of its loop (chaos.agent.loop)
    start.ensure_started()
    emitter().emit(cls, **fields)


def plan(
    total_steps: int = 0,
    steps_per_epoch: int = 0,
    save_every_steps: int = 0,
    epochs: int = 0,
    checkpoint_dir: str | None = None,
    initial_epoch: int = 0,
) -> None:
    """What the loop will train; at its start, before the first step."""
    if enabled():
        _plan(total_steps, steps_per_epoch, save_every_steps, epochs, checkpoint_dir, initial_epoch)


@guarded("report.plan")
def _plan(total_steps, steps_per_epoch, save_every_steps, epochs, checkpoint_dir, initial_epoch) -> None:
    total_steps, steps_per_epoch, epochs = int(total_steps or 0), int(steps_per_epoch or 0), int(epochs or 0)
    if not epochs and total_steps and steps_per_epoch:
        epochs = -(-total_steps // steps_per_epoch)
    if not total_steps and epochs and steps_per_epoch:
        total_steps = epochs * steps_per_epoch
    _known["steps_per_epoch"] = steps_per_epoch
    _emit(
        PlanEvent,
        epochs=epochs,
        steps_per_epoch=steps_per_epoch,
        total_steps=total_steps,
        initial_epoch=int(initial_epoch or 0),
        save_every_steps=int(save_every_steps or 0),
        checkpoint_dir=str(checkpoint_dir if checkpoint_dir is not None else os.environ.get(CHECKPOINT_DIR_ENV, "")),
    )


def restored(step: int, checkpoint: str, weights=None, epoch: int | None = None) -> None:
    """Training resumes from ``checkpoint``, which holds ``step`` steps."""
    if enabled():
        _restored(step, checkpoint, weights, epoch)


@guarded("report.restored")
def _restored(step, checkpoint, weights, epoch) -> None:
    step = int(step)
    epoch = _epoch_of(step, completed=True) if epoch is None else int(epoch)
    _known.update(step=step, epoch=epoch)
    _emit(
        RestoredEvent,
        epoch=epoch,
        step=step,
        checkpoint=os.path.basename(str(checkpoint)),
        weights_digest=digest_of(weights),
    )


def step(step: int, loss, epoch: int | None = None) -> None:
    """Step ``step`` (global, 1-based) finished with ``loss``."""
    if enabled():
        _step(step, loss, epoch)


@guarded("report.step")
def _step(step, loss, epoch) -> None:
    step = int(step)
    epoch = _epoch_of(step, completed=False) if epoch is None else int(epoch)
    loss = float(loss)
    _known.update(step=step, epoch=epoch)
    _emit(StepEvent, epoch=epoch, step=step, loss=loss, local_loss=loss)


def epoch_end(epoch: int, step: int | None = None, loss=None) -> None:
    if enabled():
        _epoch_end(epoch, step, loss)


@guarded("report.epoch_end")
def _epoch_end(epoch, step, loss) -> None:
    step = _known["step"] if step is None else int(step)
    _emit(EpochEndEvent, epoch=int(epoch), step=step, loss=float("nan") if loss is None else float(loss))


def checkpoint(step: int, path: str, epoch: int | None = None) -> None:
    """A checkpoint holding ``step`` steps was written to ``path``."""
    if enabled():
        _checkpoint(step, path, epoch)


@guarded("report.checkpoint")
def _checkpoint(step, path, epoch) -> None:
    step = int(step)
    epoch = _epoch_of(step, completed=True) if epoch is None else int(epoch)
    _emit(CheckpointEvent, epoch=epoch, step=step, path=os.path.basename(str(path)))


def done(weights=None, step: int | None = None, epoch: int | None = None) -> None:
    """Training finished: the final weights (a list of arrays or a digest)."""
    if enabled():
        _done(weights, step, epoch)


@guarded("report.done")
def _done(weights, step, epoch) -> None:
    step = _known["step"] if step is None else int(step)
    epoch = _known["epoch"] if epoch is None else int(epoch)
    _emit(DoneEvent, epoch=epoch, step=step, weights_digest=digest_of(weights))


def error(exc: BaseException) -> None:
    """An exception the loop caught and will not re-raise (uncaught ones are reported anyway)."""
    if enabled():
        errors.report_exception(exc)
