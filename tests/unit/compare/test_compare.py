"""chaos compare on hand-built reports: specs, the noise test, verdict and
timing regressions, environment differences, the outputs and the exit code."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from chaos.checks import Completed, ErrorRaised, run_checks
from chaos.cli import main
from chaos.compare import render
from chaos.compare.analysis import compare
from chaos.compare.metrics import figures
from chaos.compare.spec import load_spec
from chaos.compare.stats import Thresholds, shift
from chaos.errors import ScenarioError
from chaos.events import (
    RUNNER,
    DoneEvent,
    ErrorEvent,
    ExitEvent,
    InjectEvent,
    PhaseEvent,
    RestartEvent,
    RestoredEvent,
    StartEvent,
    StepEvent,
)
from chaos.report import build_report, write_json
from chaos.scenario.loader import scenario_from_dict
from chaos.timeline import Timeline

ERROR = "tensorflow.python.framework.errors_impl.UnavailableError"


def scenario(**cluster):
    return scenario_from_dict(
        {
            "name": "paused",
            "description": "d",
            "explain": {"symptom": "s", "cause": "c", "fix": "f"},
            "cluster": {"training": {"epochs": 2, "steps_per_epoch": 5}, **cluster},
            "faults": [{"pause_worker": {"worker": 1}, "at": {"step": 6}}],
            "expect": [{"error": {"class": "UnavailableError", "workers": [0], "within_s": 60}}],
            "recover": [{"completed": {}}],
        }
    )


def report(symptom_s=0.5, step_s=0.1, tf="2.20", error=True, bring_up=5.0):
    """A paused-worker run: steps 1-7, pause, the chief's error after symptom_s, restart from step 5."""
    s = scenario()
    t = 0.0
    events = [PhaseEvent(t=t, source=RUNNER, phase="bring_up")]
    t += bring_up
    events += [PhaseEvent(t=t, source=RUNNER, phase="training")]
    events += [StartEvent(t=t, source=f"worker-{w}", tf_version=tf, fingerprint={"pkg:tensorflow": tf}) for w in (0, 1)]
    for step in range(1, 8):
        t += step_s
        events += [StepEvent(t=t, source=f"worker-{w}", step=step) for w in (0, 1)]
    events += [InjectEvent(t=t, source=RUNNER, fault="pause_worker", target="worker-1", params={"worker": 1})]
    if error:
        events += [ErrorEvent(t=t + symptom_s, source="worker-0", error_class=ERROR, message="Socket closed")]
    t += symptom_s + 0.1
    events += [ExitEvent(t=t, source="worker-0", exit_code=1)]
    events += [RestartEvent(t=t + 0.1, source=f"worker-{w}") for w in (0, 1)]
    t += 1.0
    events += [RestoredEvent(t=t, source=f"worker-{w}", epoch=1, step=5) for w in (0, 1)]
    for step in range(6, 11):
        t += step_s
        events += [StepEvent(t=t, source=f"worker-{w}", step=step) for w in (0, 1)]
    events += [DoneEvent(t=t, source=f"worker-{w}", step=10, weights_digest="w") for w in (0, 1)]
    timeline = Timeline(s.run_info(), events)
    verdicts = run_checks([ErrorRaised(class_="UnavailableError", workers=[0], within_s=60), Completed()], timeline)
    return build_report(s, "scenarios/paused.yaml", verdicts, timeline)


# --- specs -------------------------------------------------------------------------------


def test_inline_spec_overlays_every_scenario_and_is_validated_again():
    spec = load_spec("tf=2.18,heartbeat_timeout_s=30,max_restarts=2")
    changed = spec.apply(scenario())
    assert changed.cluster.tf_version == "2.18"
    assert changed.cluster.training.heartbeat_timeout_s == 30
    assert changed.cluster.training.epochs == 2  # the rest of the scenario is kept
    assert changed.cluster.recovery.max_restarts == 2


