"""The framework on a user's own job (examples/keras-mwms): real Docker, real
TF, the real proxy, the agent layered onto the job's image, the job's code
knowing nothing of tfchaos.

* the fit job and the custom loop: a killed worker, then recovery from the
  job's own checkpoint (same checkpoint, resumed epoch, identical weights,
  completed; bit-exact for the fit job);
* a blocked port mid-training;
* version skew by image (worker-1 on the job built on TF 2.15);
* no agent (log-only): exits and the stderr TF error are judged, the recovery
  checks that need the job's events are unknown with the reason, never pass.

The scenarios run side by side through the suite runner, as ``chaos run -j 3`` does.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from chaos.checks.verdict import Status
from chaos.runner.run import RunOptions
from chaos.runner.suite import SuiteEntry, run_suite
from chaos.scenario.loader import load_scenario, scenario_from_dict

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]  # its suite of ten runs is one fixture

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "keras-mwms"
SUITE = EXAMPLE / "chaos_suite"
TF215_IMAGE = "tfchaos-example/keras-mwms:tf2.15"
EXPLAIN = {"symptom": "s", "cause": "c", "fix": "f"}
# The example suite's scenarios of test_user_jobs_loops.py.
LOOPS = (
    "custom-loop-tutorial-right-folder-recovers-with-no-code-change.yaml",
    "custom-loop-tutorial-temp-dir-restarts-from-step-0.yaml",
    "custom-loop-step-counter-summed-over-workers-counts-twice-per-step.yaml",
    "keras3-fit-job-fails-the-first-step-then-tf-keras-recovers.yaml",
    "keras3-custom-loop-fails-on-reset-states-then-tf-keras-recovers.yaml",
    "killed-keras3-fit-job-one-worker-resumes-its-epoch.yaml",
)


@pytest.fixture(scope="module")
def tf215_job(docker_client):
    """The example job built on the framework's TF 2.15 image (offline)."""
    from chaos.images import ensure_images

    ensure_images(("2.15",), proxy=False)
    subprocess.run(
        [
            "docker",
            "build",
            "--pull=false",
            "-q",
            "--build-arg",
            "BASE=tfchaos/worker-deps:tf2.15",
            "--label",
            "io.tfchaos.project=tfchaos",
            "--label",
            "io.tfchaos.kind=example",
            "-t",
            TF215_IMAGE,
            str(EXAMPLE),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return TF215_IMAGE


def skew_scenario(image: str):
    return scenario_from_dict(
        {
            "name": "fit-job-version-skew-by-image",
            "description": "worker-1 runs the job built on TF 2.15 beside the default TF (2.21)",
            "explain": EXPLAIN,
            "cluster": {
                "workers": 2,
                "workload": {
                    "build": {"context": str(EXAMPLE)},
                    "command": ["python", "train_fit.py", "--epochs", "3", "--steps-per-epoch", "20", "--verbose", "0"],
                    "checkpoint_dir": "/checkpoints",
                },
                "recovery": {"restart": "all", "max_restarts": 1},
            },
            "faults": [{"version_skew": {"workers": [1], "image": image}, "at": "bring_up"}],
            "expect": [
                {"environment_skew": {"workers": [1], "keys": ["tf_version"]}},
                {"exit_code": {"code": "nonzero"}},
            ],
            "recover": [{"environments_match": None}, {"identical_weights": None}, {"completed": None}],
            "timeouts": {"bring_up": 120, "symptom": 60, "total": 300},
        }
    )


def log_only_with_recovery_checks():
    """The log-only example scenario, asked for checks that need the job's own events."""
    base = load_scenario(SUITE / "no-agent-killed-worker-judged-from-logs.yaml")
    data = base.to_dict()
    data["name"] = "no-agent-recovery-checks-are-unknown"
    data["cluster"]["workload"]["build"]["context"] = str(EXAMPLE)
    data["recover"] = [
        {"restored_same_checkpoint": None},
        {"identical_weights": None},
        {"matches_uninterrupted": None},
        {"completed": None},
    ]
    return scenario_from_dict(data)


def checkpoint_dir_not_where_the_job_writes():
    """The fit job writes /tmp/checkpoints (in each container); the scenario says
    /elsewhere: the restart starts over."""
    base = load_scenario(SUITE / "fit-job-killed-worker-recovers.yaml")
    data = base.to_dict()
    data["name"] = "fit-job-wrong-checkpoint-dir"
    data["cluster"]["workload"]["build"]["context"] = str(EXAMPLE)
    data["cluster"]["workload"]["command"] += ["--checkpoint-dir", "/tmp/checkpoints"]
    data["cluster"]["workload"]["checkpoint_dir"] = "/elsewhere"
    data["recover"] = [{"resumed_from": {"epoch": 2}}, {"completed": None}]
    return scenario_from_dict(data)


@pytest.fixture(scope="module")
def reports(images, tf215_job, tmp_path_factory):
    # The loops with no report call and the Keras 3 ones run in test_user_jobs_loops.py (another lane).
    entries = [SuiteEntry(load_scenario(p), str(p)) for p in sorted(SUITE.glob("*.yaml")) if p.name not in LOOPS]
    entries += [
        SuiteEntry(skew_scenario(tf215_job), "<skew>"),
        SuiteEntry(log_only_with_recovery_checks(), "<log-only>"),
        SuiteEntry(checkpoint_dir_not_where_the_job_writes(), "<wrong-checkpoint-dir>"),
    ]
    # Each run's report, timeline and worker logs on disk, as `chaos run --report-dir` writes them:
    # a failure in CI (a lane beside two others) then leaves its whole history to read.
    folder = tmp_path_factory.mktemp("user-job-reports")
    # Two at a time, not three: this lane runs beside two others, and the scenarios judge seconds
    # (no step for timeouts.symptom = a hang). In the rehearsal of 166be60 at -j 3 the port-refused
    # run's restart took 49 s to its first step (4.1 s alone) and then made none for 30 s.
    return {r.scenario: r for r in run_suite(entries, RunOptions(report_dir=folder), jobs=2)}


def explain(report) -> str:
    from chaos.report import terminal_summary

    where = report.artifacts.get("page") or next(iter(report.artifacts.values()), "")
    return (
        terminal_summary([report])
        + (f"\n  its report and logs: {where}" if where else "")
        + "\n  its lifecycle:"
        + "".join(f"\n    {line}" for line in lifecycle(report))
    )


def lifecycle(report) -> list[str]:
    """The run's injects, stops, exits and restarts, in time: who ended which worker, in a CI log
    that keeps no report folder."""
    from chaos.events_text import event_line

    events = [e for e in report.timeline.events if e.kind in ("inject", "stop", "exit", "restart", "phase")]
    return [event_line(e, events[0].t) for e in events]


@pytest.mark.parametrize(
    "name",
    [
        "fit-job-killed-worker-recovers",
        "fit-job-port-refused-mid-training",
        "custom-loop-killed-chief-recovers",
        "no-agent-killed-worker-judged-from-logs",
        "fit-job-version-skew-by-image",
        "custom-loop-preempted-with-handler-saves-at-the-step",
        "custom-loop-preempted-without-handler-loses-the-steps-since-the-save",
    ],
)
def test_the_example_suite_passes_on_the_users_job(reports, name):
    report = reports[name]
    assert report.status is Status.PASS, explain(report)


def test_the_fit_job_recovers_bit_exact_from_its_own_backup(reports):
    report = reports["fit-job-killed-worker-recovers"]
    by_check = {v.check: v for v in report.verdicts}
    assert "bit-exact" in by_check["matches_uninterrupted"].reason
    assert "at epoch 2, step 120" in by_check["restored_same_checkpoint"].reason


def test_preemption_side_by_side_the_handler_loses_no_work_and_skips_the_collective_abort(reports):
    with_handler = reports["custom-loop-preempted-with-handler-saves-at-the-step"]
    without = reports["custom-loop-preempted-without-handler-loses-the-steps-since-the-save"]
    lost = {
        name: next(v.reason for v in r.verdicts if v.check == "lost_work")
        for name, r in (("with", with_handler), ("without", without))
    }
    assert ": 0 steps lost" in lost["with"], lost
    assert ": 0 steps lost" not in lost["without"], lost

    # With the handler every worker exits on its own (42) and no training step fails; without,
    # the chief's step aborts. (After training, the handler's watcher thread may log a
    # `Socket closed` once the chief is gone: measured, so only the preemption is judged.)
    def errors_before_the_restart(report):
        restart = min(e.t for e in report.timeline.events if e.kind == "restart")
        return [e for e in report.timeline.events if e.kind == "error" and e.t < restart]

    assert not errors_before_the_restart(with_handler), explain(with_handler)
    assert errors_before_the_restart(without), explain(without)


def test_without_the_agent_recovery_checks_say_what_is_missing_and_never_pass(reports):
    report = reports["no-agent-recovery-checks-are-unknown"]
    by_check = {v.check: v for v in report.verdicts}
    for name, missing in (
        ("restored_same_checkpoint", "restored events"),
        ("identical_weights", "final weights digest"),
        ("matches_uninterrupted", "final weights digest"),
    ):
        verdict = by_check[name]
        assert verdict.status is Status.UNKNOWN, explain(report)
        assert f"the workload reports no {missing}" in verdict.reason and "agent: none" in verdict.reason, explain(
            report
        )
    assert by_check["completed"].status is Status.PASS, explain(report)  # its done line, read from the log
    assert by_check["error"].status is Status.PASS, explain(report)  # the TF error, read from stderr
    assert report.status is Status.UNKNOWN, explain(report)


def test_a_checkpoint_dir_the_job_never_writes_is_said_and_the_restart_from_zero_fails(reports):
    report = reports["fit-job-wrong-checkpoint-dir"]
    notices = [n for n in report.notices() if n.topic == "checkpoint_empty"]
    assert notices and "checkpoint_dir /elsewhere" in notices[0].text, explain(report)
    by_check = {v.check: v for v in report.verdicts}
    assert by_check["resumed_from"].status is Status.FAIL, explain(report)
    assert by_check["completed"].status is Status.PASS, explain(report)
