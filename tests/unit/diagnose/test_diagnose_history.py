"""What `chaos diagnose` reads is the runner's own history (chaos/diagnose/history.py): on the
recorded runs of a whole audit battery, the timeline read back from a run's worker logs holds
the run's own start, step and exit events, equal and in the same order, and every error event the run
recorded (issue 39, one history); the signatures of errors, exits, batches and environments judge that timeline."""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path

import pytest

from chaos.checks.verdict import Status
from chaos.cli import main
from chaos.diagnose.history import WORKLOAD, LogHistory, timeline_json, timeline_of
from chaos.diagnose.logs import WorkerLog
from chaos.diagnose.observations import Evidence
from chaos.diagnose.observe import observe_all
from chaos.diagnose.selfcheck import report_logs
from chaos.diagnose.signatures import ErrorSignature, ExitSignature, NoErrorSignature, SkewSignature
from chaos.events import ErrorEvent, ExitEvent, StartEvent, StepEvent
from chaos.events_text import short_class
from chaos.report.model import Report
from chaos.timeline import Timeline

ROOT = Path(__file__).resolve().parents[3]
RECORDED = sorted((ROOT / "tests" / "fixtures" / "audit_example").glob("*.json.gz"))
LOGS = ROOT / "tests" / "unit" / "diagnose" / "logs"


def _report(path: Path) -> Report:
    return Report.from_dict(json.loads(gzip.decompress(path.read_bytes())))


def _workers_events(timeline, kinds) -> list:
    return [e for e in timeline if isinstance(e, kinds) and e.worker is not None]


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name.split(".")[0])
def test_a_runs_logs_read_back_into_its_own_steps_exits_and_errors(path):
    report = _report(path)
    read = timeline_of(observe_all(report_logs(report)))
    own = _workers_events(report.timeline, (StartEvent, StepEvent, ExitEvent))
    assert len(own) > 500
    assert _workers_events(read, (StartEvent, StepEvent, ExitEvent)) == own  # equal events, in the run's order
    read_errors = {(e.source, short_class(e.error_class), e.message) for e in read.of(ErrorEvent)}
    for e in _workers_events(report.timeline, (ErrorEvent,)):
        assert (e.source, short_class(e.error_class), e.message) in read_errors
    assert all(e.evidence is not None for e in read)  # each with the line it was read from
    assert read.info.num_workers == 2 and read.info.workload == WORKLOAD and read.info.evidence == ()


def test_a_log_of_no_time_keeps_its_order_and_writes_null_times():
    lines = (
        "Epoch 1/2",
        "tensorflow.python.framework.errors_impl.UnavailableError: Socket closed",
        "worker-0 exited with code 1",
    )
    timeline = timeline_of(observe_all([WorkerLog("worker-0", "w0.log", lines, (1, 2, 3))]))
    assert [type(e) for e in timeline] == [ErrorEvent, ExitEvent]
    data = timeline_json(timeline)
    assert [e["t"] for e in data["events"]] == [None, None]
    assert [e["line"]["where"] for e in data["events"]] == ["w0.log:2", "w0.log:3"]
    json.dumps(data, allow_nan=False)  # valid JSON: no NaN


def test_diagnose_writes_the_timeline_it_read(tmp_path, capsys):
    out = tmp_path / "read.json"
    code = main(["diagnose", "--timeline", str(out), str(LOGS / "killed-worker-recovers-from-checkpoint")])
    assert code == 0 and "killed-worker-recovers-from-checkpoint" in capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["info"]["workload"] == WORKLOAD
    kinds = [e["event"] for e in data["events"]]
    assert kinds.count("step") == 12 and kinds.count("exit") == 2 and "error" in kinds


@pytest.mark.parametrize("where, said", [("no-such-folder/read.json", "no folder"), ("", "cannot write it")])
def test_a_timeline_file_that_cannot_be_written_is_bad_input(tmp_path, capsys, where, said):
    target = tmp_path / where if where else tmp_path  # a folder is no file
    code = main(["diagnose", "--timeline", str(target), str(LOGS / "killed-worker-recovers-from-checkpoint")])
    err = capsys.readouterr().err
    assert code == 2 and f"--timeline {target}" in err and said in err and "hint:" in err


def _logged(name: str, *lines: str) -> WorkerLog:
    return WorkerLog(name, f"{name}.log", lines, tuple(range(1, len(lines) + 1)))


def test_the_history_gives_each_logs_events_in_its_lines_order_whatever_its_clock():
    """A log of two runs goes back in time; the timeline orders by time, a signature's proof
    reads log by log, each in its lines' order (as the user reads the file)."""
    reset = "E tensorflow/core/common_runtime/ring_alg.cc:291] Aborting RingReduce with UNAVAILABLE: reset {}"
    chief = _logged(
        "chief",
        "2026-11-25 10:00:05.000000: " + reset.format("late"),
        "2026-11-25 10:00:01.000000: " + reset.format("early"),
    )
    other = _logged("worker-1", "2026-11-25 10:00:03.000000: " + reset.format("w1"))
    anon = _logged("job", "2026-11-25 10:00:04.000000: " + reset.format("job"))
    logs = LogHistory(observe_all([chief, other, anon]))
    by_time = [e.message.rsplit(" ", 1)[-1] for e in logs.timeline.of(ErrorEvent)]
    assert by_time == ["early", "w1", "job", "late"]
    assert [e.message.rsplit(" ", 1)[-1] for e in logs.events(ErrorEvent)] == ["late", "early", "w1", "job"]
    # on: the logs of those tasks ("chief" is task 0), and a log whose name gives no index
    assert [e.evidence.log for e in logs.events(ErrorEvent, on=(1,))] == ["worker-1", "job"]
    assert [len(events) for events in logs.per_log(ErrorEvent)] == [2, 1, 1]
    proof = ErrorSignature(("UnavailableError",), "reset").judge(logs)
    assert [e.evidence.where for e in proof.evidence] == ["chief.log:1", "chief.log:2", "worker-1.log:1", "job.log:1"]


def test_the_error_exit_batch_and_environment_signatures_judge_the_timeline_alone():
    """What they read is the history's timeline: an event put there is judged, with no line behind it."""
    logs = LogHistory(observe_all([_logged("worker-0", "Epoch 1/2")]))
    assert ExitSignature(137).judge(logs).status is Status.UNKNOWN and NoErrorSignature().judge(logs).passed
    killed = ExitEvent(t=1.0, source="worker-0", exit_code=137, evidence=Evidence("w.log:9", "worker-0", "x"))
    logs = LogHistory(logs.workers, Timeline(logs.timeline.info, [*logs.timeline.events, killed]))
    assert ExitSignature(137).judge(logs).passed and NoErrorSignature().judge(logs).failed
    starts = [
        StartEvent(t=0.5, source=f"worker-{i}", tf_version=v, evidence=Evidence(f"w{i}.log:1", f"worker-{i}", "start"))
        for i, v in enumerate(("2.21.0", "2.15.1"))
    ]
    skew = SkewSignature(("tf_version",))
    assert skew.judge(logs).status is Status.UNKNOWN  # no start in the timeline
    assert skew.judge(LogHistory(logs.workers, Timeline(logs.timeline.info, starts))).passed
    same = [dataclasses.replace(s, tf_version="2.21.0") for s in starts]
    assert skew.judge(LogHistory(logs.workers, Timeline(logs.timeline.info, same))).failed
