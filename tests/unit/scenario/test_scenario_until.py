"""The `until` heal trigger, the new faults in scenario files, and the TF
versions a scenario needs built."""

import pytest
from pydantic import ValidationError

from chaos.errors import ScenarioError
from chaos.faults import CpuThrottle, DeviceOOM, HostOOM, ReusedSeed, VersionSkew
from chaos.scenario import AtBringUp, AtEpoch, AtSeconds, AtStep, Explain, FaultStep, Scenario
from chaos.scenario.loader import scenario_from_dict

EXPLAIN = {"symptom": "s", "cause": "c", "fix": "f"}
TRAINING = {"epochs": 5, "steps_per_epoch": 20}  # steps 1..100, epochs 0..4


def scenario(*faults, **extra):
    data = {
        "name": "x",
        "description": "d",
        "explain": EXPLAIN,
        "cluster": {"training": TRAINING},
        "faults": list(faults),
    }
    return scenario_from_dict({**data, **extra}, "x.yaml")


def problems(*faults, **extra):
    with pytest.raises(ScenarioError) as caught:
        scenario(*faults, **extra)
    assert caught.value.hint
    return caught.value.message


THROTTLE = {"cpu_throttle": {"worker": 1, "cpus": 0.2}, "at": {"epoch": 1}}


@pytest.mark.parametrize(
    "until, trigger",
    [({"epoch": 2}, AtEpoch(epoch=2)), ({"step": 60}, AtStep(step=60)), ({"seconds": 12.5}, AtSeconds(seconds=12.5))],
)
def test_until_parses_each_training_trigger(until, trigger):
    step = scenario({**THROTTLE, "until": until}).faults[0]
    assert step.until == trigger and type(step.until) is type(trigger)
    assert step.for_s is None and step.timed


def test_a_step_without_for_or_until_is_not_timed():
    step = scenario(THROTTLE).faults[0]
    assert step.until is None and step.for_s is None and not step.timed
    assert scenario({**THROTTLE, "for": 5}).faults[0].timed


def test_until_round_trips_through_to_dict():
    sc = scenario({**THROTTLE, "until": {"epoch": 3}})
    data = sc.to_dict()
    assert data["faults"][0] == {"cpu_throttle": {"worker": 1, "cpus": 0.2}, "at": {"epoch": 1}, "until": {"epoch": 3}}
    assert "for" not in data["faults"][0]
    assert scenario_from_dict(data) == sc


def test_until_in_python_construction():
    sc = Scenario(
        name="x",
        description="d",
        explain=Explain(**EXPLAIN),
        faults=[FaultStep(ReusedSeed(), AtBringUp(), until=AtEpoch(epoch=2))],
    )
    assert sc.faults[0].until == AtEpoch(epoch=2)
    with pytest.raises(ValidationError, match="not both"):  # field errors in Python are pydantic's
        Scenario(
            name="x",
            description="d",
            explain=Explain(**EXPLAIN),
            faults=[FaultStep(ReusedSeed(), AtBringUp(), for_s=3, until=AtEpoch(epoch=2))],
        )


def test_for_and_until_together_is_an_error_naming_both():
    message = problems({**THROTTLE, "for": 10, "until": {"epoch": 2}})
    assert message.startswith("x.yaml: faults[0]")
    assert "give 'for' (seconds) or 'until' (a trigger), not both" in message


def test_until_bring_up_is_rejected():
    message = problems({**THROTTLE, "until": "bring_up"})
    assert "faults[0]" in message and "'until: bring_up' would heal before training starts" in message


@pytest.mark.parametrize(
    "until, expected",
    [
        ({"epoch": 5}, "faults[0].until.epoch: 5 is past the last epoch (4, 0-based): it would never heal"),
        ({"step": 101}, "faults[0].until.step: 101 is past the last step (100): it would never heal"),
        ({"epoch": 1}, "faults[0].until.epoch: 1 is not after at.epoch 1: the fault would heal as it fires"),
        ({"epoch": 0}, "faults[0].until.epoch: 0 is not after at.epoch 1: the fault would heal as it fires"),
        (
            {"epoc": 2},
            "faults[0].until: unknown trigger 'epoc'; valid: bring_up, {step: N}, {epoch: N} or {seconds: S}; did you mean 'epoch'?",
        ),
    ],
)
def test_until_that_never_or_instantly_heals_is_rejected(until, expected):
    assert expected in problems({**THROTTLE, "until": until})


