"""A Keras callback that reports training as chaos events.

Usable in a user's own training script: add ``ChaosEvents(...)`` to ``fit``'s
callbacks (after BackupAndRestore, so it sees each new backup) and the runner
can judge that script like the built-in workload.
"""

from __future__ import annotations

from collections.abc import Callable

from chaos.events import CheckpointEvent, EpochEndEvent, StepEvent
from chaos.worker.backup_formats import KERAS2, BackupFormat
from chaos.worker.emit import Emitter


def make_callback_class(keras):
    """Build the callback class against the Keras in use (tf_keras, TF 2.15's or Keras 3:
    ``backups`` says where its BackupAndRestore writes, chaos.worker.backup_formats)."""

    class ChaosEvents(keras.callbacks.Callback):
        def __init__(
            self,
            steps_per_epoch: int,
            backup_dir: str | None = None,
            save_freq: str | int = "epoch",
            batch_digest: Callable[[int], str] | None = None,
            emitter: Emitter | None = None,
            step_fields: Callable[[dict, bool, int], dict] | None = None,
            backups: BackupFormat = KERAS2,
        ) -> None:
            super().__init__()
            self.steps_per_epoch = steps_per_epoch
            self.backup_dir = backup_dir
            self.save_freq = save_freq
            self.batch_digest = batch_digest
            self.emitter = emitter or Emitter()
            self._epoch = 0
            # (logs, first step of this run, global step) -> more StepEvent fields (the
            # harness's dropout mask hash, first-step weights digest, per-replica batches).
            self.step_fields = step_fields
            self._stepped = False
            self.backups = backups
            self._last_backup = backups.newest(backup_dir) if backup_dir else None

        def on_epoch_begin(self, epoch, logs=None):
            self._epoch = epoch

        def on_train_batch_end(self, batch, logs=None):
            batch = int(batch)  # Keras may hand a numpy or tensor scalar
            logs = logs or {}
            step = self._epoch * self.steps_per_epoch + batch + 1  # global, 1-based
            self.emitter.emit(
                StepEvent,
                epoch=self._epoch,
                step=step,
                loss=float(logs.get("loss", float("nan"))),
                local_loss=float(logs.get("local_loss", logs.get("loss", float("nan")))),
                batch_digest=self.batch_digest(step - 1) if self.batch_digest else "",
                **(self.step_fields(logs, not self._stepped, step) if self.step_fields else {}),
            )
            self._stepped = True
            self._step = step
            if self.save_freq != "epoch":  # else backups only happen at epoch end
                self._report_backup(step)

        def on_epoch_end(self, epoch, logs=None):
            logs = logs or {}
            step = (epoch + 1) * self.steps_per_epoch
            if getattr(self.model, "stop_training", False) and getattr(self, "_step", 0):
                step = self._step  # a callback (TerminateOnNaN) ended the epoch early
            self.emitter.emit(EpochEndEvent, epoch=epoch, step=step, loss=float(logs.get("loss", float("nan"))))
            self._report_backup(step)

        def _report_backup(self, step: int) -> None:
            if not self.backup_dir:
                return
            try:
                backup = self.backups.newest(self.backup_dir)
                if backup is None or backup == self._last_backup:
                    return
                # Report the position the backup holds, not this worker's step:
                # a non-chief may see the chief's file a step late.
                epoch, in_epoch = self.backups.position(backup, self.save_freq, self.steps_per_epoch)
            except Exception:  # noqa: BLE001
                # The chief deletes the backup when its fit ends; a non-chief
                # reading it at its own last epoch end can find it half gone
                # (NotFoundError, measured 2 runs in 10 of the killed-worker scenario). Reporting must not fail training.
                return
            self._last_backup = backup
            self.emitter.emit(
                CheckpointEvent,
                epoch=epoch,
                step=epoch * self.steps_per_epoch + in_epoch,
                path=self.backups.name(backup),
            )

    return ChaosEvents
