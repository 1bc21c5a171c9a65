"""Faults in the checkpoint path: the backup the workers restore from is damaged or stale,
the backup volume is full, writes to it are slow, or a worker dies inside a save.

They act on the run's backup volume through ``ClusterControl`` verbs (a helper
container runs ``chaos.backends.backup_files``) or, for the kill, inside the
worker's save (``chaos.worker.backups``). Measured outcomes: docs/findings.md."""

from __future__ import annotations

import time
from typing import ClassVar, Literal

from pydantic import Field, model_validator

from chaos.backends.abilities import (
    CheckpointDamage,
    CheckpointFill,
    CheckpointSnapshots,
    Freezing,
    StorageWriteLimits,
    WorkerCommands,
    WorkerOverrides,
)
from chaos.backends.backup_files import BackupDamage, BackupFile
from chaos.backends.base import ClusterControl
from chaos.backends.spec import WriteLimit
from chaos.events import RUNNER, NoticeEvent
from chaos.faults.base import Fault, WorkerFault, WorkerIndex, WorkersFault, register_fault
from chaos.faults.undo import Undo, clear_overrides
from chaos.worker import control as worker_control
from chaos.worker.settings import WorkerSettings


@register_fault
class CorruptCheckpoint(Fault):
    """Damage the newest backup on the shared volume (truncate, zero, flip or delete its index or data files)."""

    name: ClassVar[str] = "corrupt_checkpoint"
    uses_abilities: ClassVar[tuple[type, ...]] = (CheckpointDamage,)
    file: BackupFile = Field(
        "data", description="index (the tensor table) or data (every data shard) of the newest checkpoint"
    )
    mode: BackupDamage = Field(
        "truncate",
        description="truncate (to half), zero (every byte 0, same size), flip (one byte in the middle) or delete",
    )

    @property
    def target(self) -> str:
        return "checkpoint"

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        # Nothing to undo: the damaged files stay, the next backup written
        # replaces them, and what the restore does with them is the point.
        done = cluster.damage_backup(self.file, self.mode)
        # Which files, and how: the report says what the restore met.
        what = ", ".join(f"{path}: {how}" for path, how in done.get("files", {}).items())
        cluster.record(
            NoticeEvent(
                t=time.time(),
                source=RUNNER,
                topic="checkpoint_damaged",
                text=f"damaged checkpoint {done.get('checkpoint', '?')} ({what})",
            )
        )


# Where a worker with no shared backup keeps it: inside its own container,
# gone with it, as a backup dir on a pod's local disk (emptyDir) is.
UNSHARED_BACKUP_DIR = "/tmp/unshared-backup"


@register_fault
class StaleCheckpoint(WorkerFault):
    """From its next restart on, a worker restores an older backup than the others (a stale copy), or none at all."""

    name: ClassVar[str] = "stale_checkpoint"
    uses_abilities: ClassVar[tuple[type, ...]] = (CheckpointSnapshots, WorkerOverrides)
    # The harness's backup_dir setting points the worker elsewhere.
    uses_hooks: ClassVar[frozenset[str]] = frozenset({"settings"})
    backup: Literal["older", "none"] = Field(
        "older",
        description="older: the backups as they are at the inject, copied aside; "
        "none: a backup dir that is not on shared storage (empty at every start)",
    )

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        # Nothing to undo: the runner heals every fault just before it restarts
        # the workers, and that restart is where the stale backup must show; the
        # worker keeps its backup dir for the rest of the run, as a misconfigured
        # pod keeps its spec.
        if self.backup == "older":
            backup_dir = cluster.snapshot_backup(f"stale-worker-{self.worker}")
        else:
            backup_dir = UNSHARED_BACKUP_DIR
        # Takes effect when the worker is next created: a later fault (or
        # failure) makes the restart that meets it.
        cluster.override(self.worker, self.name, settings=WorkerSettings.change(backup_dir=backup_dir))


