"""A job that reports no weights digest (a custom loop with the agent on, no
Keras fit, no report call) asked for ``matches_uninterrupted`` (issue 27):
its uninterrupted reference run is not an error ("different weights per
worker: {}": nothing differed), the check is unknown with the reason, and
``chaos validate`` warns when the job's code shows it."""

from __future__ import annotations

import json

import pytest

from chaos.backends.spec import Deployment
from chaos.checks import RECOVERY_CHECKS
from chaos.checks.base import run_check
from chaos.checks.verdict import Status
from chaos.errors import InfrastructureError
from chaos.events import CheckpointEvent, DoneEvent, ExitEvent, PlanEvent, StartEvent, StepEvent
from chaos.runner import reference as reference_module
from chaos.runner.reference import Reference, _cached, _compute
from chaos.runner.runinfo import run_info
from chaos.runner.training import TrainingResult
from chaos.scenario.loader import load_scenario, scenario_from_dict
from chaos.timeline import RunInfo, Timeline

EXPLAIN = {"symptom": "s", "cause": "c", "fix": "f"}
NO_CALL = "no weights digest: the job ran no Keras fit and made no report call"
SPEC = Deployment(images=("job", "job"), proxy_image="proxy")


def start(w, t=1.0):
    return StartEvent(t=t, source=f"worker-{w}", tf_version="2.20")


def exits(code=0, t=9.0):
    return [ExitEvent(t=t, source=f"worker-{w}", exit_code=code) for w in (0, 1)]


def quiet_job():
    """What the runner sees of a custom loop with no report call: the agent's start events, exits."""
    return [start(0), start(1), *exits(0)]


def trained(monkeypatch, events, digests):
    def run_training(spec, backend, *, events=None, timeout_s=300):
        return TrainingResult(digests=digests, bring_up_s=1.0, training_s=1.0, total_s=2.0, events=history)

    history = events
    monkeypatch.setattr(reference_module, "run_training", run_training)


# --- the reference run -------------------------------------------------------------------------


def test_a_reference_run_that_reported_no_digest_is_no_error_and_says_why(monkeypatch, tmp_path):
    trained(monkeypatch, quiet_job(), digests={})
    said = []
    ref = _compute(SPEC, None, tmp_path / "ref.json", said.append, None)
    assert ref.digest == ""
    assert dict(ref.unproduced)["weights_digest"] == NO_CALL
    assert any(NO_CALL in line for line in said)
    assert _cached(tmp_path / "ref.json") == ref  # cached with the reason


def test_done_reports_without_weights_are_no_digest_either(monkeypatch, tmp_path):
    events = [
        start(0),
        start(1),
        PlanEvent(t=2.0, source="worker-0", total_steps=4),
        *[DoneEvent(t=8.0, source=f"worker-{w}", step=4) for w in (0, 1)],
        *exits(0),
    ]
    trained(monkeypatch, events, digests={"worker-0": "", "worker-1": ""})
    ref = _compute(SPEC, None, tmp_path / "ref.json", None, None)
    assert ref.digest == ""
    assert dict(ref.unproduced)["weights_digest"].startswith(
        "no weights digest: worker-0, worker-1 reported done without weights"
    )


def test_digests_that_really_differ_are_still_a_run_error(monkeypatch, tmp_path):
    events = [
        start(0),
        start(1),
        StepEvent(t=2.0, source="worker-0", step=1, loss=0.5),
        *[DoneEvent(t=8.0, source=f"worker-{w}", step=1, weights_digest=d) for w, d in ((0, "aa"), (1, "bb"))],
    ]
    trained(monkeypatch, events, digests={"worker-0": "aa", "worker-1": "bb"})
    with pytest.raises(InfrastructureError, match="different weights per worker"):
        _compute(SPEC, None, tmp_path / "ref.json", None, None)


def test_an_old_cache_entry_with_an_empty_digest_and_no_reason_is_computed_again(tmp_path):
    path = tmp_path / "ref.json"
    path.write_text(json.dumps({"digest": "", "final_loss": None, "curve": []}))
    assert _cached(path) is None
    path.write_text(json.dumps({"digest": "abc", "final_loss": 0.1, "curve": []}))  # before `unproduced` existed
    assert _cached(path) == Reference("abc", 0.1)


@pytest.mark.parametrize(
    "events, expected",
    [
        (
            [],
            {
                "steps": "no training steps: the job ran no Keras fit and made no report call",
                "done": "no done report: the job ran no Keras fit and made no report call",
                "weights_digest": NO_CALL,
            },
        ),
        (
            [StepEvent(t=1.0, source="worker-0", step=1, loss=0.1), CheckpointEvent(t=1.0, source="worker-0", step=1)],
            {
                "done": "no done report: the job ran no Keras fit and made no report.done call",
                "weights_digest": "no weights digest: the job ran no Keras fit and made no report.done call",
            },
        ),
        (
            [
                StepEvent(t=1.0, source="worker-0", step=1, loss=0.1),
                DoneEvent(t=2.0, source="worker-0", weights_digest="a"),
            ],
            {},
        ),
    ],
)
def test_what_a_job_that_trained_to_its_end_did_not_report(events, expected):
    from chaos.workload.evidence import unproduced

    assert unproduced(events) == expected


# --- the checks at run time ----------------------------------------------------------------


