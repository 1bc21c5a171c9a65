"""Keras 3's fit observed as tf-keras's is (issue 38): the patch of the TF backend's
TensorFlowTrainer.fit against a fake Keras 3 (fake_keras3.py), with its
BackupAndRestore writing real files: plan, steps, epoch ends, each backup, the
restore of a restarted run and done, and a Keras whose trainer the agent does
not know said in a notice."""

from __future__ import annotations

import types

import pytest

from chaos.agent import fit as agent_fit
from chaos.agent.digest import weights_digest
from chaos.events import CheckpointEvent, DoneEvent, NoticeEvent, PlanEvent, RestoredEvent, StepEvent
from chaos.worker.backup_formats import KERAS3

TRAINER = "fakekeras3.src.backend.tensorflow.trainer"


@pytest.fixture
def keras3(monkeypatch, numpy_module):
    import sys

    import fake_keras3

    modules = fake_keras3.make_modules("fakekeras3")
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    agent_fit.patch_training_module(modules[TRAINER])
    return modules[TRAINER], modules["fakekeras3.src.callbacks"]


def of(events, cls):
    return [e for e in events if isinstance(e, cls)]


def test_the_trainers_fit_is_patched_and_models_inherit_it(keras3):
    trainer, _ = keras3
    assert hasattr(trainer.TensorFlowTrainer.__dict__["fit"], agent_fit.ORIGINAL)
    assert trainer.Model.fit is trainer.TensorFlowTrainer.fit


def test_a_fresh_run_reports_plan_steps_backups_and_done(keras3, captured, tmp_path):
    trainer, callbacks = keras3
    backup_dir = str(tmp_path / "backup")
    model = trainer.Model()
    model.fit([0] * 3, epochs=2, callbacks=[callbacks.BackupAndRestore(backup_dir)])
    events = captured.events()
    assert captured.kinds() == ["plan"] + ["step"] * 3 + ["epoch_end", "checkpoint"] + ["step"] * 3 + [
        "epoch_end",
        "checkpoint",
        "done",
    ]
    plan = events[0]
    assert isinstance(plan, PlanEvent) and (plan.checkpoint_dir, plan.save_every_steps) == (backup_dir, 3)
    assert [(c.epoch, c.step, c.path) for c in of(events, CheckpointEvent)] == [
        (1, 3, "latest.weights.h5@epoch-1"),
        (2, 6, "latest.weights.h5@epoch-2"),
    ]
    assert events[-1].weights_digest == weights_digest(model.get_weights())


def test_a_restarted_run_reports_the_restore_and_ends_as_an_uninterrupted_one(keras3, captured, tmp_path):
    trainer, callbacks = keras3
    backup_dir = str(tmp_path / "backup")
    killed = trainer.Model()
    killed.kill_at = (1, 1)  # after epoch 0's backup
    with pytest.raises(SystemExit):
        killed.fit([0] * 3, epochs=3, callbacks=[callbacks.BackupAndRestore(backup_dir)])
    after_epoch_0 = weights_digest([w + 0.75 for w in trainer.Model().get_weights()])
    first = len(captured.events())

    restarted = trainer.Model()  # a fresh process: fresh weights, the backup on the shared volume
    restarted.fit([0] * 3, epochs=3, callbacks=[callbacks.BackupAndRestore(backup_dir)])
    events = captured.events()[first:]
    restored = of(events, RestoredEvent)
    assert [(r.epoch, r.step, r.checkpoint) for r in restored] == [(1, 3, "latest.weights.h5@epoch-1")]
    assert restored[0].weights_digest == after_epoch_0
    assert [s.step for s in of(events, StepEvent)] == [4, 5, 6, 7, 8, 9]
    # The backup it restored from is not a new one.
    assert [c.path for c in of(events, CheckpointEvent)] == ["latest.weights.h5@epoch-2", "latest.weights.h5@epoch-3"]
    uninterrupted = trainer.Model()
    uninterrupted.fit([0] * 3, epochs=3)
    assert of(events, DoneEvent)[0].weights_digest == weights_digest(uninterrupted.get_weights())


def test_a_mid_epoch_backup_resumes_at_its_epochs_first_step(keras3, captured, tmp_path):
    # Keras 3 restores the epoch only: the backup at batch 1 of epoch 1 restarts epoch 1 from its start.
    trainer, callbacks = keras3
    backup_dir = str(tmp_path / "backup")
    killed = trainer.Model()
    killed.kill_at = (1, 2)
    with pytest.raises(SystemExit):
        killed.fit([0] * 3, epochs=2, callbacks=[callbacks.BackupAndRestore(backup_dir, save_freq=2)])
    saved = [c.path for c in of(captured.events(), CheckpointEvent)]
    # Epoch 1's batch 0 writes batch 0, as an epoch end does (Keras 3's metadata cannot tell them apart).
    assert saved == ["latest.weights.h5@epoch-0-batch-1", "latest.weights.h5@epoch-1"]
    first = len(captured.events())
    trainer.Model().fit([0] * 3, epochs=2, callbacks=[callbacks.BackupAndRestore(backup_dir, save_freq=2)])
    restored = of(captured.events()[first:], RestoredEvent)[0]
    assert (restored.epoch, restored.step, restored.checkpoint) == (1, 3, "latest.weights.h5@epoch-1")


def test_a_keras_without_the_trainer_class_is_a_notice_and_fit_runs_as_is(captured):
    module = types.ModuleType("otherkeras.src.backend.tensorflow.trainer")
    agent_fit.patch_training_module(module)
    notices = of(captured.events(), NoticeEvent)
    assert len(notices) == 1 and notices[0].topic == "agent"
    assert "no TensorFlowTrainer.fit in otherkeras.src.backend.tensorflow.trainer" in notices[0].text


@pytest.mark.parametrize(
    "files, expected",
    [
        ({}, None),
        ({"latest.weights.h5": "w"}, None),  # the weights written, the metadata not yet
        ({"latest.weights.h5": "w", "training_metadata.json": '{"epoch": 2'}, None),  # half written
        ({"training_metadata.json": '{"epoch": 2, "batch": 0}'}, None),  # no weights: nothing to restore
        ({"latest.weights.h5": "w", "training_metadata.json": '{"epoch": 2, "batch": 0}'}, (2, 0)),
    ],
)
def test_the_keras3_format_reads_only_a_whole_backup(tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert KERAS3.newest(str(tmp_path)) == expected
