"""Where Keras's BackupAndRestore keeps a backup and where ``fit`` resumes from it,
for each Keras the framework sees (a format: ``newest``, ``position``, ``name``).

* **Keras 2** (tf-keras; TF <= 2.15's Keras): only the chief writes, TF checkpoints
  ``backup_dir/chief/ckpt-N`` holding the epoch and batch they were saved at
  (tf_keras WorkerTrainingState); fit resumes at the step after the saved one.
* **Keras 3** (``tf.keras`` of TF >= 2.16 without TF_USE_LEGACY_KERAS): every worker
  writes ``backup_dir/latest.weights.h5``, then ``backup_dir/training_metadata.json``
  ``{"epoch": E, "batch": B}``, E the epochs done (keras/src/callbacks/backup_and_restore.py,
  Keras 3.15). Its restore sets the model's initial epoch to E and nothing else, so fit
  resumes at epoch E's first step whatever B is: a mid-epoch backup's weights train that
  epoch's first B + 1 steps again.

TensorFlow is imported inside functions: the agent's layer ships this module.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Protocol


class BackupFormat(Protocol):
    def newest(self, backup_dir: str) -> Any | None:
        """The newest backup in ``backup_dir`` (equal values: the same save), or None."""

    def position(self, backup: Any, save_freq: str | int, steps_per_epoch: int) -> tuple[int, int]:
        """(epoch, step within it) where fit resumes from ``backup``."""

    def name(self, backup: Any) -> str:
        """What reports call ``backup``."""


def latest_backup(backup_dir: str) -> str | None:
    """The newest BackupAndRestore checkpoint (it lives under ``backup_dir/chief``)."""
    import tensorflow as tf

    return tf.train.latest_checkpoint(os.path.join(backup_dir, "chief"))


# Variable names BackupAndRestore (tf_keras WorkerTrainingState) writes.
SAVED_EPOCH_KEY = "ckpt_saved_epoch/.ATTRIBUTES/VARIABLE_VALUE"
SAVED_BATCH_KEY = "ckpt_saved_batch/.ATTRIBUTES/VARIABLE_VALUE"


def resume_position(path: str, save_freq: str | int, steps_per_epoch: int) -> tuple[int, int]:
    """(epoch, step within epoch) where fit resumes from backup ``path``.

    Mirrors WorkerTrainingState.maybe_load_initial_counters_from_ckpt, so the
    input pipeline can start where the model will.
    """
    import tensorflow as tf

    reader = tf.train.load_checkpoint(path)
    epoch = int(reader.get_tensor(SAVED_EPOCH_KEY))
    batch = int(reader.get_tensor(SAVED_BATCH_KEY))
    if save_freq == "epoch" or batch < 0:
        return (epoch + 1 if epoch >= 0 else 0), 0
    if batch == steps_per_epoch - 1:
        return epoch + 1, 0
    return epoch, batch + 1


def saved_epoch(path: str) -> int:
    """The epoch backup ``path`` was written in (BackupAndRestore's own counter)."""
    import tensorflow as tf

    return int(tf.train.load_checkpoint(path).get_tensor(SAVED_EPOCH_KEY))


def resume_position_or_start(path: str | None, save_freq: str | int, steps_per_epoch: int) -> tuple[int, int]:
    """``resume_position``, or (0, 0) when there is no backup or it cannot be
    read. A damaged backup is left to BackupAndRestore's own restore, so the
    job fails with TF's error as a user's job would, not with this peek's."""
    if not path:
        return 0, 0
    try:
        return resume_position(path, save_freq, steps_per_epoch)
    except Exception as exc:  # noqa: BLE001 - any read error: TF's restore decides
        print(
            f"backup {path} unreadable ({type(exc).__name__}: {exc}); leaving it to BackupAndRestore", file=sys.stderr
        )
        return 0, 0


class _Keras2:
    """``backup_dir/chief/ckpt-N`` (the functions above)."""

    def newest(self, backup_dir: str) -> str | None:
        return latest_backup(backup_dir)

    def position(self, backup: str, save_freq: str | int, steps_per_epoch: int) -> tuple[int, int]:
        return resume_position(backup, save_freq, steps_per_epoch)

    def name(self, backup: str) -> str:
        return os.path.basename(backup)


KERAS3_WEIGHTS = "latest.weights.h5"
KERAS3_METADATA = "training_metadata.json"


class _Keras3:
    """``latest.weights.h5`` and ``training_metadata.json`` in ``backup_dir``; a backup is its
    metadata's (epoch, batch): each save writes new ones, and a restarted worker finds the
    one it restores from unchanged."""

    def newest(self, backup_dir: str) -> tuple[int, int] | None:
        if not os.path.exists(os.path.join(backup_dir, KERAS3_WEIGHTS)):
            return None
        try:
            with open(os.path.join(backup_dir, KERAS3_METADATA), encoding="utf-8") as f:
                meta = json.load(f)
            return int(meta["epoch"]), int(meta.get("batch") or 0)
        except (OSError, ValueError, KeyError, TypeError):
            return None  # not written yet, or half written: the next look tells

    def position(self, backup: tuple[int, int], save_freq: str | int, steps_per_epoch: int) -> tuple[int, int]:
        return backup[0], 0

    def name(self, backup: tuple[int, int]) -> str:
        epoch, batch = backup
        return f"{KERAS3_WEIGHTS}@epoch-{epoch}" + (f"-batch-{batch}" if batch else "")


KERAS2: BackupFormat = _Keras2()
KERAS3: BackupFormat = _Keras3()
