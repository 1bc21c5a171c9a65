"""chaos.worker.backups (the kept_copies fix) on real files, with TensorFlow's
checkpoint reader replaced by a rule: a file whose name says "bad" does not read."""

import sys
import types

import pytest

from chaos.worker import backups


@pytest.fixture
def fake_tf(monkeypatch):
    states = []

    def update_checkpoint_state(folder, name, all_model_checkpoint_paths):
        states.append((folder, name, list(all_model_checkpoint_paths)))

    tf = types.SimpleNamespace(
        compat=types.SimpleNamespace(
            v1=types.SimpleNamespace(train=types.SimpleNamespace(update_checkpoint_state=update_checkpoint_state))
        )
    )
    monkeypatch.setitem(sys.modules, "tensorflow", tf)
    # A checkpoint reads when its data file holds b"good".
    monkeypatch.setattr(
        backups,
        "readable",
        lambda prefix: (
            None if open(prefix + ".data-00000-of-00001", "rb").read() == b"good" else "DataLossError: checksum"
        ),
    )
    return states


def save(folder, name, content=b"good"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.index").write_bytes(b"index")
    (folder / f"{name}.data-00000-of-00001").write_bytes(content)
    return str(folder / name)


def test_keep_copies_a_backup_that_reads_and_keeps_only_the_newest(tmp_path, fake_tf):
    for n in (1, 2, 3):
        assert backups.keep(save(tmp_path / "chief", f"ckpt-{n}"), str(tmp_path), copies=2)
    assert sorted(p.name for p in (tmp_path / "kept").iterdir()) == [
        "ckpt-2.data-00000-of-00001",
        "ckpt-2.index",
        "ckpt-3.data-00000-of-00001",
        "ckpt-3.index",
    ]


def test_keep_refuses_a_backup_that_does_not_read(tmp_path, fake_tf):
    assert not backups.keep(save(tmp_path / "chief", "ckpt-1", b"torn"), str(tmp_path), copies=1)
    assert not (tmp_path / "kept").exists()


def test_repair_puts_the_newest_good_copy_in_place_of_a_damaged_backup(tmp_path, fake_tf):
    backups.keep(save(tmp_path / "chief", "ckpt-1"), str(tmp_path), copies=2)
    backups.keep(save(tmp_path / "chief", "ckpt-2"), str(tmp_path), copies=2)
    latest = save(tmp_path / "chief", "ckpt-2", b"torn")  # damaged after it was kept
    said = backups.repair(latest, str(tmp_path))
    assert "ckpt-2 does not read (DataLossError: checksum); restoring the kept copy ckpt-2" in said
    assert (tmp_path / "chief" / "ckpt-2.data-00000-of-00001").read_bytes() == b"good"
    assert fake_tf == [(str(tmp_path / "chief"), "ckpt-2", ["ckpt-2"])]


def test_repair_falls_back_past_a_kept_copy_that_does_not_read(tmp_path, fake_tf):
    backups.keep(save(tmp_path / "chief", "ckpt-1"), str(tmp_path), copies=2)
    backups.keep(save(tmp_path / "chief", "ckpt-2"), str(tmp_path), copies=2)
    (tmp_path / "kept" / "ckpt-2.data-00000-of-00001").write_bytes(b"rot")
    said = backups.repair(save(tmp_path / "chief", "ckpt-2", b"torn"), str(tmp_path))
    assert said.endswith("restoring the kept copy ckpt-1")
    assert fake_tf == [(str(tmp_path / "chief"), "ckpt-1", ["ckpt-1"])]


def test_repair_leaves_a_good_backup_and_an_unrepairable_one_alone(tmp_path, fake_tf):
    assert backups.repair(save(tmp_path / "chief", "ckpt-1"), str(tmp_path)) is None
    assert backups.repair(save(tmp_path / "chief", "ckpt-2", b"torn"), str(tmp_path)) is None  # nothing kept
    assert backups.repair(None, str(tmp_path)) is None
    assert fake_tf == []


def fake_checkpoint_management(monkeypatch, updates: list, kills: list):
    """TF's checkpoint_management as the applier patches it (each state update
    recorded), and os.kill recorded instead of sent."""
    cm = types.SimpleNamespace(update_checkpoint_state_internal=lambda save_dir, path, **kw: updates.append(path))
    for name, module in {
        "tensorflow": types.SimpleNamespace(),
        "tensorflow.python": types.SimpleNamespace(),
        "tensorflow.python.checkpoint": types.SimpleNamespace(checkpoint_management=cm),
        "tensorflow.python.checkpoint.checkpoint_management": cm,
    }.items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setattr("os.kill", lambda pid, sig: kills.append(sig))
    return cm


def test_kill_during_save_kills_at_the_next_state_file_update_only_once_armed(monkeypatch, capsys):
    updates, kills = [], []
    cm = fake_checkpoint_management(monkeypatch, updates, kills)
    cm.update_checkpoint_state_internal("/backup/chief", "/backup/chief/ckpt-2")  # before: a normal save
    reported = []
    applied = backups.kill_during_save_applier(reported.append)({})
    assert "SIGKILL at the next backup" in applied["armed"] and kills == []
    cm.update_checkpoint_state_internal("/backup/chief", "/backup/chief/ckpt-3")
    import signal

    assert kills == [signal.SIGKILL]
    assert reported == ["/backup/chief/ckpt-3"]  # told before the kill
    assert "kill_during_save: /backup/chief/ckpt-3 written, /backup/chief/checkpoint not yet" in capsys.readouterr().err


def test_kill_during_save_with_an_epoch_lets_earlier_backups_through_and_kills_in_that_epoch(monkeypatch):
    """Armed at bring-up with ``epoch``: the kill's moment does not hang on when the
    command arrived (a CI run's arrived after a 100-step job had finished)."""
    import signal

    updates, kills = [], []
    cm = fake_checkpoint_management(monkeypatch, updates, kills)
    epochs = {"/b/ckpt-1": 0, "/b/ckpt-2": 1, "/b/ckpt-3": 2}
    applied = backups.kill_during_save_applier(lambda path: None, epochs.__getitem__)({"epoch": 2})
    assert "SIGKILL at the first backup of epoch 2" in applied["armed"]
    cm.update_checkpoint_state_internal("/b", "/b/ckpt-1")
    cm.update_checkpoint_state_internal("/b", "/b/ckpt-2")
    assert kills == [] and updates == ["/b/ckpt-1", "/b/ckpt-2"]  # earlier epochs' backups: named as usual
    cm.update_checkpoint_state_internal("/b", "/b/ckpt-3")
    assert kills == [signal.SIGKILL]  # (the mocked kill returns; a real one ends the process here)
