"""The Model.fit patch against a fake Keras: the caller's callbacks reach fit
unchanged with the agent's reporter last, the events come out in order, and
no agent failure changes what fit does or returns."""

from __future__ import annotations

import pytest

import chaos.worker.backup_formats as backup_formats
from chaos.agent import fit as agent_fit
from chaos.agent import runtime
from chaos.agent.digest import weights_digest
from chaos.events import CheckpointEvent, DoneEvent, EpochEndEvent, ErrorEvent, PlanEvent, RestoredEvent, StepEvent

TRAINING = "fakekeras.src.engine.training"


@pytest.fixture
def keras(fake_keras):
    training = fake_keras[TRAINING]
    agent_fit.patch_training_module(training)
    return fake_keras[TRAINING], fake_keras["fakekeras.src.callbacks"]


def test_patch_replaces_fit_once_and_keeps_its_signature(fake_keras):
    import inspect

    training = fake_keras[TRAINING]
    original = training.Model.fit
    agent_fit.patch_training_module(training)
    patched = training.Model.fit
    agent_fit.patch_training_module(training)  # again: no wrapper around the wrapper
    assert training.Model.fit is patched and getattr(patched, agent_fit.ORIGINAL) is original
    assert inspect.signature(patched) == inspect.signature(original)


def test_fit_gets_the_callers_callbacks_in_order_plus_the_reporter_last(keras, captured):
    training, callbacks = keras
    model = training.Model()
    mine, theirs = callbacks.Recorder(), callbacks.Recorder()
    given = [mine, theirs]
    history = model.fit([0] * 3, epochs=2, callbacks=given, verbose=0)

    assert isinstance(history, training.History) and history.epochs == 2
    received = model.calls[0]["callbacks"]
    assert received[:2] == [mine, theirs] and len(received) == 3
    assert type(received[2]).__name__ == "TfchaosAgentReporter"
    assert given == [mine, theirs]  # the caller's list itself is not changed
    assert model.calls[0]["verbose"] == 0 and model.calls[0]["x"] == [0] * 3
    # The user's callbacks saw every call, with Keras's logs.
    assert [c[0] for c in mine.calls].count("batch_end") == 6 and mine.calls[-1] == ("train_end",)
    assert mine.calls == theirs.calls


def test_positional_callbacks_are_kept_too(keras, captured):
    training, callbacks = keras
    model = training.Model()
    mine = callbacks.Recorder()
    # fit(x, y, batch_size, epochs, verbose, callbacks)
    model.fit([0] * 2, None, None, 1, 0, [mine])
    assert model.calls[0]["callbacks"][0] is mine and len(model.calls[0]["callbacks"]) == 2
    assert model.calls[0]["epochs"] == 1


def test_a_fit_run_reports_plan_steps_epoch_ends_and_done(keras, captured):
    training, _ = keras
    model = training.Model()
    model.fit([0] * 3, epochs=2)
    events = captured.events()
    assert captured.kinds() == ["plan"] + ["step"] * 3 + ["epoch_end"] + ["step"] * 3 + ["epoch_end", "done"]
    plan = events[0]
    assert isinstance(plan, PlanEvent)
    assert (plan.epochs, plan.steps_per_epoch, plan.total_steps, plan.save_every_steps) == (2, 3, 6, 0)
    steps = [e for e in events if isinstance(e, StepEvent)]
    assert [(e.epoch, e.step) for e in steps] == [(0, 1), (0, 2), (0, 3), (1, 4), (1, 5), (1, 6)]
    assert [e.loss for e in steps] == [1.0 / s for s in range(1, 7)]
    assert all(e.local_loss == e.loss and e.batch_digest == "" for e in steps)
    assert [(e.epoch, e.step) for e in events if isinstance(e, EpochEndEvent)] == [(0, 3), (1, 6)]
    done = events[-1]
    assert isinstance(done, DoneEvent) and (done.epoch, done.step) == (1, 6)
    assert done.weights_digest == weights_digest(model.get_weights()) != weights_digest(training.Model().get_weights())


def test_numpy_batch_indices_are_reported_as_numbers(keras, captured, capsys):
    training, _ = keras
    model = training.Model()
    model.numpy_batches = True
    model.fit([0] * 2, epochs=1)
    assert [e.step for e in captured.events() if isinstance(e, StepEvent)] == [1, 2]
    assert capsys.readouterr().err == ""


def test_steps_unknown_counts_this_processs_steps(keras, captured):
    training, _ = keras
    training.Model().fit(None, epochs=1, steps_per_epoch=None)  # no steps at all: an empty epoch
    assert captured.kinds() == ["plan", "epoch_end", "done"]
    assert captured.events()[0].steps_per_epoch == 0


