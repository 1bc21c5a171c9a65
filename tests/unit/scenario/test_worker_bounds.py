"""A fault can aim at every worker the scenario has, up to the format's bound
(chaos.topology), and one aimed at a worker the scenario does not have is refused
at validation, naming the field, the valid range for this scenario and how to
reach it (issue 39: ``kill_worker: {worker: 7}`` was refused in an 8-worker
scenario by a stale ``le=6``)."""

import json
from pathlib import Path

import pytest

from chaos import topology
from chaos.errors import ScenarioError
from chaos.scenario import schema
from chaos.scenario.loader import load_scenario, scenario_from_dict

ROOT = Path(__file__).resolve().parents[3]
EIGHT = ROOT / "benchmarks" / "swarm" / "killed-worker-8-workers-recovers-from-checkpoint.yaml"
EXPLAIN = {"symptom": "s", "cause": "c", "fix": "f"}
LAST = topology.MAX_WORKERS - 1  # 15


def scenario(workers=topology.MAX_WORKERS, faults=(), expect=(), **cluster):
    data = {
        "name": "x",
        "description": "d",
        "explain": EXPLAIN,
        "cluster": {"workers": workers, "training": {"global_batch": 64, "epochs": 3}, **cluster},
        "faults": list(faults),
        "expect": list(expect),
    }
    return scenario_from_dict(data, "x.yaml")


def refusal(**data) -> ScenarioError:
    with pytest.raises(ScenarioError) as caught:
        scenario(**data)
    assert caught.value.hint
    return caught.value


def at(fault, **params):
    return {fault: params, "at": {"epoch": 1}}


def test_a_sixteen_worker_scenario_aims_faults_at_worker_15_by_index_task_and_peer():
    sc = scenario(
        faults=[
            at("kill_worker", worker=LAST),
            at("pause_worker", task=f"worker-{LAST}"),
            at("packet_loss", worker=0, peer=LAST, percent=10),
            at("kill_during_save", worker=LAST),
        ],
        expect=[{"exit_code": {"workers": [LAST], "code": 137}}],
    )
    assert [s.fault.target for s in sc.faults] == ["worker-15", "worker-15", "worker-0", "worker-15"]
    assert sc.faults[2].fault.peer == LAST


def test_worker_16_of_a_sixteen_worker_scenario_is_refused_naming_the_range():
    err = refusal(faults=[at("kill_worker", worker=16)])
    assert (
        "faults[0].kill_worker.worker: 16 is out of range; valid: 0..15 (cluster.workers is 16); "
        "a scenario has at most 16 workers"
    ) in err.message
    assert "Traceback" not in err.message


def test_task_worker_16_and_peer_16_are_refused_too():
    assert (
        "faults[0].pause_worker.task: 'worker-16' is not a task of this cluster; valid: worker-0, "
        in refusal(faults=[at("pause_worker", task="worker-16")]).message
    )
    message = refusal(faults=[at("packet_loss", worker=0, peer=16, percent=10)]).message
    assert "faults[0].packet_loss.peer: 16 is out of range; valid: 0..15 except 0 (cluster.workers is 16)" in message


def test_a_peer_that_is_the_faults_own_worker_is_refused_at_validation():
    message = refusal(workers=4, faults=[at("packet_loss", worker=2, peer=2, percent=10)]).message
    assert (
        "faults[0].packet_loss.peer: 2 is the fault's own worker; valid: another worker, 0..3 except 2 "
        "(cluster.workers is 4)"
    ) in message


def test_a_worker_beyond_a_smaller_cluster_says_how_to_reach_it():
    message = refusal(workers=4, faults=[at("kill_worker", worker=7)]).message
    assert (
        "faults[0].kill_worker.worker: 7 is out of range; valid: 0..3 (cluster.workers is 4): "
        "to reach worker 7, set cluster.workers to 8 or more"
    ) in message


def test_the_eight_worker_benchmark_validates_with_worker_7_killed():
    data = load_scenario(EIGHT).to_dict()
    data["faults"][0]["kill_worker"]["worker"] = 7
    data["expect"][1]["exit_code"]["workers"] = [7]
    sc = scenario_from_dict(data, EIGHT.name)
    assert sc.cluster.workers == 8 and sc.faults[0].fault.worker == 7


def test_the_largest_parameter_server_cluster_reaches_its_last_ps():
    ps = {"ps": topology.MAX_PS, "training": {"global_batch": 64, "epochs": 3, "strategy": "parameter_server"}}
    sc = scenario(faults=[at("kill_worker", task=f"ps-{topology.MAX_PS - 1}")], **ps)
    assert sc.faults[0].fault.worker == topology.MAX_SLOTS - 1 == 18


def test_the_schema_bounds_a_worker_index_by_the_largest_cluster():
    text = schema.SCHEMA_PATH.read_text(encoding="utf-8")
    maxima = {
        node["maximum"]
        for node in _nodes(json.loads(text))
        if set(node) >= {"maximum", "minimum", "type"}
        and node["type"] == "integer"
        and node["minimum"] == 0
        and node["maximum"] in (3, 6, 18)
    }
    assert maxima == {topology.MAX_SLOTS - 1}
    assert "worker-[0-9]|" not in text


def _nodes(value):
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from _nodes(v)
    elif isinstance(value, list):
        for v in value:
            yield from _nodes(v)


BOUNDS = {"MAX_WORKERS", "MAX_PS", "MAX_SLOTS", "BACKEND_MAX_WORKERS", "STOP_GRACE_S"}
# Not yet moved: its module was being changed by another hand at the same time (issue 39, item 3).
NOT_YET = {("chaos/backends/docker/cluster.py", "STOP_GRACE_S")}


def test_every_cluster_bound_is_defined_once_in_chaos_topology():
    import ast

    defined = []
    for path in sorted((ROOT / "chaos").rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            for target in targets:
                if isinstance(target, ast.Name) and target.id in BOUNDS:
                    defined.append((path.relative_to(ROOT).as_posix(), target.id))
    elsewhere = sorted(d for d in defined if d[0] != "chaos/topology.py" and d not in NOT_YET)
    assert elsewhere == [], "import these bounds from chaos.topology instead of defining them again"
    assert {name for path, name in defined if path == "chaos/topology.py"} == BOUNDS
