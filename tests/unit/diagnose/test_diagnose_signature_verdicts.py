"""A diagnose signature's judgement is the framework's one result, a ``Verdict``:
pass with the events that prove it (each holding its log line), fail, or
unknown with the reason the logs cannot tell (issue 39, one result)."""

from __future__ import annotations

from chaos.checks.verdict import Status
from chaos.diagnose.history import LogHistory
from chaos.diagnose.logs import WorkerLog
from chaos.diagnose.observe import observe
from chaos.diagnose.signatures import (
    ErrorSignature,
    ExitSignature,
    PatternSignature,
    ShapeSignature,
    SkewSignature,
    StallSignature,
    proof_lines,
)
from chaos.events import ErrorEvent, ExitEvent, LogLine

UNAVAILABLE = (
    "2026-01-01 00:00:05.000000: E tensorflow/core/x.cc:1] "
    "tensorflow.python.framework.errors_impl.UnavailableError: Socket closed"
)


def log(name: str, *lines: str) -> WorkerLog:
    return WorkerLog(name, f"{name}.log", tuple(lines), tuple(range(1, len(lines) + 1)))


def test_a_matched_error_is_proved_by_the_error_event_with_its_line():
    workers = [observe(log("worker-1", "Epoch 1/5", UNAVAILABLE))]
    verdict = ErrorSignature(("UnavailableError",), "Socket closed").judge(LogHistory(workers))
    assert verdict.status is Status.PASS and verdict.role == "signature"
    assert verdict.check == "UnavailableError /Socket closed/"
    (event,) = verdict.evidence
    assert isinstance(event, ErrorEvent) and event.message.startswith("Socket closed")
    assert proof_lines(verdict)[0].where == "worker-1.log:2"


def test_a_line_that_is_no_event_is_proved_by_a_log_line_event_holding_it():
    workers = [observe(log("worker-0", "Started server with target: grpc://w0:2222"))]
    verdict = PatternSignature(r"Started server with target").judge(LogHistory(workers))
    assert verdict.status is Status.PASS
    (event,) = verdict.evidence
    assert isinstance(event, LogLine) and event.text.startswith("Started server")
    assert event.evidence is not None and event.evidence.where == "worker-0.log:1"


def test_not_seen_fails_with_a_reason_and_no_evidence():
    workers = [observe(log("worker-0", "Epoch 1/5"))]
    verdict = PatternSignature(r"Collective instance \d+").judge(LogHistory(workers))
    assert verdict.status is Status.FAIL and verdict.reason and verdict.evidence == ()


def test_each_cannot_tell_says_what_the_logs_lack():
    plain = [observe(log("worker-0", "Epoch 1/5")), observe(log("worker-1", "Epoch 1/5"))]
    judged = {
        "exit": ExitSignature(137).judge(LogHistory(plain)),
        "stall": StallSignature(10.0).judge(LogHistory(plain)),
        "skew": SkewSignature(("tf_version",)).judge(LogHistory(plain)),
        "shape": ShapeSignature(("oom_killer",)).judge(LogHistory(plain)),
    }
    for name, verdict in judged.items():
        assert verdict.status is Status.UNKNOWN, name
        assert verdict.reason.startswith("the logs cannot tell: "), name
    assert "exited" in judged["exit"].reason and "two steps" in judged["stall"].reason
    assert "environment" in judged["skew"].reason and "excerpt" in judged["shape"].reason


def test_an_exit_proof_is_the_exit_event():
    workers = [observe(log("worker-1", "Epoch 1/5", "worker-1 exited with code 137"))]
    verdict = ExitSignature(137, None, (1,)).judge(LogHistory(workers))
    assert verdict.status is Status.PASS
    (event,) = verdict.evidence
    assert isinstance(event, ExitEvent) and event.exit_code == 137
    assert ExitSignature(1, None, (1,)).judge(LogHistory(workers)).status is Status.FAIL