def test_worker_resources_are_a_spec_and_reach_every_worker_container():
    from chaos.backends.spec import Limits
    from chaos.runner.run import Images, deployment_of

    changed = load_spec("cpus=1.5,memory_mb=3072").apply(scenario())
    assert changed.cluster.resources.cpus == 1.5 and changed.cluster.resources.memory_mb == 3072
    spec = deployment_of(changed, Images(workers=("w:1", "w:1"), proxy="p", others={}))
    assert spec.resources == {w: Limits(cpus=1.5, memory_bytes=3072 << 20) for w in (0, 1)}
    assert deployment_of(scenario(), Images(workers=("w:1", "w:1"), proxy="p", others={})).resources == {}
    with pytest.raises(ScenarioError) as err:
        load_spec("memory_mb=100").apply(scenario())
    assert "cluster.resources.memory_mb" in err.value.message


def test_a_spec_file_with_a_name_a_cluster_overlay_and_a_proxy_image(tmp_path):
    path = tmp_path / "slow-heartbeat.yaml"
    path.write_text("name: hb30\ncluster:\n  training: {heartbeat_timeout_s: 30}\nproxy_image: local/toxiproxy:2\n")
    spec = load_spec(str(path))
    assert spec.name == "hb30" and spec.proxy_image == "local/toxiproxy:2"
    assert spec.apply(scenario()).cluster.training.heartbeat_timeout_s == 30


@pytest.mark.parametrize(
    "text, message",
    [
        ("colour=red", "not key=value with a known key"),
        ("tf", "not key=value with a known key"),
    ],
)
def test_a_bad_inline_spec_names_the_valid_keys(text, message):
    with pytest.raises(ScenarioError) as err:
        load_spec(text)
    assert message in err.value.message and "heartbeat_timeout_s" in err.value.hint


def test_a_spec_value_the_scenario_model_refuses_names_spec_scenario_and_field():
    with pytest.raises(ScenarioError) as err:
        load_spec("heartbeat_timeout_s=-3").apply(scenario())
    assert "spec heartbeat_timeout_s=-3 on scenario paused: cluster.training.heartbeat_timeout_s" in err.value.message


