import json
import xml.etree.ElementTree as ET

import pytest

from chaos.checks import Completed, ErrorRaised, MatchesUninterrupted, RecoveredWithin, Status, run_checks
from chaos.events import RUNNER, DoneEvent, ErrorEvent, ExitEvent, InjectEvent, PhaseEvent, RestartEvent, StepEvent
from chaos.report import build_report, junit_xml, read_json, terminal_summary, write_json, write_junit
from chaos.scenario.loader import scenario_from_dict
from chaos.timeline import Timeline

ERROR = "tensorflow.python.framework.errors_impl.UnavailableError"


def scenario():
    return scenario_from_dict(
        {
            "name": "killed-worker-recovers-from-checkpoint",
            "description": "kill worker-1",
            "explain": {"symptom": "UnavailableError", "cause": "no elasticity", "fix": "restart all"},
            "cluster": {"training": {"epochs": 1, "steps_per_epoch": 4}},
            "faults": [{"kill_worker": {"worker": 1}, "at": {"step": 2}}],
            "expect": [{"error": {"class": "UnavailableError", "workers": [0]}}],
            "recover": [{"completed": {}}, {"matches_uninterrupted": {}}, {"recovered_within": {"max_s": 1}}],
        }
    )


def timeline(s):
    events = [
        PhaseEvent(t=0.0, source=RUNNER, phase="bring_up"),
        PhaseEvent(t=5.0, source=RUNNER, phase="training"),
    ]
    for step in (1, 2):
        events += [StepEvent(t=5.0 + step, source=f"worker-{w}", step=step) for w in (0, 1)]
    events += [
        InjectEvent(t=7.5, source=RUNNER, fault="kill_worker", target="worker-1", params={"worker": 1}),
        ExitEvent(t=7.6, source="worker-1", exit_code=137),
        ErrorEvent(
            t=8.5, source="worker-0", error_class=ERROR, message="Collective ops is aborted by: Connection refused"
        ),
        ExitEvent(t=8.6, source="worker-0", exit_code=1),
        RestartEvent(t=9.0, source="worker-0"),
        RestartEvent(t=9.0, source="worker-1"),
    ]
    for step in (3, 4):
        events += [StepEvent(t=12.0 + step, source=f"worker-{w}", step=step) for w in (0, 1)]
    events += [DoneEvent(t=17.0, source=f"worker-{w}", step=4, weights_digest="abc") for w in (0, 1)]
    return Timeline(s.run_info(reference_digest="xyz"), events)


def unjudgeable(report):
    """A verdict that cannot judge: no reference digest."""
    from dataclasses import replace

    info = replace(report.timeline.info, reference_digest=None)
    (verdict,) = run_checks([MatchesUninterrupted()], Timeline(info, []))
    assert verdict.status is Status.UNKNOWN
    return [verdict]


@pytest.fixture
def report():
    s = scenario()
    t = timeline(s)
    verdicts = run_checks(s.checks, t)
    return build_report(
        s, "scenarios/killed-worker-recovers-from-checkpoint.yaml", verdicts, t, {"logs": "runs/1/logs"}
    )


def test_report_status_timings_and_reproduce_command(report):
    assert [v.status for v in report.verdicts] == [Status.PASS, Status.PASS, Status.FAIL, Status.FAIL]
    assert report.status is Status.FAIL
    assert report.reproduce == "chaos run scenarios/killed-worker-recovers-from-checkpoint.yaml"
    t = report.timings
    assert t.bring_up_s == 5.0
    assert t.time_to_symptom_s == pytest.approx(0.1)  # the killed worker's exit
    assert t.time_to_recover_s == pytest.approx(6.0)  # restart at 9, step 3 at 15
    assert t.total_s == 17.0


def test_status_is_error_when_the_run_broke_and_unknown_when_a_check_could_not_judge(report):
    from dataclasses import replace

    passing = [v for v in report.verdicts if v.passed]
    assert replace(report, verdicts=passing).status is Status.PASS
    assert replace(report, verdicts=passing, error="docker died").status is Status.ERROR
    assert replace(report, error="docker died").status is Status.ERROR  # even over a failed check
    assert replace(report, verdicts=[]).status is Status.UNKNOWN
    assert replace(report, verdicts=passing, incomplete="training did not complete").status is Status.UNKNOWN
    symptoms_only = [v for v in passing if v.role == "expect"]
    assert replace(report, verdicts=symptoms_only, incomplete="no restart").status is Status.PASS
    unknown = unjudgeable(report)
    assert replace(report, verdicts=passing + unknown).status is Status.UNKNOWN


def test_json_report_round_trips(report, tmp_path):
    path = write_json(report, tmp_path / "out" / "report.json")
    data = json.loads(path.read_text())
    assert data["status"] == "fail" and data["reproduce"].startswith("chaos run ")
    assert data["explain"]["fix"] == "restart all" and data["artifacts"] == {"logs": "runs/1/logs"}
    assert data["verdicts"][0]["evidence"][1]["event"] == "error"
    again = read_json(path)
    assert again.to_dict() == report.to_dict()
    assert again.timeline.events == report.timeline.events


