"""The audit's run without containers: run_suite replaced by synthetic reports."""

import json

import pytest
from audit_reports import killed_worker_report, reference_report, report, silent_report
from timeline_builder import TimelineBuilder

from chaos.audit import run as audit_run
from chaos.audit.battery import plan
from chaos.audit.card import Assumptions
from chaos.audit.run import AuditRequest, audit, write_card
from chaos.cli import main
from chaos.workload.spec import WorkloadSpec

SYNTHETIC = {
    "audit-reference": reference_report,
    "audit-killed-worker": killed_worker_report,
    "audit-peer-paused": lambda: silent_report(10.0),
}


@pytest.fixture
def calls(monkeypatch):
    seen = []

    def fake_suite(entries, options, *, jobs=1, show=None, on_report=None):
        seen.append(([e.scenario.name for e in entries], jobs))
        return [
            SYNTHETIC.get(e.scenario.name, lambda: report(TimelineBuilder().build(), error="Docker is down"))()
            for e in entries
        ]

    monkeypatch.setattr(audit_run, "run_suite", fake_suite)
    return seen


def request(tmp_path, battery="quick", workload=None):
    return AuditRequest(None, workload, battery, Assumptions(24, 64), tmp_path, jobs=3, command="chaos audit")


def test_the_reference_runs_first_and_alone_then_the_faults_side_by_side(calls, tmp_path):
    card, reports = audit(request(tmp_path))
    assert calls == [(["audit-reference"], 1), (["audit-killed-worker", "audit-peer-paused"], 3)]
    assert [r.key for r in card.runs] == ["reference", "killed-worker", "peer-paused"]
    assert all(r.measured for r in card.runs)
    # Only the reference had the machine to itself, so only it feeds the step time and C.
    assert [r.alone for r in card.runs] == [True, False, False]
    assert (tmp_path / "scenarios" / "audit-killed-worker.yaml").is_file()  # each run reproduces with chaos run
    assert (tmp_path / "runs" / "index.html").is_file() and (tmp_path / "runs" / "junit.xml").is_file()


def test_one_run_at_a_time_every_run_counts_as_alone(calls, tmp_path):
    from dataclasses import replace

    card, _ = audit(replace(request(tmp_path), jobs=1))
    assert [r.alone for r in card.runs] == [True, True, True]
    assert "fault run(s) before their fault" in card.model.save_s.note


def test_a_refused_entry_is_not_run_and_stays_on_the_card(calls, tmp_path):
    job = WorkloadSpec.model_validate({"image": "acme/job:1", "command": ["python", "t.py"], "checkpoint_dir": "/c"})
    card, reports = audit(request(tmp_path, "full", job))
    ran = [name for names, _ in calls for name in names]
    assert "audit-empty-checkpoint-dir" not in ran and len(reports) == len(plan("full", job))
    empty = next(r for r in card.runs if r.key == "empty-checkpoint-dir")
    assert empty.status == "not measured" and "refused for this workload" in empty.why
    broken = next(r for r in card.runs if r.key == "partition")
    assert broken.status == "not measured" and "Docker is down" in broken.why


def test_write_card_writes_the_three_forms(calls, tmp_path):
    card, _ = audit(request(tmp_path))
    paths = write_card(card, tmp_path)
    assert json.loads(paths["json"].read_text())["battery"] == "quick"
    assert (
        paths["html"].read_text().startswith("<!DOCTYPE html>") and "# Resilience card" in paths["markdown"].read_text()
    )


@pytest.mark.parametrize("argv, code", [([], 0), (["--fail-under", "A"], 1), (["--battery", "full"], 3)])
def test_exit_codes(calls, monkeypatch, tmp_path, capsys, argv, code):
    monkeypatch.setattr("chaos.runner.cli.preflight", lambda options: None)
    assert main(["audit", "--battery", "quick", "--report-dir", str(tmp_path), *argv]) == code
    out = capsys.readouterr()
    assert "# Resilience card" in out.out and (tmp_path / "card.html").is_file()
    if code == 1:
        assert "below --fail-under A" in out.err


@pytest.mark.parametrize(
    "workload", [None, {"build": {"context": "/src/job"}, "command": ["python", "t.py"], "checkpoint_dir": "/c"}]
)
def test_each_generated_scenario_file_loads_back_equal_with_no_warning(tmp_path, workload):
    from chaos.audit.run import scenario_file
    from chaos.scenario.loader import load_scenario

    job = WorkloadSpec.model_validate(workload) if workload else None
    for planned in plan("full", job):
        if planned.scenario is None:
            continue
        loaded = load_scenario(scenario_file(planned, tmp_path))
        assert loaded.model_dump() == planned.scenario.model_dump() and loaded.warnings() == []


def test_agree_with_prints_each_figure_beside_the_earlier_card_s(calls, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr("chaos.runner.cli.preflight", lambda options: None)
    assert main(["audit", "--battery", "quick", "--report-dir", str(tmp_path / "a")]) == 0
    capsys.readouterr()
    args = ["audit", "--battery", "quick", "--agree-with", str(tmp_path / "a" / "card.json")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "model save_s" in out and "killed-worker detection worker-1" in out
    assert "11 of 11 comparable figures agree: 11 within 20%" in out  # synthetic runs: identical twice


def test_agree_with_a_missing_card_is_said_before_anything_runs(calls, capsys):
    assert main(["audit", "--agree-with", "no-such/card.json"]) == 2
    assert calls == [] and "error: --agree-with: cannot read a card" in capsys.readouterr().err


def test_repeat_runs_each_fault_again_and_the_card_says_so(calls, tmp_path, monkeypatch):
    for n in (2, 3):
        SYNTHETIC_N = {
            f"audit-killed-worker-{n}": killed_worker_report,
            f"audit-peer-paused-{n}": lambda: silent_report(10.0),
        }
        monkeypatch.setitem(SYNTHETIC, *next(iter(SYNTHETIC_N.items())))
        monkeypatch.setitem(SYNTHETIC, *list(SYNTHETIC_N.items())[1])
    req = AuditRequest(None, None, "quick", Assumptions(24, 64), tmp_path, jobs=3, command="chaos audit", repeat=3)
    card, reports = audit(req)
    assert calls[0] == (["audit-reference"], 1) and len(calls[1][0]) == 6
    assert all(r.measured for r in card.runs) and len(card.runs) == 7
    assert card.model.restart_s.note.count("killed-worker") == 3  # the median runs over every repeat
    assert any("ran 3 times" in note for note in card.notes)


@pytest.mark.parametrize("jobs, said", [(1, False), (3, True)])
def test_a_card_of_runs_side_by_side_says_its_timings_carry_that_load(tmp_path, jobs, said):
    from chaos.audit.run import card_of

    req = AuditRequest(None, None, "quick", Assumptions(24, 64), tmp_path, jobs=jobs, command="chaos audit")
    card = card_of(req, [], 10.0)
    assert (
        any(f"-j {jobs}): restart and detection times include the battery's own load" in n for n in card.notes) is said
    )