@register_fault
class CheckpointDiskFull(Fault):
    """The backup volume (a tmpfs of volume_mb) is filled until free_kb are left: the next save finds no space."""

    name: ClassVar[str] = "checkpoint_disk_full"
    uses_abilities: ClassVar[tuple[type, ...]] = (CheckpointFill, Freezing)
    volume_mb: int = Field(16, ge=1, le=1024, description="size of the run's backup volume, MB (a tmpfs)")
    free_kb: int = Field(
        0, ge=0, description="KB left free after the fill (a backup of the built-in model takes about 9 KB)"
    )

    @property
    def target(self) -> str:
        return "checkpoint"

    def backup_volume_mb(self) -> int:
        return self.volume_mb

    @model_validator(mode="after")
    def _fits(self) -> CheckpointDiskFull:
        if self.free_kb >= self.volume_mb * 1024:
            raise ValueError(
                f"free_kb ({self.free_kb}) must be below the volume's size, volume_mb ({self.volume_mb}) x 1024: "
                "otherwise nothing is filled"
            )
        return self

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        undo.add(lambda c: c.clear_backup_fill())  # before the call: a half-written filler is removed too
        # The job is frozen while the helper fills, so the disk is full at the
        # step the trigger named. Unfrozen, a helper that takes a few seconds to
        # start under load let a 100-step job train to its end meanwhile (seen
        # in a whole-suite run: the final save failed and the fault was late).
        # Both workers freeze together, so no one misses a heartbeat.
        running = [i for i in range(cluster.num_slots) if cluster.is_running(i)]
        frozen: list[int] = []
        try:
            for index in running:
                cluster.pause(index)
                frozen.append(index)
            done = cluster.fill_backup_volume(self.free_kb * 1024)
        finally:
            for index in frozen:
                cluster.unpause(index)
        cluster.record(
            NoticeEvent(
                t=time.time(),
                source=RUNNER,
                topic="checkpoint_disk_full",
                text=f"backup volume filled: {done.get('filled', 0)} bytes written, {done.get('free', '?')} bytes free",
            )
        )


@register_fault
class SlowCheckpointStorage(WorkersFault):
    """Throttle the workers' writes to the block device under the backup volume: every save takes longer."""

    name: ClassVar[str] = "slow_checkpoint_storage"
    # Its undo is clear_override (WorkerOverrides), as for any change at create.
    uses_abilities: ClassVar[tuple[type, ...]] = (StorageWriteLimits, WorkerOverrides)
    # Docker sets device write limits only when it creates a container.
    applies_at_create: ClassVar[bool] = True
    workers: list[int] = Field([0, 1], min_length=1, description="the throttled workers (each one writes at a save)")
    write_iops: int = Field(10, ge=1, description="write operations per second on the device")
    write_kbps: int | None = Field(None, ge=1, description="also cap bytes written per second, KB/s")
    device: str | None = Field(
        None, pattern=r"^/dev/\S+$", description="block device to throttle; default: the one under the backup volume"
    )

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        device = self.device or cluster.backup_device()
        limit = WriteLimit(device, self.write_iops, self.write_kbps * 1024 if self.write_kbps else None)
        undo.add(clear_overrides(self.name, self.workers))  # first: a half-done loop is cleared too
        for w in self.workers:
            cluster.limit_writes(w, self.name, limit)


@register_fault
class KillDuringSave(WorkerFault):
    """SIGKILL a worker during its next backup: after the backup's files are written, before its state file names it."""

    name: ClassVar[str] = "kill_during_save"
    uses_hooks: ClassVar[frozenset[str]] = frozenset({"commands"})  # the kill runs inside the save
    uses_abilities: ClassVar[tuple[type, ...]] = (WorkerCommands,)
    worker: WorkerIndex = Field(0, description="the worker killed in its save; 0, the chief, writes the backup")
    epoch: int | None = Field(
        None,
        ge=0,
        description="kill in the first backup written in this epoch (0-based), armed from the inject on; "
        "none: in the next backup after the inject",
    )

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        # Armed now, fired by the worker itself at the save asked for (with
        # save_freq: epoch, an epoch's end). Nothing to undo: a dead process cannot
        # be un-killed, the restart policy brings it back as a new container, not armed.
        cluster.command(self.worker, worker_control.KillDuringSaveCommand(self.epoch))
