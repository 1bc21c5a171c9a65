"""Abilities on the run's checkpoint store (the volume every worker backs up to).
One each, as a backend gains them one at a time (the swarm's store has none yet)."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Protocol, runtime_checkable

from chaos.backends.backup_files import BackupDamage, BackupFile
from chaos.backends.spec import WriteLimit


@runtime_checkable
class CheckpointListing(Protocol):
    """How many files the store holds (the runner warns of a job that saved nothing)."""

    @abstractmethod
    def checkpoint_files(self) -> int | None:
        """How many files the run's checkpoint volume holds now (None: cannot tell)."""


@runtime_checkable
class CheckpointDamage(Protocol):
    """The newest checkpoint damaged in place."""

    @abstractmethod
    def damage_backup(self, file: BackupFile, mode: BackupDamage) -> dict[str, Any]:
        """Damage the newest checkpoint on the run's backup volume
        (``chaos.backends.backup_files``): its ``index`` or every ``data`` shard,
        by ``truncate``, ``zero``, ``flip`` or ``delete``. Returns what was done
        (``{"checkpoint": prefix, "files": {path: what}}``); raises when nothing was saved yet."""


@runtime_checkable
class CheckpointSnapshots(Protocol):
    """The store's files copied aside, for a worker to restore later (a stale copy)."""

    @abstractmethod
    def snapshot_backup(self, name: str) -> str:
        """Copy the backup volume's files as they are now to ``<checkpoint_dir>/<name>``
        (``name``: ``stale-...``); returns that folder as the workers see it."""


@runtime_checkable
class CheckpointFill(Protocol):
    """A size-limited store filled up, and emptied again."""

    @abstractmethod
    def fill_backup_volume(self, leave_bytes: int) -> dict[str, Any]:
        """Fill the run's (size-limited) backup volume with one file until ``leave_bytes``
        are free; returns ``{"filled", "free_before", "free"}`` in bytes."""

    @abstractmethod
    def clear_backup_fill(self) -> dict[str, Any]:
        """Remove what ``fill_backup_volume`` wrote; idempotent. Returns ``{"free"}``."""


@runtime_checkable
class StorageWriteLimits(Protocol):
    """A worker's writes to the block device under the store throttled (set when it is created)."""

    @abstractmethod
    def backup_device(self) -> str:
        """The block device (``/dev/...``) that holds the run's backup volume."""

    @abstractmethod
    def limit_writes(self, index: int, owner: str, limit: WriteLimit) -> None:
        """Create worker ``index`` with its writes to ``limit.device`` throttled from its next
        (re)start on (``owner``: the fault; ``clear_override(index, owner)`` undoes it)."""
