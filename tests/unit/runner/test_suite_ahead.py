"""Suite: scenarios prepared ahead of their turn, admitted in order, one slot each."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from chaos.runner import suite as suite_module
from chaos.runner.run import RunOptions
from chaos.runner.suite import Suite, SuiteEntry
from chaos.scenario.loader import load_scenario

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"
PLAIN = SCENARIOS / "killed-worker-recovers-from-checkpoint.yaml"
TIMED = SCENARIOS / "latency-slows-steps-then-training-completes.yaml"  # judges step times: runs alone


class Recorder:
    """``run`` replaced at the boundary: it logs when a scenario began preparing,
    was admitted and ended; each ends when the test releases it."""

    def __init__(self):
        self.log: list[tuple[str, str]] = []
        self.release: dict[str, threading.Event] = {}
        self.cond = threading.Condition()

    def run(self, scenario, file, options, events=None, progress=None, admit=None):
        with self.cond:
            self.log.append(("prepare", file))
            self.cond.notify_all()
        if file.startswith("broken"):
            return f"error report of {file}"  # broke before its turn (e.g. a missing image)
        admit()
        with self.cond:
            self.log.append(("admit", file))
            self.cond.notify_all()
        self.release.setdefault(file, threading.Event()).wait(10)
        with self.cond:
            self.log.append(("end", file))
        return f"report of {file}"

    def wait_for(self, entry, timeout=5.0):
        with self.cond:
            assert self.cond.wait_for(lambda: entry in self.log, timeout), f"{entry} never came: {self.log}"

    def end(self, file):
        self.release.setdefault(file, threading.Event()).set()


@pytest.fixture
def recorder(monkeypatch):
    rec = Recorder()
    monkeypatch.setattr(suite_module, "run", rec.run)
    yield rec
    for event in rec.release.values():
        event.set()


def entries(*files):
    plain, timed = load_scenario(PLAIN), load_scenario(TIMED)
    return [SuiteEntry(timed if f.startswith("timed") else plain, f) for f in files]


def test_scenarios_prepare_ahead_but_are_admitted_one_slot_at_a_time_in_order(recorder):
    suite = Suite(entries("a", "b", "c", "d"), RunOptions(), jobs=1, ahead=2).start()
    recorder.wait_for(("prepare", "c"))
    recorder.wait_for(("admit", "a"))
    assert ("prepare", "d") not in recorder.log  # jobs + ahead = 3 in flight
    assert [e for e in recorder.log if e[0] == "admit"] == [("admit", "a")]
    recorder.end("a")
    recorder.wait_for(("admit", "b"))
    recorder.wait_for(("prepare", "d"))
    for f in "bcd":
        recorder.end(f)
    assert suite.results() == [f"report of {f}" for f in "abcd"]
    assert [f for kind, f in recorder.log if kind == "admit"] == list("abcd")


def test_a_timing_sensitive_scenario_prepares_on_an_empty_machine_and_nothing_beside_it(recorder):
    import time

    suite = Suite(entries("a", "timed1", "timed2"), RunOptions(), jobs=2, ahead=2).start()
    recorder.wait_for(("admit", "a"))
    time.sleep(0.3)
    assert ("prepare", "timed1") not in recorder.log  # slots are free, but a still trains
    recorder.end("a")
    recorder.wait_for(("admit", "timed1"))
    time.sleep(0.3)
    assert ("prepare", "timed2") not in recorder.log  # timed1 measures step times
    recorder.end("timed1")
    recorder.wait_for(("admit", "timed2"))
    recorder.end("timed2")
    assert suite.results() == ["report of a", "report of timed1", "report of timed2"]


def test_a_run_that_breaks_before_its_turn_frees_its_place(recorder):
    suite = Suite(entries("a", "broken", "c"), RunOptions(), jobs=1, ahead=1).start()
    recorder.wait_for(("admit", "a"))
    recorder.wait_for(("prepare", "c"))  # the broken one left the queue at once
    recorder.end("a")
    recorder.end("c")
    assert suite.results() == ["report of a", "error report of broken", "report of c"]
    assert suite.started[1] is None  # never admitted: no run time of its own


def test_cancel_wakes_scenarios_waiting_for_their_turn(recorder):
    suite = Suite(entries("a", "b"), RunOptions(), jobs=1, ahead=1).start()
    recorder.wait_for(("prepare", "b"))
    recorder.end("a")
    suite.cancel()  # b is either admitted (and ends when released) or told to stop while waiting
    recorder.end("b")
    assert suite.failures[1] is None or isinstance(suite.failures[1], KeyboardInterrupt)
