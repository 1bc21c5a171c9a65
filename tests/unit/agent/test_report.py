"""The one-line calls for custom loops: events with CHAOS_AGENT=1, nothing
at all without it, never an exception."""

from __future__ import annotations

import pytest

from chaos.agent import report
from chaos.agent.digest import weights_digest
from chaos.events import CheckpointEvent, DoneEvent, EpochEndEvent, ErrorEvent, PlanEvent, RestoredEvent, StepEvent


def test_a_custom_loop_reports_what_the_harness_reports(captured, numpy_module):
    weights = [numpy_module.array([1.0, 2.0])]
    report.plan(total_steps=6, steps_per_epoch=3, save_every_steps=3, checkpoint_dir="/ckpt")
    report.restored(3, "/ckpt/ckpt-1", weights=weights)
    for step in (4, 5, 6):
        report.step(step, 0.5)
    report.epoch_end(1, loss=0.4)
    report.checkpoint(6, "/ckpt/ckpt-2")
    report.done(weights)
    plan, restored, *steps, epoch_end, checkpoint, done = captured.events()
    assert isinstance(plan, PlanEvent) and (plan.epochs, plan.total_steps, plan.steps_per_epoch) == (2, 6, 3)
    assert (plan.save_every_steps, plan.checkpoint_dir) == (3, "/ckpt")
    assert isinstance(restored, RestoredEvent)
    assert (restored.epoch, restored.step, restored.checkpoint) == (1, 3, "ckpt-1")
    assert restored.weights_digest == weights_digest(weights)
    assert all(isinstance(e, StepEvent) for e in steps)
    assert [(e.epoch, e.step, e.loss, e.local_loss) for e in steps] == [
        (1, 4, 0.5, 0.5),
        (1, 5, 0.5, 0.5),
        (1, 6, 0.5, 0.5),
    ]
    assert isinstance(epoch_end, EpochEndEvent) and (epoch_end.epoch, epoch_end.step, epoch_end.loss) == (1, 6, 0.4)
    assert isinstance(checkpoint, CheckpointEvent) and (checkpoint.epoch, checkpoint.step, checkpoint.path) == (
        2,
        6,
        "ckpt-2",
    )
    assert isinstance(done, DoneEvent) and (done.epoch, done.step) == (1, 6)
    assert done.weights_digest == weights_digest(weights)


def test_explicit_epochs_win_and_a_digest_string_passes_through(captured):
    report.step(7, 1.25, epoch=9)
    report.done("abc123", step=7, epoch=9)
    step, done = captured.events()
    assert (step.epoch, step.step) == (9, 7)
    assert (done.weights_digest, done.step, done.epoch) == ("abc123", 7, 9)


def test_loss_may_be_anything_float_takes(captured):
    class EagerScalar:  # a TF eager tensor converts with float()
        def __float__(self):
            return 0.75

    report.step(1, EagerScalar())
    assert captured.events()[0].loss == 0.75


def test_bad_input_is_one_stderr_line_and_no_exception(captured, capsys):
    assert report.step(1, "not a number") is None
    assert report.step(2, "still not") is None
    assert captured.events() == []
    err = capsys.readouterr().err
    assert err.count("tfchaos agent: report.step failed, ignored: ValueError") == 1


def test_caught_exception_can_be_reported(captured):
    report.error(TimeoutError("peer gone"))
    (event,) = captured.events()
    assert isinstance(event, ErrorEvent) and event.error_class == "builtins.TimeoutError"


@pytest.mark.parametrize("value", [None, "", "0", "true", "yes"])
def test_without_chaos_agent_1_every_call_does_nothing(monkeypatch, capsys, value):
    if value is None:
        monkeypatch.delenv("CHAOS_AGENT", raising=False)
    else:
        monkeypatch.setenv("CHAOS_AGENT", value)
    report.plan(total_steps=1, steps_per_epoch=1)
    report.restored(1, "x", weights="d")
    report.step(1, 0.1)
    report.epoch_end(0)
    report.checkpoint(1, "x")
    report.done("d")
    report.error(ValueError("x"))
    report.step(1, "bad input, no complaint either")
    assert capsys.readouterr() == ("", "")