def test_until_at_the_last_epoch_and_step_is_fine():
    assert scenario({**THROTTLE, "until": {"epoch": 4}}).faults[0].until == AtEpoch(epoch=4)
    assert scenario({**THROTTLE, "until": {"step": 100}}).faults[0].until == AtStep(step=100)


def test_the_new_faults_parse_from_yaml_shapes():
    sc = scenario(
        {"version_skew": {"workers": [1], "tf_version": "2.15"}, "at": "bring_up"},
        {"reused_seed": {}, "at": "bring_up", "until": {"epoch": 2}},
        {"device_oom": {"worker": 1, "device_memory_mb": 512, "demand_mb": 2048}, "at": {"epoch": 1}},
        {"host_oom": {"worker": 0}, "at": {"step": 50}},
        {"cpu_throttle": {"worker": 1}, "at": {"epoch": 3}, "for": 5},
    )
    assert [type(s.fault) for s in sc.faults] == [VersionSkew, ReusedSeed, DeviceOOM, HostOOM, CpuThrottle]
    assert sc.faults[0].fault.tf_version == "2.15"


def test_fault_parameter_errors_of_the_new_faults_name_the_field():
    assert "faults[0].version_skew: give tf_version, image or env" in problems({"version_skew": {}, "at": "bring_up"})
    assert "faults[0].device_oom: demand_mb (100) must exceed device_memory_mb (512)" in problems(
        {"device_oom": {"worker": 1, "demand_mb": 100}, "at": {"epoch": 1}}
    )
    assert "faults[0].cpu_throttle.worker: 3 is out of range; valid: 0..1" in problems(
        {"cpu_throttle": {"worker": 3}, "at": {"epoch": 1}}
    )


def test_version_skew_workers_outside_the_cluster_are_rejected():
    message = problems({"version_skew": {"workers": [1, 2], "env": {"A": "1"}}, "at": "bring_up"})
    assert "faults[0].version_skew.workers: 2 is out of range; valid: 0..1 (cluster.workers is 2)" in message
    assert "workers: 1 is out" not in message
    assert "faults[0].version_skew.workers: -1 is out of range" in problems(
        {"version_skew": {"workers": [-1], "env": {"A": "1"}}, "at": "bring_up"}
    )


# --- Scenario.tf_versions ---------------------------------------------------------------


def test_tf_versions_include_a_version_skews_tf_version():
    sc = scenario({"version_skew": {"workers": [1], "tf_version": "2.15"}, "at": "bring_up"})
    assert sc.tf_versions() == ["2.15", "2.21"]


def test_tf_versions_of_an_env_only_skew_and_of_per_worker_versions():
    assert scenario({"version_skew": {"workers": [1], "env": {"A": "1"}}, "at": "bring_up"}).tf_versions() == ["2.21"]
    sc = scenario(
        {"version_skew": {"workers": [0], "tf_version": "2.15"}, "at": "bring_up"},
        cluster={"workers": 2, "tf_versions": ["2.20", "2.18"], "training": TRAINING},
    )
    assert sc.tf_versions() == ["2.15", "2.18", "2.20"]
    assert scenario().tf_versions() == ["2.21"]


def test_a_tf_version_without_an_image_is_a_validation_error_naming_the_field():
    skew = {"version_skew": {"workers": [1], "tf_version": "2.11"}, "at": "bring_up"}
    message = problems(skew)
    assert "faults[0].version_skew.tf_version" in message and "has no Python 3.11 wheel" in message
    message = problems(cluster={"tf_version": "2.9", "training": TRAINING})
    assert "cluster.tf_version" in message and "2.12 and later" in message
    # A buildable version passes.
    assert scenario({**skew, "version_skew": {"workers": [1], "tf_version": "2.18"}}).tf_versions() == ["2.18", "2.21"]
