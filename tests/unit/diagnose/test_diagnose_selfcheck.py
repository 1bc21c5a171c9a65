"""The rule the suite applies after each passing scenario: its own worker logs
diagnose as it (first or tied-first); a scenario with no symptom in its logs
gives no match. Each branch is shown failing where it should."""

from __future__ import annotations

from chaos.checks.verdict import Status
from chaos.diagnose.catalogue import KnownFailure
from chaos.diagnose.logs import WorkerLog
from chaos.diagnose.selfcheck import report_logs, verdict
from chaos.diagnose.signatures import ErrorSignature, ExitSignature, NoErrorSignature, PatternSignature
from chaos.events import ErrorEvent, ExitEvent, LogLine, StepEvent
from chaos.report import build_report
from chaos.scenario.loader import scenario_from_dict
from chaos.timeline import Timeline

FAIL = Status.FAIL


def entry(name, *signatures):
    return KnownFailure(name, f"scenarios/{name}.yaml", "d", "s", "c", "f", tuple(signatures), ())


KILLED = entry("killed", ErrorSignature(("UnavailableError",), "Socket closed", (0,)), ExitSignature(137, None, (1,)))
RESET = entry("reset", ErrorSignature(("UnavailableError",), "Socket closed|reset", None))
QUIET = entry("quiet", NoErrorSignature())
LOGS = [
    WorkerLog("worker-0", "w0.log", ("UnavailableError: Collective ops is aborted by: Socket closed",), (1,)),
    WorkerLog("worker-1", "w1.log", ('{"event":"exit","exit_code":137,"source":"worker-1","t":2.0}',), (1,)),
]


def test_own_logs_ranked_first_hold():
    judged, _ = verdict("killed", LOGS, [RESET, KILLED])
    assert judged.passed and judged.reason == "diagnosed as killed"


def test_ranked_below_another_fails_naming_the_ranking():
    louder = entry("louder", *KILLED.signatures, PatternSignature("Socket closed"))
    judged, _ = verdict("killed", LOGS, [KILLED, louder])
    assert judged.status is FAIL and "do not diagnose as killed: ranked louder" in judged.reason


def test_tied_first_holds_and_says_with_whom():
    twin = entry("twin", *KILLED.signatures)
    judged, _ = verdict("killed", LOGS, [twin, KILLED])
    assert judged.passed and "tied with twin" in judged.reason


def test_a_scenario_with_no_log_symptom_must_give_no_match():
    assert verdict("quiet", [WorkerLog("worker-0", "w", ("Epoch 1/1",), (1,))], [QUIET, KILLED])[0].passed
    judged, _ = verdict("quiet", LOGS, [QUIET, KILLED])
    assert judged.status is FAIL and "no symptom a log shows" in judged.reason


def test_a_scenario_missing_from_the_catalogue_fails():
    judged, ranked = verdict("other", LOGS, [KILLED])
    assert judged.status is FAIL and judged.reason == "other is not in the catalogue" and ranked == []
    assert (judged.check, judged.role) == ("diagnose", "self-diagnosis")


def report(artifacts=None):
    scenario = scenario_from_dict(
        {
            "name": "killed",
            "description": "d",
            "explain": {"symptom": "s", "cause": "c", "fix": "f"},
            "faults": [{"kill_worker": {"worker": 1}, "at": {"step": 2}}],
        }
    )
    events = [
        StepEvent(t=1.0, source="worker-0", step=1),
        LogLine(t=1.5, source="worker-0", text="a plain line"),
        ErrorEvent(t=2.0, source="worker-0", error_class="UnavailableError", message="Socket closed"),
        ExitEvent(t=2.1, source="worker-1", exit_code=137),
    ]
    built = build_report(scenario, "scenarios/killed.yaml", [], Timeline(scenario.run_info(), events))
    return built.with_artifacts(artifacts) if artifacts else built


def test_report_logs_rebuilt_from_the_timeline_without_artifacts():
    logs = report_logs(report())
    assert [log.name for log in logs] == ["worker-0", "worker-1"]
    assert logs[0].lines[1] == "a plain line" and '"exit_code":137' in logs[1].lines[0]
    assert verdict("killed", logs, [RESET, KILLED])[0].passed


def test_report_logs_read_from_the_artifact_files(tmp_path):
    (tmp_path / "worker-0.log").write_text("UnavailableError: Socket closed\n")
    (tmp_path / "worker-1.log").write_text("Killed\n")
    logs = report_logs(
        report({"worker-0 log": str(tmp_path / "worker-0.log"), "worker-1 log": str(tmp_path / "worker-1.log")})
    )
    assert [log.lines for log in logs] == [("UnavailableError: Socket closed",), ("Killed",)]
