import pytest

from chaos.audit.battery import BATTERIES, plan
from chaos.cli import main
from chaos.workload.spec import WorkloadSpec


@pytest.mark.parametrize(
    "argv, field",
    [
        (["--mtbf-hours", "-1"], "--mtbf-hours"),
        (["--mtbf-hours", "inf"], "--mtbf-hours"),
        (["--nodes", "0"], "--nodes"),
        (["--battery", "everything"], "--battery"),
        (["--fail-under", "Z"], "--fail-under"),
        (["--jobs", "99"], "--jobs"),
        (["--workload", "no-such-job.yaml"], "--workload"),
    ],
)
def test_bad_input_is_one_message_naming_the_field_exit_2(argv, field, capsys):
    assert main(["audit", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {field}: must") and "\nhint: " in err and "Traceback" not in err


def test_an_invalid_workload_file_is_the_workload_loader_s_error(tmp_path, capsys):
    bad = tmp_path / "job.yaml"
    bad.write_text("image: x\ncommand: []\n")
    assert main(["audit", "--workload", str(bad)]) == 2
    assert "command" in capsys.readouterr().err


def test_every_battery_entry_is_planned_for_a_user_job_or_refused_with_why():
    job = WorkloadSpec.model_validate({"image": "acme/job:1", "command": ["python", "t.py"], "checkpoint_dir": "/c"})
    planned = {p.entry.key: p for p in plan("full", job)}
    assert set(planned) == {e.key for e in BATTERIES["full"]}
    empty = planned["empty-checkpoint-dir"]
    assert empty.scenario is None and "stale_checkpoint" in empty.refused
    assert planned["killed-worker"].scenario.cluster.workload is not None


def test_the_harness_runs_every_entry():
    assert all(p.scenario is not None for p in plan("full", None))


def test_the_harness_trains_long_enough_and_a_user_job_keeps_its_own_length():
    harness = {p.entry.key: p.scenario for p in plan("full", None)}
    assert harness["preemption"].cluster.training.total_steps == 500
    assert harness["preemption"].faults[0].fault.grace_s == 1
    job = WorkloadSpec.model_validate({"image": "acme/job:1", "command": ["python", "t.py"], "checkpoint_dir": "/c"})
    user = {p.entry.key: p.scenario for p in plan("full", job) if p.scenario is not None}
    assert user["preemption"].faults[0].fault.grace_s == 15
    assert all(not s.warnings() for s in user.values()), {k: s.warnings() for k, s in user.items()}


@pytest.mark.parametrize("value", ["0", "6", "two", "-1"])
def test_a_bad_repeat_is_one_message_naming_it_exit_2(value, capsys):
    assert main(["audit", "--repeat", value]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --repeat: must be a whole number") and "1 to 5" in err and "\nhint: " in err


def test_repeat_plans_each_fault_n_times_with_its_own_key_and_scenario_and_the_reference_once():
    planned = plan("quick", None, repeat=3)
    keys = [p.entry.key for p in planned]
    assert keys == [
        "reference",
        "killed-worker",
        "killed-worker#2",
        "killed-worker#3",
        "peer-paused",
        "peer-paused#2",
        "peer-paused#3",
    ]
    names = [p.scenario.name for p in planned]
    assert len(set(names)) == len(names) and "audit-killed-worker-3" in names
    assert planned[1].scenario.faults == planned[3].scenario.faults  # the same fault, run again
