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