def test_a_spec_file_with_an_unknown_key_is_refused(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("clusterr: {}\n")
    with pytest.raises(ScenarioError) as err:
        load_spec(str(path))
    assert "unknown key 'clusterr'" in err.value.message and "cluster" in err.value.hint


def test_changing_the_workload_image_of_a_harness_scenario_is_refused():
    with pytest.raises(ScenarioError) as err:
        load_spec("image=acme/trainer:2").apply(scenario())
    assert "built-in harness" in err.value.message


# --- the noise test ----------------------------------------------------------------------


def test_separated_samples_of_four_are_beyond_noise_and_overlapping_ones_are_not():
    assert shift([8, 9, 10, 7.8], [28, 29, 27, 30], "s", Thresholds()).beyond_noise
    assert not shift([8, 9, 10, 29], [28, 9.5, 27, 8.5], "s", Thresholds()).beyond_noise


def test_three_runs_a_side_cannot_reach_alpha_005():
    result = shift([8, 9, 10], [28, 29, 27], "s", Thresholds())
    assert result.p_value == pytest.approx(0.1) and not result.beyond_noise


def test_a_consistent_but_tiny_change_is_not_a_regression():
    result = shift([1.00, 1.01, 1.02, 1.03], [1.10, 1.11, 1.12, 1.13], "s", Thresholds())
    assert result.p_value < 0.05 and not result.beyond_noise  # < 20 % and < 0.5 s


# --- the comparison ----------------------------------------------------------------------


def test_figures_read_from_a_report():
    f = figures(report(symptom_s=0.5, step_s=0.1))
    assert f["time_to_symptom_s"] == pytest.approx(0.5, abs=0.02)
    assert f["steps_lost"] == 2  # reached step 7, resumed from step 5
    assert f["step_time_ms"] == pytest.approx(100, abs=1)
    assert f["bring_up_s"] == pytest.approx(5.0)


def test_a_slower_symptom_beyond_noise_is_a_regression():
    base = [report(symptom_s=s) for s in (8.0, 8.5, 9.0, 9.5)]
    cand = [report(symptom_s=s) for s in (28.0, 28.5, 29.0, 29.5)]
    result = compare(base, cand)
    (s,) = result.scenarios
    assert s.regression and [m.metric for m in s.slower] == ["time_to_symptom_s"]
    assert "REGRESSION (time to symptom)" in render.terminal(result)


def test_a_faster_symptom_is_a_change_but_not_a_regression():
    base = [report(symptom_s=s) for s in (28.0, 28.5, 29.0, 29.5)]
    cand = [report(symptom_s=s) for s in (8.0, 8.5, 9.0, 9.5)]
    (s,) = compare(base, cand).scenarios
    assert not s.regression
    (symptom,) = [m for m in s.metrics if m.metric == "time_to_symptom_s"]
    assert symptom.shift.beyond_noise and symptom.shift.change < 0


def test_a_pass_that_became_a_fail_is_a_verdict_regression_with_the_reason():
    base = [report() for _ in range(3)]
    cand = [report(), report(error=False), report()]
    result = compare(base, cand)
    (s,) = result.scenarios
    assert s.verdict_regression and s.candidate["fail"] == 1
    assert any("no UnavailableError" in r or "UnavailableError" in r for r in s.reasons)


def test_the_same_configuration_twice_is_no_regression():
    runs = [report(symptom_s=s) for s in (0.4, 0.5, 0.6, 0.45, 0.55, 0.5)]
    assert compare(runs[:3], runs[3:]).regressions == []


def test_environment_differences_between_the_sides_are_listed():
    (s,) = compare([report(tf="2.20")], [report(tf="2.18")]).scenarios
    assert s.environment_diff["tf_version"] == ("2.20", "2.18")
    assert s.environment_diff["pkg:tensorflow"] == ("2.20", "2.18")


def test_a_side_whose_runs_broke_before_any_start_is_one_line_not_every_key():
    # the example jobs on Keras 3: the candidate's reference run failed, so no worker reported its start
    broken = build_report(scenario(), "scenarios/paused.yaml", [], Timeline(scenario().run_info(), []))
    (s,) = compare([report(tf="2.15")], [broken]).scenarios
    assert s.environment_diff == {"environment": ("reported", "none: no worker of these runs reported its start")}


def test_too_few_runs_are_said_not_silently_passed():
    result = compare([report(symptom_s=8)] * 3, [report(symptom_s=28)] * 3)
    assert "smallest possible p is 0.100" in render.terminal(result)


def test_markdown_json_and_junit_carry_the_regression(tmp_path):
    result = compare(
        [report(symptom_s=s) for s in (8.0, 8.5, 9.0, 9.5)],
        [report(symptom_s=s) for s in (28.0, 28.5, 29.0, 29.5)],
        candidate_name="hb30",
    )
    paths = render.write_all(result, tmp_path)
    md = paths["markdown"].read_text()
    assert "| paused | REGRESSION (time to symptom)" in md and "**!**" in md
    data = json.loads(paths["json"].read_text())
    assert data["regressions"] == 1 and data["candidate"] == "hb30"
    suite = ET.fromstring(paths["junit"].read_text())
    assert suite.get("failures") == "1" and suite.find("testcase/failure") is not None


# --- the command on two report folders -----------------------------------------------------


def write_reports(folder, symptoms):
    for i, s in enumerate(symptoms):
        write_json(report(symptom_s=s), folder / f"run-{i}" / "paused.json")


def test_compare_two_report_folders_exits_1_on_a_regression(tmp_path, capsys):
    write_reports(tmp_path / "a", (8.0, 8.5, 9.0, 9.5))
    write_reports(tmp_path / "b", (28.0, 28.5, 29.0, 29.5))
    code = main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--report-dir", str(tmp_path / "out")])
    assert code == 1
    assert "1 regression" in capsys.readouterr().out
    assert (tmp_path / "out" / "compare.md").exists()


def test_compare_two_equal_report_folders_exits_0(tmp_path):
    write_reports(tmp_path / "a", (0.5, 0.6, 0.4, 0.5))
    write_reports(tmp_path / "b", (0.55, 0.45, 0.5, 0.6))
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--report-dir", str(tmp_path / "out")]) == 0


def test_a_folder_without_reports_is_a_clear_error(tmp_path, capsys):
    (tmp_path / "a").mkdir()
    write_reports(tmp_path / "b", (1.0,))
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    assert "holds no scenario report" in capsys.readouterr().err


def test_sides_run_interleaved_in_abba_order(monkeypatch, tmp_path):
    from chaos.compare import cli as compare_cli
    from chaos.runner import entries as runner_entries
    from chaos.runner import suite
    from chaos.runner.suite import SuiteEntry

    order = []
    monkeypatch.setattr(runner_entries, "load_entries", lambda paths: [SuiteEntry(scenario(), "scenarios/paused.yaml")])
    monkeypatch.setattr(runner_entries, "preflight", lambda options: None)

    def fake_run_suite(entries, options, jobs):
        order.append(options.report_dir.parent.name)
        return [report()]

    monkeypatch.setattr(suite, "run_suite", fake_run_suite)
    base, cand = compare_cli.run_sides(
        [], load_spec("default"), load_spec("heartbeat_timeout_s=30"), 4, 1, tmp_path, progress=lambda line: None
    )
    assert order == ["baseline", "candidate", "candidate", "baseline"] * 2
    assert len(base) == len(cand) == 4


def users_job_scenario():
    data = scenario().to_dict()
    data["cluster"].pop("training")
    data["cluster"]["workload"] = {
        "image": "acme/trainer:2.4",
        "command": ["python", "train.py"],
        "checkpoint_dir": "/ckpt",
        "env": {"DATA_DIR": "/data"},
    }
    return scenario_from_dict(data)


def test_an_inline_spec_changes_a_users_job_image_and_adds_environment():
    changed = load_spec("image=acme/trainer:2.5,env.TF_CPP_MIN_LOG_LEVEL=1").apply(users_job_scenario())
    assert changed.cluster.workload.image == "acme/trainer:2.5"
    assert changed.cluster.env == {"TF_CPP_MIN_LOG_LEVEL": "1"}
    assert changed.cluster.workload.env == {"DATA_DIR": "/data"}


def test_an_image_spec_replaces_a_jobs_build(tmp_path):
    # the example suite's scenarios build the job from its Dockerfile; compare a prebuilt image of it
    (tmp_path / "Dockerfile").write_text("FROM x\n")
    data = users_job_scenario().to_dict()
    data["cluster"]["workload"].pop("image")
    data["cluster"]["workload"]["build"] = {"context": str(tmp_path)}
    changed = load_spec("image=acme/trainer:tf2.15").apply(scenario_from_dict(data))
    assert changed.cluster.workload.image == "acme/trainer:tf2.15" and changed.cluster.workload.build is None


def test_an_inline_env_reaches_every_worker_of_the_builtin_harness_too():
    from chaos.runner.run import with_cluster_env
    from chaos.workload.launch import Launch

    changed = load_spec("env.TF_CPP_MIN_LOG_LEVEL=1").apply(scenario())
    assert with_cluster_env(Launch(), changed.cluster.env).env == {"TF_CPP_MIN_LOG_LEVEL": "1"}
    job = Launch(env={"TF_CPP_MIN_LOG_LEVEL": "3", "DATA_DIR": "/data"})
    assert with_cluster_env(job, changed.cluster.env).env == {"TF_CPP_MIN_LOG_LEVEL": "3", "DATA_DIR": "/data"}


def test_environment_the_framework_sets_cannot_be_overlaid():
    with pytest.raises(ScenarioError) as err:
        load_spec("env.TF_CONFIG={}").apply(users_job_scenario())
    assert "TF_CONFIG" in err.value.message


@pytest.mark.parametrize(
    "env, message",
    [
        ({"TF_CONFIG": "{}"}, "TF_CONFIG is set by the framework"),
        ({"1BAD": "x"}, "not a valid environment variable name"),
    ],
)
def test_cluster_env_is_validated_in_the_scenario(env, message):
    data = scenario().to_dict()
    data["cluster"]["env"] = env
    with pytest.raises(ScenarioError) as err:
        scenario_from_dict(data)
    assert "cluster.env" in str(err.value) and message in str(err.value)
