"""`chaos compose --watch`: the progress board is a pure function of the
events it is fed; with no compose worker running the command says so."""

from __future__ import annotations

import pytest
import yaml

from chaos.compose import files as compose
from chaos.compose.watch import Board, watch
from chaos.errors import InfrastructureError
from chaos.events import DoneEvent, ErrorEvent, RestoredEvent, StartEvent, StepEvent


def step(worker, n, loss=0.5, epoch=0):
    return StepEvent(t=0.0, source=worker, step=n, epoch=epoch, loss=loss)


def test_status_line_shows_step_loss_and_steps_per_second_since_the_last_line():
    board = Board()
    board.feed("worker-0", step("worker-0", 100, 0.25, 1))
    first = board.status_line(1000.0)
    assert "worker-0 step 100 ep 1 loss 0.25" in first and "/s" not in first
    board.feed("worker-0", step("worker-0", 300, 0.2, 1))
    assert "worker-0 step 300 ep 1 loss 0.2 100/s" in board.status_line(1002.0)
    assert "0/s" in board.status_line(1004.0)  # no step since: stalled


def test_notable_events_get_their_own_line_and_a_state():
    board = Board()
    assert (
        board.feed("worker-1", StartEvent(t=0.0, source="worker-1", tf_version="2.20.0"))
        == "worker-1: started (TF 2.20.0)"
    )
    assert board.feed("worker-1", step("worker-1", 5)) is None
    error = ErrorEvent(
        t=0.0,
        source="worker-1",
        error_class="tensorflow.python.framework.errors_impl.UnavailableError",
        message='Graph execution error:\n\n  File "x.py", line 1\nCollective ops is aborted by: Socket closed',
    )
    assert board.feed("worker-1", error) == "worker-1: UnavailableError: Collective ops is aborted by: Socket closed"
    assert "[failed]" in board.status_line(1.0)
    assert board.exited("worker-1", 137) == "worker-1: exited 137" and "[exited 137]" in board.status_line(2.0)
    restored = RestoredEvent(t=0.0, source="worker-1", epoch=2, step=40, checkpoint="ckpt-2")
    assert board.feed("worker-1", restored) == "worker-1: restored ckpt-2: resumes at epoch 2, step 40"
    board.paused("worker-1", True)
    assert "[paused]" in board.status_line(3.0)
    assert board.feed("worker-1", DoneEvent(t=0.0, source="worker-1", step=100)) == "worker-1: done at step 100"


class _NoContainers:
    class containers:
        @staticmethod
        def list(**kwargs):
            return []


def test_watch_with_no_compose_worker_is_an_error_with_a_hint():
    with pytest.raises(InfrastructureError) as info:
        watch(_NoContainers(), project="mine", interval=0.01)
    assert "no docker-compose worker of tfchaos is running in project 'mine'" in info.value.message
    assert "docker-compose up -d" in info.value.hint


def test_the_compose_cluster_trains_long_and_restarts_failed_workers():
    doc = yaml.safe_load(compose.render_compose())
    for i in range(2):
        worker = doc["services"][f"worker-{i}"]
        assert worker["restart"] == "on-failure"
        assert '"epochs": 200' in worker["environment"]["CHAOS_WORKER_SETTINGS"]
        assert '"steps_per_epoch": 500' in worker["environment"]["CHAOS_WORKER_SETTINGS"]
    assert "restart" not in doc["services"]["proxy"]


@pytest.mark.parametrize("bad", ["0", "-1", "abc", "1e9"])
def test_a_bad_interval_is_a_usage_error(bad, capsys):
    from chaos.cli import main

    with pytest.raises(SystemExit) as info:
        main(["compose", "--watch", "--interval", bad])
    assert info.value.code == 2 and "must be seconds from 0.2 to 3600" in capsys.readouterr().err
