"""Topology of the parameter-server shape: one container (slot) per TF task, TF_CONFIG, routes."""

import json

import pytest

from chaos.topology import Topology


def test_slots_map_to_chief_workers_then_ps():
    t = Topology(2, num_ps=2)
    assert t.num_slots == 5
    assert t.task_names() == ["chief", "worker-0", "worker-1", "ps-0", "ps-1"]
    assert [t.task(s) for s in range(5)] == [("chief", 0), ("worker", 0), ("worker", 1), ("ps", 0), ("ps", 1)]


def test_every_task_is_reached_through_its_own_proxy_route():
    t = Topology(2, num_ps=1)
    config = json.loads(t.tf_config(3))
    assert config["cluster"] == {
        "chief": ["proxy:23600"],
        "worker": ["proxy:23601", "proxy:23602"],
        "ps": ["proxy:23603"],
    }
    assert config["task"] == {"type": "ps", "index": 0}
    assert json.loads(t.tf_config(0))["task"] == {"type": "chief", "index": 0}
    assert json.loads(t.tf_config(2))["task"] == {"type": "worker", "index": 1}
    routes = t.routes()
    assert [(r.name, r.listen, r.upstream) for r in routes][3] == ("worker-3", "0.0.0.0:23603", "worker-3:23603")
    assert len(routes) == 4


def test_mwms_tf_config_is_unchanged():
    t = Topology(2)
    assert t.num_slots == 2 and not t.parameter_server
    assert t.tf_config(1) == (
        '{"cluster": {"worker": ["proxy:23600", "proxy:23601"]}, "task": {"index": 1, "type": "worker"}}'
    )
    assert t.task_names() == ["worker-0", "worker-1"]


def test_slot_of_names_the_valid_tasks():
    with pytest.raises(ValueError, match="'ps-0' is not a task of this cluster; valid: worker-0, worker-1"):
        Topology(2).slot_of("ps-0")
    assert Topology(1, num_ps=1).slot_of("ps-0") == 2


def test_limits():
    with pytest.raises(ValueError, match="ps must be 0..2"):
        Topology(2, num_ps=3)


def test_a_deployment_counts_its_containers_one_way_and_refuses_an_image_short():
    from chaos.backends.spec import Deployment

    ps = Topology(2, num_ps=1)  # chief + 2 workers + 1 ps
    assert Deployment(images=("w",) * 4, proxy_image="p", topology=ps).num_slots == 4
    assert Deployment(images=("w",) * 3, proxy_image="p").num_slots == 3
    with pytest.raises(ValueError, match="2 images for a cluster of 4 containers"):
        Deployment(images=("w",) * 2, proxy_image="p", topology=ps)
