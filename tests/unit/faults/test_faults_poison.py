"""poison_input: one worker's batch at one step gets a non-finite value, through
the harness's settings; bad parameters are refused naming the field and the
valid values."""

import pytest
from fake_backend import FakeCluster
from pydantic import ValidationError

from chaos.errors import ScenarioError
from chaos.faults import FAULTS, PoisonInput
from chaos.faults.undo import Undo
from chaos.scenario.loader import scenario_from_dict

EXPLAIN = {"symptom": "s", "cause": "c", "fix": "f"}


def scenario(fault=None, **extra):
    fault = fault if fault is not None else {"worker": 1, "step": 30}
    data = {
        "name": "x",
        "description": "d",
        "explain": EXPLAIN,
        "cluster": {"workers": 2, "training": {"epochs": 5, "steps_per_epoch": 20}},
        "faults": [{"poison_input": fault, "at": "bring_up", **extra}],
    }
    return scenario_from_dict(data, "x.yaml")


def problem(fault=None, **extra):
    with pytest.raises(ScenarioError) as caught:
        scenario(fault, **extra)
    return caught.value.message


def test_poison_input_sets_the_poisoned_step_on_its_worker_only_and_heal_clears_it():
    undo = Undo()
    cluster = FakeCluster(num_slots=3)
    fault = PoisonInput(worker=1, step=45, value="inf")
    undo(cluster)  # never injected: harmless
    fault.inject(cluster, undo)
    assert cluster.overrides == {
        1: {
            "poison_input": {
                "image": None,
                "env": {},
                "settings": {"poison_step": 45, "poison_value": "inf"},
                "cluster_config": None,
            }
        }
    }
    cluster.override(1, "someone_else", env={"X": "1"})
    undo(cluster)
    undo(cluster)
    assert cluster.active_overrides() == {1: ["someone_else"]}


def test_poison_input_is_registered_applies_at_create_and_needs_the_harness_settings():
    assert FAULTS.get("poison_input") is PoisonInput
    assert PoisonInput.applies_at_create
    fault = PoisonInput(worker=0, step=3)
    assert fault.hooks() == {"settings"}
    assert fault.value == "nan"
    assert fault.target == "worker-0"
    assert fault.inject_event(1.0).params == {"worker": 0, "step": 3, "value": "nan"}


@pytest.mark.parametrize(
    "bad",
    [
        {"worker": 1, "step": 0},
        {"worker": 1, "step": -1},
        {"worker": 1, "step": 5, "value": "zero"},
        {"worker": 1},  # no step
        {"worker": 1, "step": 5, "colour": "red"},
    ],
)
def test_poison_input_rejects_bad_parameters(bad):
    with pytest.raises(ValidationError):
        PoisonInput(**bad)


def test_a_step_below_1_names_the_field_and_the_bound():
    message = problem({"worker": 1, "step": 0})
    assert "faults[0].poison_input.step" in message and "must be >= 1" in message


def test_an_unknown_value_names_the_valid_values():
    message = problem({"worker": 1, "step": 5, "value": "zero"})
    assert "faults[0].poison_input.value" in message and "'zero' is not valid; valid: nan, inf" in message


def test_a_missing_step_is_named():
    assert "faults[0].poison_input.step" in problem({"worker": 1})


def test_a_worker_outside_the_cluster_is_rejected():
    assert "faults[0].poison_input.worker: 2 is out of range" in problem({"worker": 2, "step": 5})


def test_a_step_past_the_end_of_training_is_rejected():
    assert "faults[0].poison_input.step: 101 is past the last step (100)" in problem({"worker": 1, "step": 101})


def test_a_heal_due_before_the_poisoned_step_is_rejected():
    message = problem({"worker": 1, "step": 45}, until={"epoch": 2})
    assert "faults[0].poison_input.step: 45 is not before until (step 41)" in message
    assert scenario({"worker": 1, "step": 45}, until={"step": 47}).faults[0].fault.step == 45


def test_a_users_job_cannot_be_poisoned():
    data = {
        "name": "x",
        "description": "d",
        "explain": EXPLAIN,
        "cluster": {
            "workers": 2,
            "workload": {"image": "acme/trainer:1", "command": ["python", "train.py"], "checkpoint_dir": "/ckpt"},
        },
        "faults": [{"poison_input": {"worker": 1, "step": 5}, "at": "bring_up"}],
    }
    with pytest.raises(ScenarioError) as caught:
        scenario_from_dict(data, "x.yaml")
    assert "faults[0].poison_input: needs the built-in harness's training settings" in caught.value.message


def test_terminate_on_nan_is_a_training_setting_passed_to_the_worker():
    data = {"name": "x", "description": "d", "explain": EXPLAIN, "cluster": {"training": {"terminate_on_nan": True}}}
    assert scenario_from_dict(data, "x.yaml").cluster.training.to_worker_settings().terminate_on_nan is True
    data["cluster"]["training"]["terminate_on_nan"] = "yes"
    with pytest.raises(ScenarioError) as caught:
        scenario_from_dict(data, "x.yaml")
    assert "cluster.training.terminate_on_nan" in caught.value.message