def users_job(checks, tmp_path=None):
    return scenario_from_dict(
        {
            "name": "x",
            "description": "d",
            "explain": EXPLAIN,
            "cluster": {
                "workers": 2,
                "workload": {"image": "acme/loop:1", "command": ["python", "loop.py"], "checkpoint_dir": "/ckpt"},
            },
            "faults": [{"kill_worker": {"worker": 1}, "at": {"seconds": 5}}],
            "recover": checks,
        }
    )


def test_matches_uninterrupted_is_unknown_with_the_reason_when_the_job_reported_no_digest():
    scenario = users_job([{"matches_uninterrupted": {}}])
    reference = Reference("", None, (), (("weights_digest", NO_CALL),))
    timeline = Timeline.from_events(run_info(scenario, quiet_job(), reference), quiet_job())
    verdict = run_check(scenario.recover[0], timeline)
    assert verdict.status is Status.UNKNOWN
    assert verdict.reason == NO_CALL


def test_a_job_that_exited_0_everywhere_without_reporting_done_is_unknown_not_failed():
    """No reference asked for: the run itself shows it (every worker exited 0, no done anywhere)."""
    scenario = users_job([{"completed": {}}, {"identical_weights": {}}])
    timeline = Timeline.from_events(run_info(scenario, quiet_job()), quiet_job())
    completed, identical = (run_check(c, timeline) for c in scenario.recover)
    assert (completed.status, completed.reason) == (
        Status.UNKNOWN,
        "no done report: the job ran no Keras fit and made no report call",
    )
    assert (identical.status, identical.reason) == (Status.UNKNOWN, NO_CALL)


def test_a_job_that_never_finished_still_fails_for_its_missing_done():
    scenario = users_job([{"completed": {}}])
    events = [
        start(0),
        start(1),
        ExitEvent(t=5.0, source="worker-0", exit_code=1),
        ExitEvent(t=5.0, source="worker-1", exit_code=137),
    ]
    verdict = run_check(scenario.recover[0], Timeline.from_events(run_info(scenario, events), events))
    assert verdict.status is Status.FAIL and "never emitted done" in verdict.reason


def test_done_events_without_a_digest_are_unknown_for_matches_uninterrupted_not_a_mismatch():
    check = RECOVERY_CHECKS.get("matches_uninterrupted")()
    events = [start(0), start(1), *[DoneEvent(t=8.0, source=f"worker-{w}", step=4) for w in (0, 1)]]
    info = RunInfo(num_workers=2, steps_per_epoch=2, epochs=2, save_interval_steps=2, reference_digest="abc")
    verdict = run_check(check, Timeline.from_events(info, events))
    assert (verdict.status, verdict.reason) == (Status.UNKNOWN, "done events carry no weights digest")


def test_the_reason_survives_the_json_report():
    info = RunInfo(
        num_workers=2, steps_per_epoch=2, epochs=2, save_interval_steps=2, unproduced=(("weights_digest", NO_CALL),)
    )
    again = Timeline.from_dict(json.loads(json.dumps(Timeline.from_events(info, []).to_dict())))
    assert again.info.unproduced == (("weights_digest", NO_CALL),)


# --- validation: when the job's code shows it ---------------------------------------------------


SCENARIO = """\
name: quiet-loop
description: d
explain: {symptom: s, cause: c, fix: f}
cluster:
  workload:
    build: {context: job}
    command: [python, train.py, --epochs, "3"]
    checkpoint_dir: /ckpt
faults:
  - kill_worker: {worker: 1}
    at: {seconds: 5}
recover:
  - completed: {}
  - matches_uninterrupted: {}
"""

LOOP = "import tensorflow as tf\nfor step in range(10):\n    train_step()\n"


@pytest.mark.parametrize(
    "code, warned",
    [
        (LOOP, True),
        (LOOP + "model.fit(dataset, epochs=3)\n", False),
        (LOOP + "ckpt = tf.train.Checkpoint(model=model)\n", False),  # the agent digests what it holds
        ("try:\n    from chaos.agent import report\nexcept ImportError:\n    report = None\n" + LOOP, False),
    ],
)
def test_validate_warns_when_the_jobs_code_runs_no_fit_makes_no_checkpoint_and_no_report_call(tmp_path, code, warned):
    (tmp_path / "job").mkdir()
    (tmp_path / "job" / "Dockerfile").write_text("FROM x\n")
    (tmp_path / "job" / "train.py").write_text(code)
    (tmp_path / "quiet-loop.yaml").write_text(SCENARIO)
    warnings = load_scenario(tmp_path / "quiet-loop.yaml").warnings()
    expected = (
        "recover[1].matches_uninterrupted: will be unknown: no weights digest: the job's code (train.py and "
        "the other Python files of its build context) runs no Keras fit, makes no tf.train.Checkpoint and no "
        "report call"
    )
    assert any(w.startswith(expected) for w in warnings) is warned, warnings
    assert not any(w.startswith("recover[0]") for w in warnings)


def test_validate_says_nothing_of_a_prebuilt_image_whose_code_it_cannot_read(tmp_path):
    (tmp_path / "quiet-loop.yaml").write_text(SCENARIO.replace("build: {context: job}", "image: acme/loop:1"))
    assert load_scenario(tmp_path / "quiet-loop.yaml").warnings() == []
