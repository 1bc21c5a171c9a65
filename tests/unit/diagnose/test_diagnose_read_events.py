"""What ``chaos diagnose`` reads from a log is the runner's own events (chaos.events): each
with the line it came from, off the wire, and a time a log line may not give (``when``)."""

from __future__ import annotations

import json
import math

from chaos.diagnose.logs import WorkerLog
from chaos.diagnose.observations import Evidence
from chaos.diagnose.observe import observe
from chaos.diagnose.read_events import NO_TIME, error_cls, error_read, timed, when
from chaos.events import ErrorEvent, ExitEvent, StepEvent, event_from_dict, parse_line
from chaos.workload.grammar import line_time


def log(*lines: str, name: str = "worker-1") -> WorkerLog:
    return WorkerLog(name, f"{name}.log", tuple(lines), tuple(range(1, len(lines) + 1)))


def test_a_text_error_is_an_error_event_with_its_line_and_the_class_as_printed():
    obs = observe(
        log(
            "Epoch 1/5",
            "2024-01-02 03:04:05.000001: tensorflow.python.framework.errors_impl.UnavailableError: Socket closed",
        )
    )
    [error] = obs.errors
    assert isinstance(error, ErrorEvent)
    assert error.error_class == "tensorflow.python.framework.errors_impl.UnavailableError"
    assert error_cls(error) == "UnavailableError" and error.message == "Socket closed"
    assert error.source == "worker-1" and error.worker == 1
    assert error.evidence == Evidence("worker-1.log:2", "worker-1", error.evidence.text)
    assert when(error) == line_time(error.evidence.text) is not None


def test_a_line_with_no_time_and_none_before_it_has_no_time():
    [exit_] = observe(log("Killed")).exits
    assert isinstance(exit_, ExitEvent) and exit_.exit_code == 137 and exit_.reason == ""
    assert math.isnan(exit_.t) and when(exit_) is None and timed([exit_]) == []


def test_an_orchestrators_reason_is_the_exit_events():
    [exit_] = observe(log("Status: Failed  Reason: Evicted  The node was low on resource: memory.")).exits
    assert exit_.reason == "evicted" and exit_.exit_code is None


def test_a_json_event_is_kept_as_it_was_printed_with_its_line():
    line = json.dumps({"event": "step", "step": 7, "t": 12.5, "source": "worker-1", "batch_digest": "ab"})
    [step] = observe(log(line, name="pod-a")).steps
    assert step == parse_line(line, "pod-a", 0.0)  # the same event: its line takes no part in equality
    assert isinstance(step, StepEvent) and step.source == "worker-1" and when(step) == 12.5
    assert step.evidence is not None and step.evidence.where == "pod-a.log:1" and step.evidence.log == "pod-a"


def test_an_events_line_is_not_on_the_wire_and_no_line_sets_it():
    error = error_read("OSError", "disk full", 3.0, Evidence("w.log:4", "w", "OSError: disk full"))
    assert "evidence" not in error.to_dict() and "evidence" not in error.to_json()
    read = event_from_dict({**error.to_dict(), "evidence": {"where": "x"}})
    assert read == error and read.evidence is None


def test_no_time_is_never_a_time():
    untimed = error_read("", "x", None, Evidence("w.log:1", "w", "x"))
    assert untimed.t is NO_TIME and when(untimed) is None
    assert when(ErrorEvent(0.0, "worker-0")) == 0.0  # a JSON event's own t, even 0, is a time


def test_the_worker_index_of_a_log_that_names_none():
    assert ErrorEvent(1.0, "worker-3").worker == 3
    assert ErrorEvent(1.0, "worker-0 (jobs/a/worker-0.log)").worker is None
    assert ErrorEvent(1.0, "chief").worker is None
