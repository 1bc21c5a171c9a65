"""The pytest plugin checks, after each scenario that passed, that the run's own
worker logs diagnose as that scenario (chaos.diagnose.selfcheck); shown failing
when another scenario of the suite explains the logs better, and switched off
by --chaos-diagnose off. No Docker: the run is faked with a passing report."""

from __future__ import annotations

import textwrap

import pytest

pytest_plugins = ["pytester"]

SCENARIO = """\
name: {name}
description: kill worker-1; the chief fails with UnavailableError
explain: {{symptom: s, cause: c, fix: f}}
cluster: {{training: {{epochs: 2, steps_per_epoch: 4}}}}
faults:
  - kill_worker: {{worker: 1}}
    at: {{step: 2}}
expect:
  - error: {{class: UnavailableError, message: "Socket closed", workers: [0], within_s: 30}}
  - exit_code: {{workers: [1], code: 137}}
{extra}"""

CONFTEST = textwrap.dedent(
    """
    import pytest

    import chaos.backends.docker.api
    import chaos.images
    import chaos.runner.run
    from chaos.checks import run_checks
    from chaos.events import RUNNER, ErrorEvent, ExitEvent, InjectEvent, PhaseEvent, StepEvent
    from chaos.report import build_report
    from chaos.timeline import Timeline

    _patch = pytest.MonkeyPatch()


    def passing_run(scenario, file, spec, options, events, progress, admit=None):
        if admit is not None:
            admit()  # the scenario's turn, as the real run_cluster asks for it
        evs = [PhaseEvent(t=0.0, source=RUNNER, phase="training")]
        evs += [StepEvent(t=1.0 + s, source=f"worker-{w}", step=s) for s in (1, 2) for w in (0, 1)]
        evs += [
            InjectEvent(t=3.5, source=RUNNER, fault="kill_worker", target="worker-1", params={"worker": 1}),
            ExitEvent(t=3.6, source="worker-1", exit_code=137),
            ErrorEvent(t=3.7, source="worker-0", error_class="UnavailableError", message="Collective ops is aborted by: Socket closed"),
        ]
        timeline = Timeline(scenario.run_info(), evs)
        return build_report(scenario, file, run_checks(scenario.checks, timeline), timeline)


    def pytest_configure(config):
        _patch.setattr(chaos.images, "ensure_images", lambda *a, **k: {})
        _patch.setattr(chaos.runner.run, "run_cluster", passing_run)
        _patch.setattr(chaos.backends.docker.api, "require_image", lambda client, image: None)
        _patch.setattr(chaos.backends.docker.api, "connect", lambda: None)


    def pytest_unconfigure(config):
        _patch.undo()
    """
)


@pytest.fixture
def project(pytester):
    pytester.makeconftest(CONFTEST)
    folder = pytester.mkdir("scenarios")
    (folder / "killed.yaml").write_text(SCENARIO.format(name="killed", extra=""))
    return pytester


def test_a_passing_scenario_whose_logs_diagnose_as_it_passes(project):
    result = project.runpytest("--chaos-scenarios", "-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=1)


def test_a_passing_scenario_whose_logs_diagnose_as_another_warns_or_fails_when_strict(project):
    louder = SCENARIO.format(name="louder", extra='signatures:\n  - pattern: "Socket closed"\n')
    (project.path / "scenarios" / "louder.yaml").write_text(louder)
    args = ("--chaos-scenarios", "-p", "no:cacheprovider", "-q", "-k", "killed")
    strict = project.runpytest(*args, "--chaos-diagnose", "strict")
    strict.assert_outcomes(failed=1)
    strict.stdout.fnmatch_lines(["*killed passed, but its own logs do not diagnose as killed: ranked louder*"])
    assert "Traceback" not in strict.stdout.str()
    warned = project.runpytest(*args)  # the default: warn
    warned.assert_outcomes(passed=1, warnings=1)
    warned.stdout.fnmatch_lines(["*SelfDiagnosisWarning: killed passed, but its own logs do not diagnose as killed*"])
    off = project.runpytest(*args, "--chaos-diagnose", "off")
    off.assert_outcomes(passed=1)
    assert "SelfDiagnosisWarning" not in off.stdout.str()


@pytest.mark.parametrize("timing_sensitive, shared", [(False, True), (True, False)])
def test_a_run_beside_others_is_judged_without_its_step_times(monkeypatch, timing_sensitive, shared):
    """Only the timing-sensitive scenarios run alone; the others' self-check treats step times as no evidence."""
    from types import SimpleNamespace

    import chaos.diagnose.selfcheck as selfcheck
    import chaos.pytest_plugin as plugin
    from chaos.checks.verdict import passed, unknown

    seen = {}

    def fake_verdict(name, logs, entries, *, shared_cores=False):
        seen["shared"] = shared_cores
        return passed("diagnosed as x").about("diagnose", "self-diagnosis", {}), []

    import chaos.diagnose.attribution_check as attribution_check

    monkeypatch.setattr(selfcheck, "verdict", fake_verdict)
    monkeypatch.setattr(selfcheck, "report_logs", lambda report: [])
    monkeypatch.setattr(
        attribution_check,
        "judge",
        lambda report, logs: unknown("attribution: recorded").about("attribution", "self-diagnosis", {}),
    )
    monkeypatch.setattr(plugin, "_catalogue", lambda item: [])
    item = SimpleNamespace(
        scenario=SimpleNamespace(checks=[SimpleNamespace(timing_sensitive=timing_sensitive)]), user_properties=[]
    )
    plugin._self_diagnosis(item, SimpleNamespace(scenario="x", artifacts={}))
    assert seen["shared"] is shared
    assert item.user_properties == [("diagnose", "diagnosed as x"), ("attribution", "attribution: recorded")]
