"""The pytest plugin (chaos/pytest_plugin.py, entry point ``pytest11: tfchaos``)
run by pytester: scenarios are collected only with ``--chaos-scenarios``; a
failing scenario shows the verdict summary and an invalid file its ChaosError
message, never a traceback; ``--chaos-proxy-image`` reaches the run.

No Docker: the pytester directory's conftest.py replaces the image builds
(``chaos.images.ensure_images``) and the cluster run
(``chaos.runner.run.run_cluster``) with fakes that record their calls and
return a real Report, built by ``build_report`` from a real Timeline on which
the symptom check fails.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from chaos.images import PROXY_IMAGE
from chaos.scenario.loader import load_scenario

pytest_plugins = ["pytester"]

NAME = "killed-worker-recovers"

SCENARIO = f"""\
name: {NAME}
description: kill worker-1; the chief should fail with UnavailableError
explain: {{symptom: s, cause: c, fix: f}}
cluster: {{training: {{epochs: 2, steps_per_epoch: 4}}}}
faults:
  - kill_worker: {{worker: 1}}
    at: {{step: 2}}
expect:
  - error: {{class: UnavailableError, workers: [0], within_s: 30}}
  - exit_code: {{workers: [1], code: 137}}
"""

# Shared by the pytester conftest and this module (which builds the same report
# to know the reasons to expect).
REPORT_CODE = """\
from chaos.checks import run_checks
from chaos.events import RUNNER, ExitEvent, InjectEvent, PhaseEvent, StepEvent
from chaos.report import build_report
from chaos.timeline import Timeline


def failing_report(scenario, file, proxy_image=None):
    \"\"\"worker-1 is killed (exit 137) but the chief never raises: the error check fails.\"\"\"
    events = [PhaseEvent(t=0.0, source=RUNNER, phase="bring_up"), PhaseEvent(t=5.0, source=RUNNER, phase="training")]
    events += [StepEvent(t=5.0 + s, source=f"worker-{w}", step=s) for s in (1, 2) for w in (0, 1)]
    events += [
        InjectEvent(t=7.5, source=RUNNER, fault="kill_worker", target="worker-1", params={"worker": 1}),
        ExitEvent(t=7.6, source="worker-1", exit_code=137),
    ]
    timeline = Timeline(scenario.run_info(), events)
    return build_report(scenario, file, run_checks(scenario.checks, timeline), timeline, proxy_image=proxy_image)
