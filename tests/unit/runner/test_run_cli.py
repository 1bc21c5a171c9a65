"""``chaos run``: the --proxy-image option reaches the run, our proxy image is
built only when it is the one used, a user-given image is only required to
exist, the reproduce command repeats the option; every scenario given is in
the summary, the JSON reports and JUnit, also one whose run broke. Docker, the
image builds and the cluster run (``chaos.runner.run.run_cluster``) are fakes
at their boundary."""

from __future__ import annotations

import json

import pytest
from docker.errors import ImageNotFound

import chaos.cli
import chaos.images
import chaos.interrupts
import chaos.runner.run
from chaos.backends.docker import api as docker_api
from chaos.errors import InfrastructureError
from chaos.images import PROXY_IMAGE
from chaos.report import build_report
from chaos.timeline import Timeline

SCENARIO = """\
name: killed-worker-recovers
description: kill worker-1
explain: {symptom: s, cause: c, fix: f}
cluster: {training: {epochs: 2, steps_per_epoch: 4}}
faults:
  - kill_worker: {worker: 1}
    at: {step: 2}
expect:
  - exit_code: {workers: [1], code: 137}
"""


@pytest.fixture
def scenario_file(tmp_path):
    path = tmp_path / "scenarios" / "killed-worker-recovers.yaml"
    path.parent.mkdir()
    path.write_text(SCENARIO)
    return path


class FakeImages:
    """Present images by tag; records what was asked for."""

    def __init__(self, present):
        self.present = set(present)
        self.asked = []

    def get(self, tag):
        self.asked.append(tag)
        if tag not in self.present:
            raise ImageNotFound(f"no such image: {tag}")
        return object()


class FakeDocker:
    def __init__(self, present=()):
        self.images = FakeImages(present)


@pytest.fixture
def fakes(monkeypatch):
    calls = {"ensure_images": [], "run_scenario": []}
    docker = FakeDocker()
    broken = {}  # scenario name -> exception its cluster run raises

    def ensure_images(tf_versions, *, proxy=True, progress=None, **kw):
        calls["ensure_images"].append({"tf_versions": tuple(tf_versions), "proxy": proxy})
        return {}

    def run_cluster(scenario, file, spec, options, events, progress, admit=None):
        if admit is not None:
            admit()  # the scenario's turn, as the real run_cluster asks for it
        calls["run_scenario"].append({"file": file, "images": spec.images, "proxy_image": spec.proxy_image})
        if scenario.name in broken:
            raise broken[scenario.name]
        # No verdicts: status unknown, so the summary shows the reproduce command.
        return build_report(scenario, file, [], Timeline(scenario.run_info(), []), proxy_image=options.proxy_image)

    monkeypatch.setattr(chaos.images, "ensure_images", ensure_images)
    monkeypatch.setattr(chaos.runner.run, "run_cluster", run_cluster)
    monkeypatch.setattr(docker_api, "connect", lambda: docker)
    monkeypatch.setattr(chaos.interrupts, "install", lambda: None)  # main() sets a SIGTERM handler
    calls["docker"] = docker
    calls["broken"] = broken
    return calls


def test_default_runs_and_builds_our_proxy_image(fakes, scenario_file, capsys):
    assert chaos.cli.main(["run", str(scenario_file)]) == 1  # unknown: the fake report has no verdicts
    assert fakes["ensure_images"] == [{"tf_versions": ("2.21",), "proxy": True}]
    (call,) = fakes["run_scenario"]
    assert call["proxy_image"] == PROXY_IMAGE
    assert call["images"] == ("tfchaos/worker:tf2.21",) * 2
    assert fakes["docker"].images.asked == []  # ours is built, not just required
    out = capsys.readouterr().out
    assert "reproduce: chaos run " in out and "--proxy-image" not in out


