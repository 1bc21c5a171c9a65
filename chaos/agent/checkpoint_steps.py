"""The step each checkpoint holds, as the agent counted it, kept beside the checkpoint.

A custom loop's checkpoint need not hold any step: TF's tutorial saves the model,
an ``epoch`` and a ``step_in_epoch``, no optimizer and no global step. The agent
counts the job's steps itself (chaos.agent.loop), so at each save it writes that
count into one small file in the checkpoint's own folder, and a restarted worker
that restores the checkpoint reads it back. One file per folder, a JSON object
``{checkpoint name: step}``, pruned of checkpoints whose index file is gone (the
CheckpointManager's ``max_to_keep`` deleted them), replaced atomically. Local
folders only: a ``gs://`` path is left alone (the step is then read from the
checkpoint itself, or said unknown).
"""

from __future__ import annotations

import json
import os

FILE_NAME = ".tfchaos-agent-steps.json"


def _local(path: str) -> bool:
    return "://" not in path


def _read(folder: str) -> dict[str, int]:
    try:
        with open(os.path.join(folder, FILE_NAME), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return {str(k): int(v) for k, v in data.items()} if isinstance(data, dict) else {}


def record(path: str, step: int) -> None:
    """The checkpoint at ``path`` (a prefix such as ``/ckpt/ckpt-3``) holds ``step`` steps."""
    path = os.fspath(path)
    if not _local(path):
        return
    folder, name = os.path.split(path)
    steps = {k: v for k, v in _read(folder).items() if os.path.exists(os.path.join(folder, k + ".index"))}
    steps[name] = int(step)
    tmp = os.path.join(folder, f"{FILE_NAME}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(steps, fh, sort_keys=True)
    os.replace(tmp, os.path.join(folder, FILE_NAME))


def lookup(path: str) -> int | None:
    """The step recorded for the checkpoint at ``path``; None if none was."""
    path = os.fspath(path)
    if not _local(path):
        return None
    folder, name = os.path.split(path)
    return _read(folder).get(name)