def test_backup_and_restore_gives_plan_restored_and_checkpoints(keras, captured, monkeypatch):
    training, callbacks = keras
    backups = {"latest": "/ckpt/chief/ckpt-1"}  # a backup from an earlier run: epoch 1 holds 2 steps
    positions = {"/ckpt/chief/ckpt-1": (1, 0), "/ckpt/chief/ckpt-2": (2, 0)}
    monkeypatch.setattr(backup_formats, "latest_backup", lambda d: backups["latest"] if d == "/ckpt" else None)
    monkeypatch.setattr(backup_formats, "resume_position", lambda path, save_freq, spe: positions[path])

    class WritesBackups(callbacks.Callback):  # stands in for BackupAndRestore's saving
        def on_epoch_end(self, epoch, logs=None):
            backups["latest"] = f"/ckpt/chief/ckpt-{epoch + 1}"

    model = training.Model()
    model.fit([0] * 2, epochs=3, initial_epoch=1, callbacks=[callbacks.BackupAndRestore("/ckpt"), WritesBackups()])
    events = captured.events()
    plan, restored = events[0], events[1]
    assert isinstance(plan, PlanEvent) and (plan.checkpoint_dir, plan.save_every_steps) == ("/ckpt", 2)
    assert plan.initial_epoch == 1
    assert isinstance(restored, RestoredEvent)
    assert (restored.epoch, restored.step, restored.checkpoint) == (1, 2, "ckpt-1")
    assert restored.weights_digest == weights_digest(training.Model().get_weights())  # before any step
    # ckpt-1 was there at train begin: only the new one is a checkpoint event.
    assert [(e.step, e.path) for e in events if isinstance(e, CheckpointEvent)] == [(4, "ckpt-2")]
    assert [e.step for e in events if isinstance(e, StepEvent)] == [3, 4, 5, 6]


def test_an_unreadable_backup_costs_the_restored_event_only(keras, captured, monkeypatch, capsys):
    training, callbacks = keras

    def unreadable(path, save_freq, spe):
        raise OSError("ckpt-1.index: No such file or directory")

    monkeypatch.setattr(backup_formats, "latest_backup", lambda d: "/ckpt/chief/ckpt-1")
    monkeypatch.setattr(backup_formats, "resume_position", unreadable)
    training.Model().fit([0] * 2, epochs=1, callbacks=[callbacks.BackupAndRestore("/ckpt")])
    assert captured.kinds() == ["plan", "step", "step", "epoch_end", "done"]
    assert "tfchaos agent: fit: the restored event failed, ignored: OSError" in capsys.readouterr().err


def test_an_exception_in_fit_is_an_error_event_and_propagates_unchanged(keras, captured):
    training, _ = keras
    model = training.Model()
    model.fail_at = (0, 1)
    with pytest.raises(RuntimeError) as raised:
        model.fit([0] * 3, epochs=2)
    assert raised.value is model.failure
    errors = [e for e in captured.events() if isinstance(e, ErrorEvent)]
    assert [(e.error_class, e.message) for e in errors] == [("builtins.RuntimeError", "collective aborted")]
    assert "done" not in captured.kinds()


def test_an_emitter_that_fails_changes_nothing_for_fit(keras, monkeypatch, capsys):
    monkeypatch.setenv("CHAOS_AGENT", "1")

    class Broken:
        source = "worker-0"

        def emit(self, *a, **k):
            raise OSError("stdout closed")

    monkeypatch.setattr(runtime, "_emitter", Broken())
    training, callbacks = keras
    model, mine = training.Model(), callbacks.Recorder()
    history = model.fit([0] * 3, epochs=2, callbacks=[mine])
    assert history.epochs == 2 and len([c for c in mine.calls if c[0] == "batch_end"]) == 6
    err = capsys.readouterr().err
    # One line per place that failed, not one per step.
    assert err.count("tfchaos agent: fit: batch end failed, ignored: OSError: stdout closed") == 1


def test_a_failing_preparation_calls_the_original_fit_unchanged(keras, captured, monkeypatch, capsys):
    training, callbacks = keras

    def boom(_module):
        raise TypeError("no reporter today")

    monkeypatch.setattr(agent_fit, "reporter_class", boom)
    model, mine = training.Model(), callbacks.Recorder()
    given = [mine]
    model.fit([0], epochs=1, callbacks=given)
    assert model.calls[0]["callbacks"] is given
    assert captured.events() == []
    assert "tfchaos agent: fit: adding the reporter failed, ignored: TypeError" in capsys.readouterr().err


def test_bad_arguments_fail_as_the_original_fit_fails(keras, captured):
    training, _ = keras
    with pytest.raises(TypeError, match="unexpected keyword"):
        training.Model().fit([0], epochz=3)


def test_a_ready_callback_list_is_passed_through_untouched(keras, captured):
    training, callbacks = keras
    model = training.Model()
    ready = callbacks.CallbackList([callbacks.Recorder()])
    model.fit([0], epochs=1, callbacks=ready)
    assert model.calls[0]["callbacks"] is ready and len(ready.callbacks) == 1
    assert captured.events() == []


def test_without_chaos_agent_fit_is_called_through_untouched(keras, monkeypatch, capsys):
    monkeypatch.delenv("CHAOS_AGENT", raising=False)
    training, callbacks = keras
    model, given = training.Model(), [callbacks.Recorder()]
    model.fit([0] * 2, epochs=1, callbacks=given)
    assert model.calls[0]["callbacks"] is given
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(
    "save_freq, steps, expected",
    [
        ("epoch", 20, 20),
        ("epoch", None, 0),
        (5, 20, 5),
        (False, 20, 0),
        (True, 20, 0),
        (0, 20, 0),
    ],
)
def test_save_interval(save_freq, steps, expected):
    assert agent_fit.save_interval(save_freq, steps) == expected


def test_callbacks_module_of_each_keras():
    assert agent_fit.fit_hook("tf_keras.src.engine.training")[1] == "tf_keras.src.callbacks"
    assert agent_fit.fit_hook("keras.src.engine.training")[1] == "keras.src.callbacks"
    assert agent_fit.fit_hook("keras.engine.training")[1] == "keras.callbacks"
    assert agent_fit.fit_hook("keras.src.backend.tensorflow.trainer")[1] == "keras.src.callbacks"