def test_proxy_image_reaches_the_run_is_not_built_and_is_in_the_reproduce_command(
    fakes, scenario_file, tmp_path, capsys
):
    fakes["docker"].images.present.add("toxiproxy:2.12.0")
    reports = tmp_path / "reports"
    argv = ["run", str(scenario_file), "--proxy-image", "toxiproxy:2.12.0", "--report-dir", str(reports)]
    assert chaos.cli.main(argv) == 1
    assert fakes["ensure_images"] == [{"tf_versions": ("2.21",), "proxy": False}]
    assert set(fakes["docker"].images.asked) == {"toxiproxy:2.12.0"}  # required to exist, never built
    (call,) = fakes["run_scenario"]
    assert call["proxy_image"] == "toxiproxy:2.12.0"
    out = capsys.readouterr().out
    assert " --proxy-image toxiproxy:2.12.0" in out
    data = json.loads((reports / "killed-worker-recovers.json").read_text())
    assert data["proxy_image"] == "toxiproxy:2.12.0"
    assert data["reproduce"].endswith("killed-worker-recovers.yaml --proxy-image toxiproxy:2.12.0")


def test_missing_proxy_image_is_one_clear_error_before_any_run(fakes, scenario_file, capsys, monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", "tcp://docker:2375")  # the engine named as DOCKER_HOST names it
    assert chaos.cli.main(["run", str(scenario_file), "--proxy-image", "toxiproxy:missing"]) == 3
    assert fakes["run_scenario"] == []
    err = capsys.readouterr().err
    assert err.count("does not exist in the Docker engine at") == 1
    assert "error: image 'toxiproxy:missing' does not exist in the Docker engine at tcp://docker:2375" in err
    assert "hint: load or pull it first" in err and "chaos images build" not in err
    assert "Traceback" not in err


def test_missing_image_of_ours_still_points_at_chaos_images_build():
    with pytest.raises(InfrastructureError) as exc:
        docker_api.require_image(FakeDocker(), PROXY_IMAGE)
    assert "is not built" in exc.value.message and "chaos images build" in exc.value.hint


def test_a_scenario_whose_run_broke_is_counted_in_summary_json_and_junit(fakes, scenario_file, tmp_path, capsys):
    other = scenario_file.parent / "second.yaml"
    other.write_text(SCENARIO.replace("name: killed-worker-recovers", "name: second"))
    fakes["broken"]["killed-worker-recovers"] = InfrastructureError(
        "the uninterrupted reference run failed (worker-1 exited 1)", hint="check the worker image"
    )
    reports = tmp_path / "reports"
    assert chaos.cli.main(["run", str(scenario_file.parent), "--report-dir", str(reports), "-j", "2"]) == 3
    out = capsys.readouterr().out
    assert "2 scenarios: 0 passed, 0 failed, 1 unknown, 1 error" in out
    assert "ERROR   killed-worker-recovers" in out and "run error: the uninterrupted reference run failed" in out
    data = json.loads((reports / "killed-worker-recovers.json").read_text())
    assert data["status"] == "error" and "reference run failed" in data["error"]
    assert [v["status"] for v in data["verdicts"]] == ["unknown"]
    assert data["verdicts"][0]["reason"] == "not judged: the run broke (see the run error)"
    junit = (reports / "junit.xml").read_text()
    assert junit.count("<testsuite ") == 2 and 'name="killed-worker-recovers"' in junit
    assert 'type="run"' in junit


def test_a_bug_in_a_run_is_an_error_report_not_a_traceback(fakes, scenario_file, capsys):
    fakes["broken"]["killed-worker-recovers"] = KeyError("oops")
    assert chaos.cli.main(["run", str(scenario_file)]) == 3
    out = capsys.readouterr().out
    assert "run error: KeyError: 'oops' (at test_run_cli.py:" in out
    assert "Traceback" not in out


def test_a_dead_docker_engine_is_one_error_and_every_scenario_is_reported(
    fakes, scenario_file, tmp_path, monkeypatch, capsys
):
    def dead():
        raise InfrastructureError("cannot reach the Docker engine (connection refused)", hint="start it")

    monkeypatch.setattr(docker_api, "connect", dead)
    reports = tmp_path / "reports"
    assert chaos.cli.main(["run", str(scenario_file), "--report-dir", str(reports)]) == 3
    captured = capsys.readouterr()
    assert captured.err.count("cannot reach the Docker engine") == 1
    assert "1 scenarios: 0 passed, 0 failed, 0 unknown, 1 error" in captured.out
    assert fakes["run_scenario"] == []
    assert 'name="killed-worker-recovers"' in (reports / "junit.xml").read_text()