"""

CONFTEST = REPORT_CODE + textwrap.dedent(
    """
    import json
    from pathlib import Path

    import pytest

    import chaos.backends.docker.api
    import chaos.images
    import chaos.runner.run

    CALLS = Path(__file__).parent / "calls.jsonl"
    _patch = pytest.MonkeyPatch()


    def _record(kind, **data):
        with CALLS.open("a") as f:
            f.write(json.dumps({"kind": kind, **data}) + "\\n")


    def fake_ensure_images(tf_versions, *, proxy=True, **kw):
        _record("ensure_images", tf_versions=list(tf_versions), proxy=proxy)
        return {}


    def fake_run_cluster(scenario, file, spec, options, events, progress, admit=None):
        if admit is not None:
            admit()  # the scenario's turn, as the real run_cluster asks for it
        import time

        import os

        _record("run_scenario", file=file, images=list(spec.images), proxy_image=spec.proxy_image,
                start=time.time(), beside_mark=os.environ.get("TFCHAOS_BESIDE_MARK"))
        time.sleep(0.5)  # long enough for runs side by side to overlap
        _record("run_done", file=file, end=time.time())
        return failing_report(scenario, file, options.proxy_image)


    # Scenario items are not Python functions and get no fixtures: patch for the
    # whole (in-process) session and undo at its end.
    def pytest_configure(config):
        _patch.setattr(chaos.images, "ensure_images", fake_ensure_images)
        _patch.setattr(chaos.runner.run, "run_cluster", fake_run_cluster)
        _patch.setattr(chaos.backends.docker.api, "require_image", lambda client, image: None)
        _patch.setattr(chaos.backends.docker.api, "connect", lambda: None)


    def pytest_unconfigure(config):
        _patch.undo()
    """
)


@pytest.fixture
def project(pytester):
    pytester.makeconftest(CONFTEST)
    scenarios = pytester.mkdir("scenarios")
    (scenarios / f"{NAME}.yaml").write_text(SCENARIO)
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    return pytester


def calls(pytester, kind):
    path = pytester.path / "calls.jsonl"
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [r for r in rows if r.pop("kind") == kind]


def expected_report(path):
    namespace: dict = {}
    exec(REPORT_CODE, namespace)
    return namespace["failing_report"](load_scenario(path), f"scenarios/{NAME}.yaml")


def assert_no_traceback(output: str) -> None:
    assert "Traceback" not in output
    assert "def runtest" not in output and "pytest_plugin.py:" not in output


def test_plain_pytest_does_not_collect_scenarios(project):
    result = project.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["test_plain.py::test_plain"])
    assert NAME not in result.stdout.str()
    # Named explicitly, the folder still gives no items.
    result = project.runpytest("--collect-only", "-q", "-p", "no:cacheprovider", "scenarios")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert calls(project, "run_scenario") == []


def test_chaos_scenarios_collects_each_scenario_file(project):
    result = project.runpytest("--chaos-scenarios", "--collect-only", "-p", "no:cacheprovider")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        ["*<Dir scenarios>", f"*<ScenarioFile {NAME}.yaml>", f"*<ScenarioItem {NAME}>", "*<Function test_plain>"]
    )
    result.stdout.fnmatch_lines(["*2 tests collected*"])
    assert calls(project, "run_scenario") == []  # collecting runs nothing


def test_failing_scenario_shows_the_verdict_summary_not_a_traceback(project):
    result = project.runpytest("--chaos-scenarios", "-p", "no:cacheprovider", "scenarios")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    report = expected_report(project.path / "scenarios" / f"{NAME}.yaml")
    failing = [(label, v) for label, v in report.numbered() if not v.passed]
    assert [label for label, _ in failing] == ["expect[0] error"]
    for label, verdict in failing:
        assert f"fail    {label}: {verdict.reason}" in output
    assert f"FAIL    {NAME}" in output
    assert f"reproduce: chaos run scenarios/{NAME}.yaml" in output
    assert "--proxy-image" not in output
    assert_no_traceback(output)
    (run,) = calls(project, "run_scenario")
    assert run["file"] == f"scenarios/{NAME}.yaml"
    assert run["proxy_image"] == PROXY_IMAGE
    assert run["images"] == ["tfchaos/worker:tf2.21"] * 2
    assert calls(project, "ensure_images") == [{"tf_versions": ["2.21"], "proxy": True}]


def test_chaos_proxy_image_reaches_the_run_and_is_not_built(project):
    result = project.runpytest(
        "--chaos-scenarios", "--chaos-proxy-image", "toxiproxy:2.12.0", "-p", "no:cacheprovider", "scenarios"
    )
    result.assert_outcomes(failed=1)
    (run,) = calls(project, "run_scenario")
    assert run["proxy_image"] == "toxiproxy:2.12.0"
    assert calls(project, "ensure_images") == [{"tf_versions": ["2.21"], "proxy": False}]
    assert f"reproduce: chaos run scenarios/{NAME}.yaml --proxy-image toxiproxy:2.12.0" in result.stdout.str()


def test_invalid_scenario_file_shows_the_chaos_error_not_a_traceback(project):
    bad = project.path / "scenarios" / "bad-one.yaml"
    bad.write_text(
        "name: bad-one\ndescription: d\nexplain: {symptom: s, cause: c, fix: f}\n"
        "faults: [{latncy: {worker: 1}, at: bring_up}]\n"
    )
    result = project.runpytest("--chaos-scenarios", "-p", "no:cacheprovider", str(bad))
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert f"error: {bad}" in output  # names the file
    assert "faults[0]: unknown fault 'latncy'" in output and "did you mean 'latency'?" in output  # and the field
    assert "hint: docs/scenarios.md describes the format" in output
    assert_no_traceback(output)
    assert calls(project, "run_scenario") == []


def test_scenarios_are_collected_from_any_folder_given_to_the_option(project):
    suite = project.mkdir("chaos_suite")
    (suite / "mine.yaml").write_text(SCENARIO.replace(f"name: {NAME}", "name: mine"))
    result = project.runpytest("--chaos-scenarios=chaos_suite", "--collect-only", "-q", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    assert "chaos_suite/mine.yaml::mine" in result.stdout.str()


def test_a_path_with_no_scenario_is_a_usage_error_not_an_empty_run(project):
    project.mkdir("empty_suite")
    result = project.runpytest("--chaos-scenarios=empty_suite", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--chaos-scenarios empty_suite: holds no scenario file" in result.stderr.str()
    result = project.runpytest("--chaos-scenarios=missing", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "no such file or folder" in result.stderr.str()


def test_scenario_items_run_side_by_side_up_to_chaos_jobs(project):
    for name in ("second", "third"):
        (project.path / "scenarios" / f"{name}.yaml").write_text(SCENARIO.replace(f"name: {NAME}", f"name: {name}"))
    result = project.runpytest("--chaos-scenarios", "--chaos-jobs", "2", "-p", "no:cacheprovider", "scenarios")
    result.assert_outcomes(failed=3)
    starts = sorted(r["start"] for r in calls(project, "run_scenario"))
    ends = sorted(r["end"] for r in calls(project, "run_done"))
    assert len(starts) == 3
    assert starts[1] < ends[0]  # two overlapped...
    assert starts[2] >= ends[0]  # ...and never three at once


TIMED_TESTS = """\
import json, time
from pathlib import Path

