"""Scenario files that validated silently although they could not mean what
they say (issue 27, found by fuzzing the loader): a ``lost_work`` that can
never fail, a ``version_skew.env`` name ``cluster.env`` rejects, a file cut
short that keeps no fault and no check. Each is an error or a warning that
names the field; ``chaos validate`` and ``chaos run`` print the warnings."""

from __future__ import annotations

import pytest

import chaos.cli
import chaos.runner.cli
from chaos.errors import ScenarioError
from chaos.scenario.loader import load_scenario, scenario_from_dict

EXPLAIN = {"symptom": "s", "cause": "c", "fix": "f"}
KILL = {"kill_worker": {"worker": 1}, "at": {"epoch": 2}}  # 5 epochs of 20 steps by default


def scenario(**data):
    return scenario_from_dict({"name": "x", "description": "d", "explain": EXPLAIN, **data}, "x.yaml")


def problem(**data):
    with pytest.raises(ScenarioError) as caught:
        scenario(**data)
    assert caught.value.hint
    return caught.value.message


# --- lost_work whose default limit (the save interval) spans the whole run ----------------------


@pytest.mark.parametrize("save_freq", [100, 1000])
def test_lost_work_with_a_save_interval_as_long_as_the_run_can_never_fail(save_freq):
    sc = scenario(cluster={"training": {"save_freq": save_freq}}, faults=[KILL], recover=[{"lost_work": {}}])
    (warning,) = sc.warnings()
    assert warning.startswith("recover[0].lost_work: its limit defaults to the save interval")
    assert f"cluster.training.save_freq: {save_freq}" in warning and "the whole run (100 steps)" in warning
    assert "can never fail" in warning and "give max_steps" in warning


@pytest.mark.parametrize(
    "training, check",
    [
        ({"save_freq": 99}, {}),  # a backup before the end: work can be lost beyond it
        ({"save_freq": "epoch"}, {}),
        ({"save_freq": 1000}, {"max_steps": 10}),  # its own limit
    ],
)
def test_lost_work_that_can_fail_is_not_warned(training, check):
    sc = scenario(cluster={"training": training}, faults=[KILL], recover=[{"lost_work": check}])
    assert sc.warnings() == []


# --- version_skew.env: the names cluster.env accepts, with the same check -----------------------


@pytest.mark.parametrize(
    "where",
    [
        lambda env: {
            "faults": [{"version_skew": {"workers": [1], "env": env}, "at": "bring_up"}],
            "recover": [{"completed": {}}],
        },
        lambda env: {"cluster": {"env": env}},
    ],
)
@pytest.mark.parametrize("name", ["LD_LIBRARY_PATH ", " LD_LIBRARY_PATH", "LD_LIBRARY_PATH\n"])
def test_an_env_name_with_spaces_or_a_line_break_is_an_error_naming_the_field_and_the_name_meant(where, name):
    message = problem(**where({name: "/opt/cuda-11/lib64"}))
    field = "faults[0].version_skew.env" if "faults" in where({}) else "cluster.env"
    assert f"{field}: " in message
    assert "is not a valid environment variable name (valid: letters, digits and _" in message
    assert "did you mean 'LD_LIBRARY_PATH'?" in message


def test_version_skew_env_refuses_what_the_framework_sets_like_cluster_env():
    message = problem(faults=[{"version_skew": {"workers": [1], "env": {"TF_CONFIG": "{}"}}, "at": "bring_up"}])
    assert "faults[0].version_skew.env: TF_CONFIG is set by the framework" in message


def test_a_good_version_skew_env_still_validates():
    sc = scenario(
        faults=[{"version_skew": {"workers": [1], "env": {"LD_LIBRARY_PATH": "/x"}}, "at": "bring_up"}],
        recover=[{"completed": {}}],
    )
    assert sc.faults[0].fault.env == {"LD_LIBRARY_PATH": "/x"}


# --- a file cut short: no fault, no check ---------------------------------------------------------


@pytest.fixture
def cut_in_half(tmp_path):
    """The first half of a shipped scenario: name, description, explain, no cluster, faults or checks."""
    from pathlib import Path

    shipped = Path(__file__).resolve().parents[3] / "scenarios" / "killed-worker-recovers-from-checkpoint.yaml"
    lines = shipped.read_text().splitlines(keepends=True)
    path = tmp_path / "killed-worker-recovers-from-checkpoint.yaml"
    path.write_text("".join(lines[: len(lines) // 2]))
    return path


def test_a_file_cut_short_with_no_fault_and_no_check_is_warned(cut_in_half):
    sc = load_scenario(cut_in_half)
    assert not sc.faults and not sc.checks
    (warning,) = sc.warnings()
    assert warning.startswith("expect: no faults and no checks (expect and recover are empty)")
    assert "judges nothing" in warning and "cut short" in warning


def test_faults_with_no_check_are_warned():
    (warning,) = scenario(faults=[KILL]).warnings()
    assert warning.startswith("expect: no checks (expect and recover are empty)")


def test_a_fault_free_scenario_with_a_check_is_fine():
    assert scenario(recover=[{"completed": {}}]).warnings() == []


def test_chaos_validate_prints_the_warning(cut_in_half, capsys):
    assert chaos.cli.main(["validate", str(cut_in_half)]) == 0
    out = capsys.readouterr().out
    assert f"warning: {cut_in_half}: expect: no faults and no checks" in out
    assert "(1 warning)" in out


def test_chaos_run_prints_the_warnings_before_anything_runs(cut_in_half, monkeypatch, capsys):
    class Stop(Exception):
        pass

    def preflight(options):
        raise Stop  # nothing past the warnings is needed here

    monkeypatch.setattr(chaos.runner.cli, "preflight", preflight)
    with pytest.raises(Stop):
        chaos.runner.cli.cmd_run(
            type(
                "Args",
                (),
                {"scenarios": [str(cut_in_half)], "workload": None, "proxy_image": None, "report_dir": None, "jobs": 1},
            )()
        )
    out = capsys.readouterr().out
    assert "warning: " in out and "expect: no faults and no checks" in out
