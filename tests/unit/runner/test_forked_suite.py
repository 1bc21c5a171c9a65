"""ForkedSuite: the suite in a forked child, reports back over a pipe; a child
that dies is an error naming its exit and log, and cancel stops and reaps it.

``run`` is replaced at the boundary before the fork (the child inherits the fake).
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from chaos import interrupts
from chaos.events import RUNNER, PhaseEvent
from chaos.report import build_report
from chaos.runner import suite as suite_module
from chaos.runner.forked_suite import ForkedSuite, SuiteProcessEnded
from chaos.runner.run import RunOptions
from chaos.runner.suite import ScenarioOverran, SuiteEntry
from chaos.scenario.loader import load_scenario
from chaos.timeline import Timeline

PLAIN = Path(__file__).resolve().parents[3] / "scenarios" / "killed-worker-recovers-from-checkpoint.yaml"


def entries(*files):
    scenario = load_scenario(PLAIN)
    return [SuiteEntry(scenario, f) for f in files]


def a_report(scenario, file):
    timeline = Timeline(scenario.run_info(), [PhaseEvent(t=0.0, source=RUNNER, phase="bring_up")])
    return build_report(scenario, file, [], timeline)


def test_each_report_comes_back_from_the_child_as_it_was_made(monkeypatch):
    parent = os.getpid()

    def run(scenario, file, options, events=None, progress=None, admit=None):
        admit()
        assert os.getpid() != parent  # it runs in the child
        return a_report(scenario, file)

    monkeypatch.setattr(suite_module, "run", run)
    files = [f"{name}.yaml" for name in "abcdefgh"]
    suite = ForkedSuite(entries(*files), RunOptions(), jobs=3).start()
    try:
        reports = [suite.result(i) for i in range(len(files))]
    finally:
        suite.cancel()
    assert [r.file for r in reports] == files
    assert reports[0].to_dict() == a_report(load_scenario(PLAIN), "a.yaml").to_dict()
    assert not suite.log.exists()  # a clean end leaves no log behind


def test_a_child_that_dies_is_an_error_with_its_exit_code_and_log_not_a_hang(monkeypatch):
    def run(scenario, file, options, events=None, progress=None, admit=None):
        print("the child's last words", flush=True)
        os._exit(3)

    monkeypatch.setattr(suite_module, "run", run)
    suite = ForkedSuite(entries("a.yaml"), RunOptions()).start()
    try:
        with pytest.raises(SuiteProcessEnded) as ended:
            suite.result(0)
    finally:
        suite.cancel()
    message = str(ended.value)
    assert "exit 3" in message and "scenario killed-worker-recovers-from-checkpoint" in message
    assert str(suite.log) in message and "the child's last words" in message
    suite.log.unlink()


def admitted_run(monkeypatch, tmp_path):
    """A one-scenario suite whose run works until the suite stops it, then tears
    down (writes its file name to the returned path); returned once admitted."""
    torn_down = tmp_path / "torn-down"

    def run(scenario, file, options, events=None, progress=None, admit=None):
        admit()
        try:
            while not events.stopped:  # a real run's waits end on the suite's stop
                time.sleep(0.05)
            raise interrupts.Cancelled
        finally:
            torn_down.write_text(file)  # the teardown a real run does on its way out

    monkeypatch.setattr(suite_module, "run", run)
    suite = ForkedSuite(entries("a.yaml"), RunOptions()).start()
    deadline = time.monotonic() + 10
    while 0 not in suite.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert 0 in suite.started  # admitted in the child
    return suite, torn_down


def test_cancel_stops_the_runs_in_the_child_and_waits_for_their_teardown(monkeypatch, tmp_path):
    suite, torn_down = admitted_run(monkeypatch, tmp_path)
    suite.cancel()
    assert torn_down.read_text() == "a.yaml"
    with pytest.raises(interrupts.Cancelled):
        suite.result(0)
    with pytest.raises(ChildProcessError):
        os.waitpid(suite._pid, os.WNOHANG)  # reaped: no such child


def test_the_parent_dying_stops_the_child(monkeypatch, tmp_path):
    """The control pipe closing (the parent ended, even by SIGKILL) is the child's cue."""
    suite, torn_down = admitted_run(monkeypatch, tmp_path)
    suite._control.close()  # what the kernel does when the parent dies
    _, status = os.waitpid(suite._pid, 0)
    assert os.waitstatus_to_exitcode(status) == 130
    assert torn_down.read_text() == "a.yaml"
    suite.log.unlink(missing_ok=True)


