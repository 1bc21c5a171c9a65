"""The recovery fix for a damaged backup (the kept_copies setting): keep
verified copies of the last backups aside, and check the newest backup before
restoring it.

BackupAndRestore keeps one backup (its CheckpointManager has max_to_keep=1)
and restores it without a check: a damaged file fails every restart
(docs/findings.md). Here the chief copies each new backup that reads back
whole to ``<backup_dir>/kept/``; before the restore, every worker reads the
newest backup tensor by tensor (each has a checksum), and if it fails puts the
newest kept copy that reads in its place. Both workers may repair at once:
the content is the same and every file is replaced atomically.
"""

from __future__ import annotations

import glob
import os
import shutil
import sys

KEPT = "kept"


def readable(prefix: str) -> str | None:
    """None if every tensor of checkpoint ``prefix`` reads back (checksums
    included), else why not."""
    import tensorflow as tf

    try:
        reader = tf.train.load_checkpoint(prefix)
        for name in reader.get_variable_to_shape_map():
            reader.get_tensor(name)
    except Exception as exc:  # noqa: BLE001 - any read error makes it unusable
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    return None


def _copy_atomic(src: str, dest_dir: str) -> None:
    tmp = os.path.join(dest_dir, f".{os.path.basename(src)}.tmp{os.getpid()}")
    shutil.copyfile(src, tmp)
    os.replace(tmp, os.path.join(dest_dir, os.path.basename(src)))


def keep(prefix: str, backup_dir: str, copies: int) -> bool:
    """Copy checkpoint ``prefix`` to the kept folder if it reads whole; keep the newest ``copies``."""
    if readable(prefix) is not None:
        return False
    kept = os.path.join(backup_dir, KEPT)
    os.makedirs(kept, exist_ok=True)
    for path in glob.glob(prefix + ".*"):
        _copy_atomic(path, kept)
    for old in _kept_prefixes(backup_dir)[:-copies]:
        for path in glob.glob(old + ".*"):
            os.remove(path)
    return True


def _kept_prefixes(backup_dir: str) -> list[str]:
    """Kept checkpoints, oldest first (by their save number, ckpt-N)."""
    indexes = glob.glob(os.path.join(backup_dir, KEPT, "*.index"))
    prefixes = [p[: -len(".index")] for p in indexes]
    return sorted(prefixes, key=lambda p: int(p.rsplit("-", 1)[-1]) if p.rsplit("-", 1)[-1].isdigit() else -1)


def repair(latest: str | None, backup_dir: str) -> str | None:
    """If backup ``latest`` does not read, put the newest kept copy that reads
    in its place (files and the checkpoint state); returns what was done, or None."""
    import tensorflow as tf

    if not latest:
        return None
    why = readable(latest)
    if why is None:
        return None
    folder = os.path.dirname(latest)
    for kept in reversed(_kept_prefixes(backup_dir)):
        if readable(kept) is None:
            for path in glob.glob(kept + ".*"):
                _copy_atomic(path, folder)
            name = os.path.basename(kept)
            tf.compat.v1.train.update_checkpoint_state(folder, name, all_model_checkpoint_paths=[name])
            text = f"backup {os.path.basename(latest)} does not read ({why}); restoring the kept copy {name}"
            print(text, file=sys.stderr)
            return text
    print(f"backup {os.path.basename(latest)} does not read ({why}) and no kept copy reads", file=sys.stderr)
    return None


def make_keep_callback(keras, backup_dir: str, copies: int, save_freq: str | int, latest_backup):
    """A callback (the chief's, after BackupAndRestore) that keeps each new backup."""

    class KeepBackups(keras.callbacks.Callback):
        def __init__(self) -> None:
            super().__init__()
            self._seen = latest_backup(backup_dir)

        def _after_save(self) -> None:
            path = latest_backup(backup_dir)
            if path and path != self._seen:
                self._seen = path
                keep(path, backup_dir, copies)

        def on_epoch_end(self, epoch, logs=None):
            self._after_save()

        def on_train_batch_end(self, batch, logs=None):
            if save_freq != "epoch":  # else backups only happen at epoch end
                self._after_save()

    return KeepBackups


def kill_during_save_applier(report=None, saved_epoch=None):
    """Apply ``kill_during_save``: the next backup this process writes (with
    ``epoch``: the first one written in that epoch, ``saved_epoch(path)`` telling a
    backup's) kills it (SIGKILL) once the backup's files are written and before the
    ``checkpoint`` state file names it: the moment a kill leaves a new backup on disk
    that no restore sees. ``report(path)`` is told of that backup first (a checkpoint
    event: it was written, so the checks can see a restore fall back past it)."""

    def apply(params: dict) -> dict:
        import os
        import signal

        from tensorflow.python.checkpoint import checkpoint_management as cm

        update = cm.update_checkpoint_state_internal
        epoch = params.get("epoch")

        def killing_update(save_dir, model_checkpoint_path, *args, **kwargs):
            # The CheckpointManager calls this right after the files are
            # written (its write callback), before it sweeps older backups.
            if epoch is not None and saved_epoch is not None and saved_epoch(model_checkpoint_path) < epoch:
                return update(save_dir, model_checkpoint_path, *args, **kwargs)  # an earlier save: armed still
            print(
                f"kill_during_save: {model_checkpoint_path} written, {save_dir}/checkpoint not yet: SIGKILL",
                file=sys.stderr,
                flush=True,
            )
            try:
                if report:
                    report(model_checkpoint_path)
            except Exception as exc:  # noqa: BLE001 - the kill must happen anyway
                print(f"kill_during_save: could not report {model_checkpoint_path}: {exc}", file=sys.stderr, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
            return update(save_dir, model_checkpoint_path, *args, **kwargs)  # not reached

        cm.update_checkpoint_state_internal = killing_update
        when = "the next backup" if epoch is None else f"the first backup of epoch {epoch}"
        return {"armed": f"SIGKILL at {when}, between its files and its state file"}

    return apply
