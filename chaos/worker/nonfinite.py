"""Non-finite losses in the harness: TerminateOnNaN (a training setting) and
where training really ended when it stopped early.

TerminateOnNaN sets ``model.stop_training`` at the first NaN/inf loss; fit
then still runs ``on_epoch_end`` (BackupAndRestore saves the NaN weights) and
``on_train_end`` (deletes the backup), and returns normally: exit 0
(docs/findings.md, "One bad worker poisons everyone")."""

from __future__ import annotations


def terminate_on_nan_callbacks(keras, settings) -> list:
    """[TerminateOnNaN()] when the training setting asks for it, else []."""
    return [keras.callbacks.TerminateOnNaN()] if settings.terminate_on_nan else []


def done_position(model, settings) -> tuple[int, int]:
    """(epoch, global step) at the end of training: the planned last step, or,
    when a callback stopped training early, the steps the optimizer applied
    (restored with the backup, so they count from step 0), so a run that
    stopped at step 405 does not report itself done at the final step."""
    if not getattr(model, "stop_training", False):
        return settings.epochs - 1, settings.total_steps
    step = int(model.optimizer.iterations.numpy())
    return max(step - 1, 0) // settings.steps_per_epoch, step
