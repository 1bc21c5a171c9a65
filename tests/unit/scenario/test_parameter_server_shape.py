"""The parameter-server cluster shape: cluster.ps with training.strategy, and a
fault's task: resolved through the topology (or refused, naming the valid tasks)."""

import pytest

from chaos.errors import ScenarioError
from chaos.runner.policy import Plan
from chaos.scenario.loader import scenario_from_dict

EXPLAIN = {"symptom": "s", "cause": "c", "fix": "f"}
PS = {"workers": 2, "ps": 1, "training": {"strategy": "parameter_server"}}


def scenario(cluster=PS, faults=()):
    return scenario_from_dict(
        {"name": "x", "description": "d", "explain": EXPLAIN, "cluster": cluster, "faults": list(faults)}, "x.yaml"
    )


def problem(**data):
    with pytest.raises(ScenarioError) as caught:
        scenario(**data)
    return caught.value.message


def kill(**target):
    return {"kill_worker": target, "at": {"epoch": 1}}


@pytest.mark.parametrize("task, slot", [("chief", 0), ("worker-0", 1), ("worker-1", 2), ("ps-0", 3)])
def test_a_task_resolves_to_its_container(task, slot):
    fault = scenario(faults=[kill(task=task)]).faults[0].fault
    assert fault.worker == slot and fault.target == f"worker-{slot}"


def test_with_mwms_worker_n_is_worker_n():
    fault = scenario(cluster={"workers": 2}, faults=[kill(task="worker-1")]).faults[0].fault
    assert fault.worker == 1


def test_a_task_the_cluster_lacks_is_refused_naming_the_field_and_the_valid_tasks():
    message = problem(faults=[kill(task="ps-1")])
    assert "faults[0].kill_worker.task" in message
    assert "'ps-1' is not a task of this cluster; valid: chief, worker-0, worker-1, ps-0" in message


def test_ps_task_in_an_mwms_cluster_is_refused():
    message = problem(cluster={"workers": 2}, faults=[kill(task="ps-0")])
    assert "valid: worker-0, worker-1" in message


def test_worker_and_task_must_agree():
    assert "give one" in problem(faults=[kill(task="ps-0", worker=1)])


def test_a_fault_needs_a_target():
    assert "give worker" in problem(faults=[kill()])


def test_worker_indices_cover_every_container():
    assert scenario(faults=[kill(worker=3)]).faults[0].fault.worker == 3
    assert "4 is out of range; valid: 0..3 (chief, worker-0, worker-1, ps-0)" in problem(faults=[kill(worker=4)])


def test_ps_and_strategy_must_agree():
    assert "cluster.ps" in problem(cluster={"workers": 2, "ps": 1})
    assert "needs parameter servers" in problem(cluster={"workers": 2, "training": {"strategy": "parameter_server"}})


def test_the_shape_counts_containers_and_one_reporter():
    sc = scenario(faults=[kill(task="ps-0")])
    assert sc.cluster.containers == 4 and sc.run_info().num_workers == 1
    plan = Plan.of(sc)
    assert plan.workers == 4 and plan.trainers == 1


def test_a_resolved_scenario_round_trips():
    sc = scenario(faults=[kill(task="ps-0")])
    assert scenario_from_dict(sc.to_dict()) == sc


def test_mwms_unchanged():
    sc = scenario(cluster={"workers": 4}, faults=[kill(worker=3)])
    assert sc.cluster.containers == 4 and Plan.of(sc).trainers == 4 and Plan.of(sc).reporters == 0
