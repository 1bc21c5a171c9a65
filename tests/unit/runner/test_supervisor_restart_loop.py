"""The runner stops retrying on a restart loop, against the fake cluster of test_supervisor.

A job whose every restart fails its restore the same way before any step
(corrupt-checkpoint-fails-every-restore-until-restarts-run-out, as measured) is
stopped after LOOP_CYCLES restarts, whatever budget is left; a killed worker that
recovers, or one killed again after each restart while training on, is never a
loop and gets every restart it needs."""

from __future__ import annotations

import time

import pytest

from chaos.diagnose import loops
from chaos.events import ErrorEvent, ExitEvent, RestartEvent, StepEvent
from chaos.runner import supervisor as supervisor_module
from chaos.runner.supervisor import Supervisor
from chaos.scenario.loader import scenario_from_dict
from tests.unit.runner.test_supervisor import EXPLAIN, KilledJob

READ_LESS = "Read less bytes than requested"


@pytest.fixture(autouse=True)
def no_poll_delay(monkeypatch):
    monkeypatch.setattr(supervisor_module, "POLL_S", 0)


class CorruptBackup(KilledJob):
    """The kill ends the first run; every restarted generation starts (TF imported), then each
    worker fails the restore with the same IndexError and exits 1, before any step."""

    def __init__(self):
        super().__init__(checkpoint_files=2)
        self.restore_pending = False

    def restart(self, indices, reason, grace_s=3.0):
        super().restart(indices, reason, grace_s)
        self.halted, self.restore_pending = True, True

    def _tick(self):
        if self.announce:
            self._announce()
        elif self.restore_pending:
            self.restore_pending = False
            for w in range(self.num_slots):
                name = self.worker_name(w)
                self.record(ErrorEvent(t=time.time(), source=name, error_class="IndexError", message=READ_LESS))
                self.record(ExitEvent(t=time.time(), source=name, exit_code=1))
        else:
            super()._tick()


def scenario(max_restarts: int, *kills: int, by: str = "runner"):
    return scenario_from_dict(
        {
            "name": "x",
            "description": "d",
            "explain": EXPLAIN,
            "cluster": {
                "workers": 2,
                "training": {"epochs": 3, "steps_per_epoch": 5},
                "recovery": {"restart": "all", "max_restarts": max_restarts, "by": by},
            },
            "faults": [{"kill_worker": {"worker": 1}, "at": {"step": s}} for s in kills],
            "timeouts": {"total": 30, "symptom": 30},
        }
    )


def supervise(sc, cluster):
    said: list[str] = []
    return Supervisor(sc, cluster, said.append).run(), cluster, said


def restarts_of(cluster) -> list:
    return [c for c in cluster.calls if c[0] == "restart"]


def test_a_restore_that_fails_after_every_restart_is_stopped_at_the_loop_not_at_the_budget():
    outcome, cluster, said = supervise(scenario(5, 3), CorruptBackup())
    assert not outcome.finished
    assert outcome.restarts == loops.LOOP_CYCLES == 2 and len(restarts_of(cluster)) == 2
    loop = (
        f"stop retrying: restart loop: IndexError: {READ_LESS} on every worker again after each of the last 2 "
        "restarts, with no step of progress"
    )
    assert outcome.reason == f"worker-0, worker-1 failed; {loop} (3 of max_restarts 5 left unused)"
    assert loop in said


def test_without_the_loop_read_the_same_job_spends_its_whole_budget(monkeypatch):
    """The control: the stop above is the loop's (the fake would fail forever)."""
    monkeypatch.setattr(Supervisor, "_restart_loop", lambda self, events: "")
    outcome, cluster, _ = supervise(scenario(5, 3), CorruptBackup())
    assert outcome.restarts == 5 and "recovery policy allows no (further) restart" in outcome.reason


def test_a_budget_of_the_loops_length_ends_at_the_same_restart_and_says_the_loop():
    # the shipped scenario's shape: max_restarts 2 = LOOP_CYCLES
    outcome, cluster, _ = supervise(scenario(2, 3), CorruptBackup())
    assert outcome.restarts == 2
    assert "stop retrying: restart loop: IndexError" in outcome.reason and "(max_restarts spent too)" in outcome.reason


def test_the_logs_are_read_for_a_loop_only_when_a_restart_is_decided(monkeypatch):
    reads = []

    def counted(events, scenario):
        reads.append(len(events))
        return loops.from_events(events, scenario)

    monkeypatch.setattr(supervisor_module, "from_events", counted)
    outcome, _, _ = supervise(scenario(5, 3), CorruptBackup())
    assert len(reads) == 3  # before restart 1, before restart 2, and the one not made
    reads.clear()
    assert supervise(scenario(3, 3), KilledJob(checkpoint_files=2))[0].finished
    assert len(reads) == 1  # the one restart; a run that completes is not read


def test_a_killed_worker_that_recovers_is_never_called_a_loop():
    outcome, cluster, said = supervise(scenario(3, 3), KilledJob(checkpoint_files=2))
    assert outcome.finished and outcome.restarts == 1, outcome.reason
    assert not [s for s in said if "restart loop" in s]


def test_a_worker_killed_again_after_each_restart_while_training_on_gets_every_restart():
    # each cycle dies of the same kill, but trains past the last one's best step first: progress, no loop
    outcome, cluster, said = supervise(scenario(5, 3, 8, 13), KilledJob(checkpoint_files=2))
    assert outcome.finished and outcome.restarts == 3, outcome.reason
    steps = [e.step for e in cluster.of(StepEvent) if e.source == "worker-0"]
    assert max(steps) == 15 and len(cluster.of(RestartEvent)) == 6  # 3 restarts of 2 workers
    assert not [s for s in said if "restart loop" in s]


def test_a_reading_that_breaks_costs_the_early_stop_never_the_run(monkeypatch):
    def broken(events, scenario):
        raise ValueError("a line no rule expected")

    monkeypatch.setattr(supervisor_module, "from_events", broken)
    outcome, _, said = supervise(scenario(3, 3), CorruptBackup())
    assert outcome.restarts == 3 and "recovery policy allows no (further) restart" in outcome.reason
    assert len([s for s in said if "could not read" in s]) == 4  # three restarts and the end
    assert any("could not read the run's logs for a restart loop" in s and "ValueError" in s for s in said)