def test_junit_has_one_testcase_per_check_and_counts_failures(report, tmp_path):
    from dataclasses import replace

    broken = replace(report, scenario="other", verdicts=[], error="InfrastructureError: no image")
    path = write_junit([report, broken], tmp_path / "junit.xml")
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("5", "2", "1")
    suite = root.find("testsuite[@name='killed-worker-recovers-from-checkpoint']")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [
        "expect[0] error",
        "recover[0] completed",
        "recover[1] matches_uninterrupted",
        "recover[2] recovered_within",
    ]
    failure = cases[2].find("failure")
    assert "differ from the uninterrupted run" in failure.get("message")
    assert "worker-0" in failure.text and "done at step 4" in failure.text
    assert "reproduce: chaos run scenarios/" in failure.text
    assert suite.find("properties/property[@name='reproduce']").get("value").startswith("chaos run")
    assert root.find("testsuite[@name='other']/testcase/error").get("message").startswith("InfrastructureError")


def test_junit_maps_unknown_to_error_never_to_a_pass(report):
    from dataclasses import replace

    unknown = unjudgeable(report)
    root = ET.fromstring(junit_xml([replace(report, verdicts=unknown)]))
    assert root.get("errors") == "1" and root.find(".//testcase/error").get("type") == "unknown"


def test_terminal_summary_shows_failing_evidence_and_reproduce(report):
    text = terminal_summary([report])
    lines = text.splitlines()
    assert lines[0].startswith("FAIL    killed-worker-recovers-from-checkpoint")
    assert "total 17.0 s" in lines[0]
    assert any(line.strip().startswith("fail    recover[1] matches_uninterrupted") for line in lines)
    assert any("+  17.00s worker-0  done at step 4 weights abc" in line for line in lines)
    assert "  reproduce: chaos run scenarios/killed-worker-recovers-from-checkpoint.yaml" in lines
    assert lines[-1] == "1 scenarios: 0 passed, 1 failed, 0 unknown, 0 error"


def test_terminal_summary_of_a_passing_run_has_no_evidence(report):
    from dataclasses import replace

    text = terminal_summary([replace(report, verdicts=[v for v in report.verdicts if v.passed])])
    assert text.startswith("PASS") and "reproduce" not in text and "+" not in text.splitlines()[1]


def test_event_lines_are_one_line_each():
    from chaos.events_text import event_line

    line = event_line(ErrorEvent(t=3.0, source="worker-0", error_class=ERROR, message="a\nb " + "x" * 300), 1.0)
    assert "\n" not in line and line.startswith("+   2.00s worker-0  error UnavailableError: a b") and len(line) <= 140


def test_an_error_line_shows_the_tf_errors_cause_not_its_stack():
    from chaos.events_text import event_line

    message = (
        "Graph execution error:\n\nDetected at node CollectiveReduceV2 defined at (most recent call last):\n"
        '  File "<frozen runpy>", line 198, in _run_module_as_main\n\n'
        "Collective ops is aborted by: Socket closed\nAdditional GRPC error information from remote target"
    )
    line = event_line(ErrorEvent(t=3.0, source="worker-0", error_class=ERROR, message=message), 1.0)
    assert line.startswith("+   2.00s worker-0  error UnavailableError: Collective ops is aborted by: Socket closed")


def test_checks_on_the_report_timeline_are_the_same_checks():
    # Sanity: the check types used above are what the scenario parsed into.
    s = scenario()
    assert [type(c) for c in s.checks] == [ErrorRaised, Completed, MatchesUninterrupted, RecoveredWithin]


def test_total_counts_from_bring_up_not_from_the_wait_for_its_turn():
    from chaos.events import LogLine
    from chaos.report.timings import phase_timings

    s = scenario()
    prepared = [LogLine(t=-40.0, source="proxy", text="proxy up: prepared ahead, waiting for its turn")]
    t = Timeline(s.run_info(reference_digest="xyz"), prepared + list(timeline(s).events))
    assert phase_timings(t).total_s == 17.0  # not 57: the 40 s before bring-up were a wait, not the scenario


def test_on_several_nodes_the_summary_and_the_page_name_each_workers_node(report):
    from dataclasses import replace

    from chaos.events import AddressEvent
    from chaos.report.html_page import scenario_page

    assert report.placement() == "" and "nodes:" not in terminal_summary([report])  # one host: no node said
    placed = [
        AddressEvent(t=4.0, source=RUNNER, task="worker-1", address="10.0.2.9", node="node-3"),
        AddressEvent(t=4.1, source=RUNNER, task="worker-0", address="10.0.2.8", node="node-2"),
        AddressEvent(t=9.1, source=RUNNER, task="worker-0", address="10.0.2.10", node="node-2"),
        AddressEvent(t=9.2, source=RUNNER, task="worker-1", address="10.0.2.11", node="node-1"),
    ]
    on_nodes = replace(report, timeline=Timeline(report.timeline.info, [*report.timeline.events, *placed]))
    said = "worker-0 on node-2, worker-1 on node-3; worker-1 moved to node-1"
    assert on_nodes.placement() == said
    assert f"  nodes: {said}" in terminal_summary([on_nodes]).splitlines()
    assert f'<p id="nodes"><b>nodes:</b> {said}</p>' in scenario_page(on_nodes)