import pytest

CALLS = Path(__file__).parent / "calls.jsonl"


def _record(kind, **data):
    with CALLS.open("a") as f:
        f.write(json.dumps({"kind": kind, **data}) + "\\n")


@pytest.mark.chaos_beside_scenarios
def test_beside():
    _record("beside", start=time.time())
    time.sleep(1.5)
    _record("beside_done", end=time.time())


def test_after():
    _record("after", start=time.time())
"""


def test_marked_tests_run_first_with_the_scenarios_beside_them_and_the_rest_after(project):
    """The suite starts when collection ends: a plain scenario runs beside the marked
    test; a timing-sensitive one (slowdown) waits until that test is done; an
    unmarked test runs after every scenario."""
    (project.path / "test_plain.py").unlink()
    project.makepyfile(test_timed=TIMED_TESTS)
    slow = SCENARIO.replace(f"name: {NAME}", "name: timed") + "  - slowdown: {factor: 2}\n"
    (project.path / "scenarios" / "timed.yaml").write_text(slow)
    result = project.runpytest("--chaos-scenarios", "-v", "-p", "no:cacheprovider", ".")
    result.assert_outcomes(passed=2, failed=2)
    order = [line.split(" ")[0] for line in result.outlines if " PASSED" in line or " FAILED" in line]
    assert [o.rsplit("::", 1)[-1] for o in order][:1] == ["test_beside"]
    assert order[-1].endswith("test_after") and len(order) == 4
    beside_start = calls(project, "beside")[0]["start"]
    beside_end = calls(project, "beside_done")[0]["end"]
    runs = {r["file"]: r for r in calls(project, "run_scenario")}
    ends = [r["end"] for r in calls(project, "run_done")]
    assert runs[f"scenarios/{NAME}.yaml"]["start"] < beside_end  # started beside the marked test
    assert runs["scenarios/timed.yaml"]["start"] >= beside_end  # the timing-sensitive one waited for it
    assert beside_start < runs[f"scenarios/{NAME}.yaml"]["start"] + 1.0
    assert calls(project, "after")[0]["start"] >= max(ends)  # the rest after the suite


def test_without_marked_tests_nothing_runs_beside_the_scenarios(project):
    """The order stays as collected (scenarios/ before test_timed.py) and the suite
    starts with the first scenario item: the tests after it run once it is done."""
    project.makepyfile(test_timed=TIMED_TESTS.replace("@pytest.mark.chaos_beside_scenarios\n", ""))
    result = project.runpytest("--chaos-scenarios", "-p", "no:cacheprovider", ".")
    result.assert_outcomes(passed=3, failed=1)
    (done,) = calls(project, "run_done")
    assert calls(project, "beside")[0]["start"] >= done["end"]


PATCHING_TEST = """\
import json, time
from pathlib import Path

import pytest

import chaos.runner.run

CALLS = Path(__file__).parent / "calls.jsonl"


def broken_run_cluster(*args, **kwargs):
    raise RuntimeError("a test's fake reached a scenario")


@pytest.mark.chaos_beside_scenarios
def test_beside_patches(monkeypatch):
    monkeypatch.setenv("TFCHAOS_BESIDE_MARK", "set by a test")
    monkeypatch.setattr(chaos.runner.run, "run_cluster", broken_run_cluster)
    time.sleep(1.5)
    with CALLS.open("a") as f:
        f.write(json.dumps({"kind": "beside_done", "end": time.time()}) + "\\n")
"""


def test_what_a_test_beside_the_scenarios_patches_never_reaches_them(project):
    """A CI run had a real scenario judged on a pytester fake's report (patched in the
    same process while it ran): the scenarios run in a process of their own, forked
    before any test, so a test's environment and module patches stay in its own."""
    (project.path / "test_plain.py").unlink()
    project.makepyfile(test_patching=PATCHING_TEST)
    result = project.runpytest("--chaos-scenarios", "-p", "no:cacheprovider", ".")
    result.assert_outcomes(passed=1, failed=1)  # the scenario's verdicts, not the broken fake's error
    assert_no_traceback(result.stdout.str())
    (run,) = calls(project, "run_scenario")
    assert run["start"] < calls(project, "beside_done")[0]["end"]  # it ran while the test's patches were on
    assert run["beside_mark"] is None
    assert "a test's fake reached a scenario" not in result.stdout.str()