def test_the_last_report_is_sent_before_the_child_exits(monkeypatch):
    """A CI run lost the last scenario's report: the child's main loop was done (the
    report was in) and exited while the run's thread was still turning it into JSON
    to send. A slow to_dict makes that window wide."""
    from chaos.report.model import Report

    fast = Report.to_dict

    def slow_to_dict(self):
        time.sleep(0.5)
        return fast(self)

    def run(scenario, file, options, events=None, progress=None, admit=None):
        admit()
        return a_report(scenario, file)

    monkeypatch.setattr(suite_module, "run", run)
    monkeypatch.setattr(Report, "to_dict", slow_to_dict)
    suite = ForkedSuite(entries("a.yaml", "b.yaml"), RunOptions(), jobs=2).start()
    try:
        assert [suite.result(i).file for i in (0, 1)] == ["a.yaml", "b.yaml"]
    finally:
        suite.cancel()


def test_a_report_is_sent_when_its_run_ends_not_behind_an_earlier_entry(monkeypatch):
    """Exclusive (timing-sensitive) scenarios run last; a CI run held the reports of
    the two after one in the list until it had run, and the parent, counting their
    time from their start, judged them overran although both had ended."""
    exclusive = load_scenario(PLAIN.parent / "cpu-throttled-worker-slows-every-worker.yaml")
    assert SuiteEntry(exclusive, "x").exclusive

    def run(scenario, file, options, events=None, progress=None, admit=None):
        admit()
        if file == "slow.yaml":
            time.sleep(3)
        return a_report(scenario, file)

    monkeypatch.setattr(suite_module, "run", run)
    suite = ForkedSuite([SuiteEntry(exclusive, "slow.yaml"), *entries("fast.yaml")], RunOptions(), jobs=2).start()
    try:
        assert suite.result(1, limit_s=1.0).file == "fast.yaml"  # it ended at once
        assert 0 not in suite.reports  # the exclusive one still runs
        assert suite.result(0).file == "slow.yaml"
    finally:
        suite.cancel()


def test_a_scenario_that_overruns_leaves_its_threads_stacks_in_the_log_named(monkeypatch, tmp_path):
    """An overrun is a bug in the runner: where its thread is stuck is the evidence."""
    suite, _ = admitted_run(monkeypatch, tmp_path)
    try:
        with pytest.raises(ScenarioOverran) as overran:
            suite.result(0, limit_s=0.1)
        assert str(suite.log) in str(overran.value)
        deadline = time.monotonic() + 10
        while "in run" not in suite.log.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert re.search(r"test_forked_suite.py\", line \d+ in run\n", suite.log.read_text())  # the fake run's frame
    finally:
        suite.cancel()
    assert suite.log.exists()  # kept
    suite.log.unlink()


def test_the_scenarios_run_in_a_session_of_their_own(monkeypatch):
    """Integration tests beside the scenarios remove the new objects of their own
    session after each test (tests/integration/run_scope.py): a scenario's must
    never be among them."""
    from chaos import SESSION_ENV
    from chaos.backends.docker.ownership import LABEL_SESSION, owner_labels

    monkeypatch.setenv(SESSION_ENV, "tests-session")

    def run(scenario, file, options, events=None, progress=None, admit=None):
        admit()
        report = a_report(scenario, file)
        report.artifacts["session"] = owner_labels()[LABEL_SESSION]
        return report

    monkeypatch.setattr(suite_module, "run", run)
    suite = ForkedSuite(entries("a.yaml"), RunOptions()).start()
    try:
        session = suite.result(0).artifacts["session"]
    finally:
        suite.cancel()
    assert session.startswith("tests-session") and session != "tests-session"
