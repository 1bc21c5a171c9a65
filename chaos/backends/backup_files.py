"""What the checkpoint faults do to the files on the backup volume: damage the
newest TF checkpoint (truncate, zero, flip or delete its index or data files),
copy the backups as they are now aside (a stale copy a worker restores later),
or fill the (size-limited) volume so the next save finds no space.

Standard library only and no package imports: its source is run as-is by
``python3 -c`` in a helper container that mounts the run's backup volume
(``DockerCluster.damage_backup``, ``snapshot_backup``), and imported on the host
by the unit tests.

A TF checkpoint ``PREFIX`` is ``PREFIX.index`` (the tensor table, with a
checksum per tensor) plus ``PREFIX.data-NNNNN-of-MMMMM`` shards; a ``checkpoint``
state file beside them names the newest prefix (``model_checkpoint_path``).
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import sys
from typing import Literal, get_args

BackupFile = Literal["index", "data"]
BackupDamage = Literal["truncate", "zero", "flip", "delete"]
FILES = get_args(BackupFile)
MODES = get_args(BackupDamage)
_STATE = re.compile(r'^model_checkpoint_path:\s*"([^"]+)"', re.MULTILINE)


def latest_prefix(root: str) -> str | None:
    """The newest checkpoint prefix under ``root``: the one the most recently
    written ``checkpoint`` state file names, else the newest ``*.index``."""
    states = sorted(glob.glob(os.path.join(root, "**", "checkpoint"), recursive=True), key=os.path.getmtime)
    for state in reversed(states):
        with open(state, encoding="utf-8", errors="replace") as fh:
            found = _STATE.search(fh.read())
        if found:
            prefix = os.path.join(os.path.dirname(state), found.group(1))
            if glob.glob(prefix + ".*"):
                return prefix
    indexes = sorted(glob.glob(os.path.join(root, "**", "*.index"), recursive=True), key=os.path.getmtime)
    return indexes[-1][: -len(".index")] if indexes else None


def damage_file(path: str, mode: str) -> str:
    """Damage one file; returns what was done, e.g. ``truncate 7494 -> 3747 bytes``."""
    size = os.path.getsize(path)
    if mode == "delete":
        os.remove(path)
        return f"delete ({size} bytes)"
    if mode == "truncate":
        # Half of it: a write cut off midway, as a kill or a full disk leaves it.
        os.truncate(path, size // 2)
        return f"truncate {size} -> {size // 2} bytes"
    with open(path, "r+b") as fh:
        if mode == "zero":
            # Same size, every byte 0: a block the storage lost but kept allocated.
            fh.write(bytes(size))
            return f"zero {size} bytes"
        # flip: one bit rot in the middle, size and names unchanged.
        fh.seek(size // 2)
        byte = fh.read(1)
        fh.seek(size // 2)
        fh.write(bytes([(byte[0] if byte else 0) ^ 0xFF]))
        return f"flip byte {size // 2} of {size}"


def damage(root: str, file: str, mode: str) -> dict:
    """Damage ``file`` ("index", or "data": every shard) of the newest checkpoint under ``root``."""
    if file not in FILES or mode not in MODES:
        raise ValueError(f"file must be one of {FILES} and mode one of {MODES}, got {file!r}, {mode!r}")
    prefix = latest_prefix(root)
    if prefix is None:
        raise FileNotFoundError(f"no checkpoint under {root}: nothing was saved yet")
    paths = [prefix + ".index"] if file == "index" else sorted(glob.glob(prefix + ".data-*"))
    paths = [p for p in paths if os.path.isfile(p)]
    if not paths:
        raise FileNotFoundError(f"checkpoint {prefix} has no {file} file")
    done = {os.path.relpath(p, root): damage_file(p, mode) for p in paths}
    return {"checkpoint": os.path.relpath(prefix, root), "files": done}


SNAPSHOT_PREFIX = "stale-"
FILLER = ".chaos-filler"


def snapshot(root: str, name: str) -> dict:
    """Copy everything under ``root`` (but earlier snapshots) to ``root/name``, replacing it."""
    if not name.startswith(SNAPSHOT_PREFIX) or "/" in name:
        raise ValueError(f"a snapshot name is {SNAPSHOT_PREFIX}<something> with no '/', got {name!r}")
    if latest_prefix(root) is None:
        raise FileNotFoundError(f"no checkpoint under {root}: nothing was saved yet")
    dest = os.path.join(root, name)
    shutil.rmtree(dest, ignore_errors=True)
    try:
        shutil.copytree(
            root,
            dest,
            ignore=lambda folder, entries: [
                e for e in entries if folder == root and (e.startswith(SNAPSHOT_PREFIX) or e == FILLER)
            ],
            copy_function=shutil.copy2,
        )  # looked up at the call (the unit tests stand in for it)
    except shutil.Error as exc:
        # A live worker removes its temporary save folder (workertemp_N) while
        # the copy runs: what vanished was not there to snapshot. Anything else fails.
        failed = [entry for entry in exc.args[0] if os.path.lexists(entry[0])]
        if failed:
            raise shutil.Error(failed) from None
    return {"path": dest, "checkpoint": os.path.relpath(latest_prefix(dest), dest)}


def free_bytes(root: str) -> int:
    stat = os.statvfs(root)
    return stat.f_bavail * stat.f_frsize


def fill(root: str, leave: str) -> dict:
    """Fill the file system of ``root`` with one file until ``leave`` bytes are free."""
    before = free_bytes(root)
    path = os.path.join(root, FILLER)
    existing = os.path.getsize(path) if os.path.exists(path) else 0  # freed when rewritten
    size = max(0, before + existing - int(leave))
    with open(path, "wb") as fh:
        chunk = bytes(1 << 20)
        left = size
        try:
            while left > 0:  # real blocks, not a sparse file: tmpfs counts only what is written
                left -= fh.write(chunk[: min(left, len(chunk))])
        except OSError:  # full before the target: as full as it gets
            pass
    return {"filled": size - max(left, 0), "free_before": before, "free": free_bytes(root)}


def clear(root: str) -> dict:
    """Remove the filler (nothing to do if there is none)."""
    path = os.path.join(root, FILLER)
    if os.path.exists(path):
        os.remove(path)
    return {"free": free_bytes(root)}


if __name__ == "__main__":
    verbs = {"damage": damage, "snapshot": snapshot, "fill": fill, "clear": clear}
    try:
        print(json.dumps(verbs[sys.argv[1]](*sys.argv[2:])))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(2)
