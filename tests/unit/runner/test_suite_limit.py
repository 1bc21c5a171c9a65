"""Suite.result's limit counts a scenario's own run, not its wait for a turn."""

import threading
import time
from pathlib import Path

import pytest

from chaos.runner import suite as suite_module
from chaos.runner.run import RunOptions
from chaos.runner.suite import ScenarioOverran, Suite, SuiteEntry
from chaos.scenario.loader import load_scenario

SCENARIO = Path(__file__).resolve().parents[3] / "scenarios" / "killed-worker-recovers-from-checkpoint.yaml"


@pytest.fixture
def slow_runs(monkeypatch):
    """``run`` replaced at the boundary: each call sleeps for the next of the given seconds."""
    durations: list[float] = []
    release = threading.Event()

    def fake_run(scenario, file, options, events=None, progress=None, admit=None):
        admit()
        release.wait(durations.pop(0))
        return f"report of {file}"

    monkeypatch.setattr(suite_module, "run", fake_run)
    yield durations
    release.set()


def entries(n):
    scenario = load_scenario(SCENARIO)
    return [SuiteEntry(scenario, f"file-{i}") for i in range(n)]


def test_the_wait_behind_another_scenario_is_not_counted(slow_runs):
    slow_runs.extend([0.8, 0.1])
    suite = Suite(entries(2), RunOptions(), jobs=1).start()
    # asked for at once: it waits 0.8 s for its turn and runs 0.1 s, within a 0.5 s limit
    assert suite.result(1, limit_s=0.5) == "report of file-1"
    assert suite.result(0) == "report of file-0"


def test_a_scenario_running_past_the_limit_is_reported_by_name(slow_runs):
    slow_runs.extend([5.0])
    suite = Suite(entries(1), RunOptions(), jobs=1).start()
    began = time.monotonic()
    with pytest.raises(
        ScenarioOverran, match=r"killed-worker-recovers-from-checkpoint still running 0\.3 s after it started"
    ):
        suite.result(0, limit_s=0.3)
    assert time.monotonic() - began < 2.0
