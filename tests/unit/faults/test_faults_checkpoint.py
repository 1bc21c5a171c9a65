"""corrupt_checkpoint and stale_checkpoint against the fake cluster, and what they
do to real checkpoint files (chaos.backends.backup_files, run on a temporary folder)."""

import os

import pytest
from fake_backend import FakeCluster
from pydantic import ValidationError

from chaos.backends.backup_files import FILLER, clear, damage, fill, latest_prefix, snapshot
from chaos.backends.spec import WriteLimit
from chaos.faults import (
    FAULTS,
    CheckpointDiskFull,
    CorruptCheckpoint,
    KillDuringSave,
    SlowCheckpointStorage,
    StaleCheckpoint,
)
from chaos.faults.checkpoint import UNSHARED_BACKUP_DIR
from chaos.faults.undo import Undo
from chaos.worker import control as worker_control


class BackupFake(FakeCluster):
    """FakeCluster whose backup volume is a folder on the host."""

    def __init__(self, root, **kw):
        super().__init__(**kw)
        self.root = str(root)

    def damage_backup(self, file, mode):
        super().damage_backup(file, mode)
        return damage(self.root, file, mode)

    def snapshot_backup(self, name):
        super().snapshot_backup(name)
        return snapshot(self.root, name)["path"]


def write_checkpoint(folder, prefix, data=b"D" * 100, index=b"I" * 40, mtime=None):
    """A BackupAndRestore-like layout: a state file naming the prefix, its index and one data shard."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{prefix}.index").write_bytes(index)
    (folder / f"{prefix}.data-00000-of-00001").write_bytes(data)
    (folder / "checkpoint").write_text(f'model_checkpoint_path: "{prefix}"\nall_model_checkpoint_paths: "{prefix}"\n')
    if mtime is not None:
        for f in folder.iterdir():
            os.utime(f, (mtime, mtime))


@pytest.fixture
def backup(tmp_path):
    write_checkpoint(tmp_path / "chief", "ckpt-2")
    return tmp_path


def test_it_is_registered_with_its_defaults():
    fault = FAULTS.get("corrupt_checkpoint")(**{})
    assert (fault.file, fault.mode, fault.target) == ("data", "truncate", "checkpoint")


@pytest.mark.parametrize(
    "field, value, valid",
    [("mode", "shred", "'truncate', 'zero', 'flip' or 'delete'"), ("file", "meta", "'index' or 'data'")],
)
def test_a_bad_value_names_the_field_and_the_valid_values(field, value, valid):
    with pytest.raises(ValidationError) as info:
        CorruptCheckpoint(**{field: value})
    text = str(info.value)
    assert field in text and valid in text


def test_an_unknown_parameter_is_refused():
    with pytest.raises(ValidationError, match="worker"):
        CorruptCheckpoint(worker=1)


def test_truncate_halves_every_data_shard_and_records_a_notice(backup):
    undo = Undo()
    cluster = BackupFake(backup)
    CorruptCheckpoint(file="data", mode="truncate").inject(cluster, undo)
    assert (backup / "chief" / "ckpt-2.data-00000-of-00001").stat().st_size == 50
    assert (backup / "chief" / "ckpt-2.index").stat().st_size == 40  # the other file is untouched
    (notice,) = cluster.events
    assert notice.topic == "checkpoint_damaged"
    assert "chief/ckpt-2" in notice.text and "truncate 100 -> 50 bytes" in notice.text


def test_zero_keeps_the_size_and_zeroes_every_byte(backup):
    damage(str(backup), "index", "zero")
    assert (backup / "chief" / "ckpt-2.index").read_bytes() == bytes(40)


def test_flip_changes_exactly_one_byte(backup):
    damage(str(backup), "data", "flip")
    after = (backup / "chief" / "ckpt-2.data-00000-of-00001").read_bytes()
    assert len(after) == 100
    assert [i for i, b in enumerate(after) if b != ord("D")] == [50]


def test_delete_removes_the_file(backup):
    done = damage(str(backup), "index", "delete")
    assert not (backup / "chief" / "ckpt-2.index").exists()
    assert done == {"checkpoint": os.path.join("chief", "ckpt-2"), "files": {"chief/ckpt-2.index": "delete (40 bytes)"}}


def test_the_newest_state_file_names_the_checkpoint(tmp_path):
    write_checkpoint(tmp_path / "old", "ckpt-1", mtime=1_000)
    write_checkpoint(tmp_path / "chief", "ckpt-3", mtime=2_000)
    assert latest_prefix(str(tmp_path)) == str(tmp_path / "chief" / "ckpt-3")


def test_without_a_state_file_the_newest_index_is_taken(tmp_path):
    write_checkpoint(tmp_path / "a", "ckpt-1", mtime=1_000)
    write_checkpoint(tmp_path / "b", "ckpt-2", mtime=2_000)
    for state in tmp_path.rglob("checkpoint"):
        state.unlink()
    assert latest_prefix(str(tmp_path)) == str(tmp_path / "b" / "ckpt-2")


def test_nothing_saved_yet_is_an_error_that_says_so(tmp_path):
    undo = Undo()
    cluster = BackupFake(tmp_path)
    with pytest.raises(FileNotFoundError, match="nothing was saved yet"):
        CorruptCheckpoint().inject(cluster, undo)
    assert cluster.events == []


def test_heal_leaves_the_damage_and_is_idempotent(backup):
    undo = Undo()
    cluster = BackupFake(backup)
    fault = CorruptCheckpoint(mode="delete")
    undo(cluster)  # never injected
    fault.inject(cluster, undo)
    undo(cluster)
    undo(cluster)
    assert [c[0] for c in cluster.calls] == ["damage_backup"]
    assert not (backup / "chief" / "ckpt-2.data-00000-of-00001").exists()


# --- stale_checkpoint ---------------------------------------------------------------


def test_stale_older_copies_the_backups_aside_and_points_the_worker_at_the_copy(backup):
    undo = Undo()
    cluster = BackupFake(backup)
    StaleCheckpoint(worker=1, backup="older").inject(cluster, undo)
    copy = backup / "stale-worker-1"
    assert cluster.overrides == {
        1: {
            "stale_checkpoint": {
                "image": None,
                "env": {},
                "settings": {"backup_dir": str(copy)},
                "cluster_config": None,
            }
        }
    }
    # Later backups do not reach the copy: it stays at ckpt-2.
    write_checkpoint(backup / "chief", "ckpt-4")
    assert latest_prefix(str(copy)) == str(copy / "chief" / "ckpt-2")


def test_a_second_snapshot_replaces_the_first_and_never_copies_snapshots(backup):
    snapshot(str(backup), "stale-worker-1")
    write_checkpoint(backup / "chief", "ckpt-3")
    snapshot(str(backup), "stale-worker-1")
    assert sorted(p.name for p in (backup / "stale-worker-1").iterdir()) == ["chief"]
    assert latest_prefix(str(backup / "stale-worker-1")) == str(backup / "stale-worker-1" / "chief" / "ckpt-3")


def test_stale_none_points_the_worker_at_a_folder_off_the_shared_volume(backup):
    undo = Undo()
    cluster = BackupFake(backup)
    StaleCheckpoint(worker=0, backup="none").inject(cluster, undo)
    assert cluster.overrides[0]["stale_checkpoint"]["settings"] == {"backup_dir": UNSHARED_BACKUP_DIR}
    assert [c[0] for c in cluster.calls] == ["override"]


def test_stale_heal_keeps_the_worker_stale_for_the_restart_that_follows(backup):
    undo = Undo()
    # The runner heals every fault right before its restart: clearing here would undo the fault unseen.
    cluster = BackupFake(backup)
    fault = StaleCheckpoint(worker=1)
    fault.inject(cluster, undo)
    undo(cluster)
    assert cluster.active_overrides() == {1: ["stale_checkpoint"]}


def test_stale_older_before_any_backup_says_nothing_was_saved(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing was saved yet"):
        StaleCheckpoint(worker=1).inject(BackupFake(tmp_path))


def test_stale_validation_names_the_field_and_values():
    with pytest.raises(ValidationError) as info:
        StaleCheckpoint(worker=1, backup="newer")
    assert "backup" in str(info.value) and "'older' or 'none'" in str(info.value)
    with pytest.raises(ValidationError, match="worker"):
        StaleCheckpoint(worker=-1)
    # Any index up to the largest cluster's is a fault's value; its scenario refuses one it does not have.
    assert StaleCheckpoint(worker=9).worker == 9


def test_stale_needs_the_harness_settings_hook():
    assert StaleCheckpoint(worker=1).hooks() == frozenset({"settings"})
    assert CorruptCheckpoint().hooks() == frozenset()


# --- checkpoint_disk_full ---------------------------------------------------------------


def test_disk_full_asks_for_a_volume_of_its_size_and_fills_it_to_free_kb(tmp_path):
    undo = Undo()
    cluster = BackupFake(tmp_path)
    fault = CheckpointDiskFull(volume_mb=8, free_kb=2)
    assert fault.backup_volume_mb() == 8 and CorruptCheckpoint().backup_volume_mb() == 0
    fault.inject(cluster, undo)
    # The job is frozen around the fill, so the disk is full at the step the trigger named.
    assert cluster.calls == [("pause", 0), ("pause", 1), ("fill_backup_volume", 2048), ("unpause", 0), ("unpause", 1)]
    assert cluster.events[0].topic == "checkpoint_disk_full" and "1000 bytes written" in cluster.events[0].text


def test_disk_full_heal_frees_the_space_once(tmp_path):
    undo = Undo()
    cluster = BackupFake(tmp_path)
    fault = CheckpointDiskFull()
    undo(cluster)  # never injected: nothing to free
    fault.inject(cluster, undo)
    undo(cluster)
    undo(cluster)
    assert [c[0] for c in cluster.calls if c[0].endswith("backup_fill") or c[0] == "fill_backup_volume"] == [
        "fill_backup_volume",
        "clear_backup_fill",
    ]


def test_disk_full_heal_clears_a_half_done_fill(tmp_path):
    undo = Undo()
    cluster = BackupFake(tmp_path)
    cluster.fail["fill_backup_volume"] = RuntimeError("fill_backup_volume failed (fake engine error)")
    fault = CheckpointDiskFull()
    with pytest.raises(RuntimeError):
        fault.inject(cluster, undo)
    assert cluster.calls[-2:] == [("unpause", 0), ("unpause", 1)]  # never left frozen
    undo(cluster)
    assert cluster.calls[-1] == ("clear_backup_fill",)


def test_disk_full_refuses_a_free_space_as_large_as_the_volume():
    with pytest.raises(ValidationError, match=r"free_kb \(1024\) must be below the volume's size, volume_mb \(1\)"):
        CheckpointDiskFull(volume_mb=1, free_kb=1024)
    with pytest.raises(ValidationError, match="volume_mb"):
        CheckpointDiskFull(volume_mb=0)


def test_fill_leaves_the_asked_space_and_clear_gives_it_back(tmp_path, monkeypatch):
    # A 1 MB file system, simulated: free space is 1 MB minus what the filler holds.
    import chaos.backends.backup_files as bf

    monkeypatch.setattr(
        bf,
        "free_bytes",
        lambda root: (
            (1 << 20)
            - (os.path.getsize(os.path.join(root, FILLER)) if os.path.exists(os.path.join(root, FILLER)) else 0)
        ),
    )
    done = fill(str(tmp_path), "4096")
    assert done == {"filled": (1 << 20) - 4096, "free_before": 1 << 20, "free": 4096}
    assert fill(str(tmp_path), "8192")["free"] == 8192  # a second fill resizes the one filler
    assert clear(str(tmp_path)) == {"free": 1 << 20} and clear(str(tmp_path)) == {"free": 1 << 20}


def test_a_snapshot_never_copies_the_filler(backup):
    (backup / FILLER).write_bytes(bytes(10))
    snapshot(str(backup), "stale-worker-1")
    assert not (backup / "stale-worker-1" / FILLER).exists()


# --- slow_checkpoint_storage -------------------------------------------------------------


def test_slow_storage_limits_each_workers_writes_on_the_backup_device(tmp_path):
    undo = Undo()
    cluster = BackupFake(tmp_path)
    SlowCheckpointStorage(write_iops=10, write_kbps=256).inject(cluster, undo)
    limit = WriteLimit("/dev/vda", iops=10, bytes_per_s=256 * 1024)
    assert cluster.calls[0] == ("backup_device",)
    assert {w: o["slow_checkpoint_storage"]["write_limit"] for w, o in cluster.overrides.items()} == {
        0: limit,
        1: limit,
    }


def test_slow_storage_uses_a_given_device_and_heal_lifts_the_limits(tmp_path):
    undo = Undo()
    cluster = BackupFake(tmp_path)
    fault = SlowCheckpointStorage(workers=[0], device="/dev/sdb")
    fault.inject(cluster, undo)
    assert ("backup_device",) not in cluster.calls
    assert cluster.overrides[0]["slow_checkpoint_storage"]["write_limit"] == WriteLimit("/dev/sdb", iops=10)
    undo(cluster)
    undo(cluster)
    assert cluster.active_overrides() == {}


def test_slow_storage_is_applied_at_create_and_validates_its_fields():
    assert SlowCheckpointStorage.applies_at_create
    with pytest.raises(ValidationError, match="device"):
        SlowCheckpointStorage(device="vda")
    with pytest.raises(ValidationError, match="write_iops"):
        SlowCheckpointStorage(write_iops=0)


# --- kill_during_save ---------------------------------------------------------------------


def test_kill_during_save_arms_the_worker_with_a_command_and_heals_nothing(tmp_path):
    undo = Undo()
    cluster = BackupFake(tmp_path)
    fault = KillDuringSave()
    assert fault.target == "worker-0" and fault.hooks() == frozenset({"commands"})
    fault.inject(cluster, undo)
    undo(cluster)
    assert cluster.calls == [("command", 0, worker_control.KillDuringSaveCommand())]
    cluster.calls.clear()
    KillDuringSave(epoch=2).inject(cluster, Undo())
    assert cluster.calls == [("command", 0, worker_control.KillDuringSaveCommand(epoch=2))]


def test_kill_during_save_validates_the_worker():
    with pytest.raises(ValidationError, match="worker"):
        KillDuringSave(worker=-1)
    # Any worker of the largest cluster (it was 0..3); a scenario refuses one it does not have.
    assert KillDuringSave(worker=15).worker == 15


def test_disk_full_freezes_only_the_workers_still_running(tmp_path):
    cluster = BackupFake(tmp_path)
    cluster.running.discard(1)  # exited: nothing to freeze, and docker pause would refuse it
    CheckpointDiskFull().inject(cluster, Undo())
    assert [c for c in cluster.calls if c[0] in ("pause", "unpause")] == [("pause", 0), ("unpause", 0)]


def test_a_snapshot_skips_a_temporary_folder_a_live_worker_removes_during_the_copy(backup, monkeypatch):
    """Seen in a suite run: worker-1 removed /backup/workertemp_1 while the copy ran."""
    import shutil

    temp = backup / "workertemp_1"
    temp.mkdir()
    (temp / "part").write_bytes(b"x")
    real_copy = shutil.copy2

    def copy_as_the_worker_removes_it(src, dst, **kw):
        if "workertemp_1" in os.fspath(src):
            shutil.rmtree(temp, ignore_errors=True)
        return real_copy(src, dst, **kw)

    monkeypatch.setattr(shutil, "copy2", copy_as_the_worker_removes_it)
    out = snapshot(str(backup), "stale-worker-1")
    assert out["checkpoint"] == "chief/ckpt-2"


def test_a_snapshot_still_fails_on_a_file_it_cannot_copy(backup, monkeypatch):
    import shutil

    def refuse(src, dst, **kw):
        raise PermissionError(13, "Permission denied", src)

    monkeypatch.setattr(shutil, "copy2", refuse)
    with pytest.raises(shutil.Error, match="Permission denied"):
        snapshot(str(backup), "stale-worker-1")
