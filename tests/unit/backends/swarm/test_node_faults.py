"""The node_lost fault on the Swarm backend, against the fake swarm (fake_swarm.py): where a
lost node's worker goes, what the run records, and how the local swarm's node containers are
found from the manager's socket. On real nodes: tests/integration/test_swarm_backend.py."""

from __future__ import annotations

import pytest
from fake_swarm import make_cluster as make
from fake_swarm import node_attrs, services, wait_for

from chaos.backends.abilities import NodeDrain, NodeLoss
from chaos.backends.refusals import refusals
from chaos.backends.swarm.node_loss import LocalNodeLoss, local_plan
from chaos.backends.swarm.placement import Node, another_node, moved, place
from chaos.errors import InfrastructureError
from chaos.events import AddressEvent, ExitEvent, NoticeEvent
from chaos.faults import FAULTS


def nodes(*specs_):
    return [Node.of(node_attrs(*s)) for s in specs_]


THREE = nodes(("node-1", "manager"), ("node-2",), ("node-3",))


# --- where the worker goes ------------------------------------------------------------------


def test_a_lost_nodes_worker_goes_to_a_node_without_another_worker_first():
    p = place(THREE, 2)
    assert p.workers == ("node-2", "node-3")
    assert another_node(THREE, p, 1, {"node-3"}) == "node-1"  # node-2 holds worker-0


def test_worker_nodes_come_before_managers_among_free_nodes():
    four = [*THREE, *nodes(("node-4",))]
    p = moved(place(four, 2), 1, "node-3")
    assert another_node(four, p, 1, {"node-3"}) == "node-4"


def test_a_node_lost_earlier_or_not_ready_is_never_chosen_and_none_left_is_an_error():
    p = place(THREE, 2)
    down = nodes(("node-1", "manager", "down"), ("node-2",), ("node-3",))
    assert another_node(down, p, 1, {"node-3"}) == "node-2"  # shares with worker-0: the only one left
    with pytest.raises(InfrastructureError) as err:
        another_node(THREE, p, 1, {"node-1", "node-2", "node-3"})
    assert "worker-1's node node-3 is out of use" in err.value.message and "node-1 ready/active" in err.value.message
    assert "chaos swarm up --nodes 3" in err.value.hint


def test_moved_changes_only_that_worker():
    p = place(THREE, 2)
    assert moved(p, 1, "node-1").workers == ("node-2", "node-1") and moved(p, 1, "node-1").proxy == p.proxy


# --- the run --------------------------------------------------------------------------------


class FakeLoss:
    """LocalNodeLoss at its boundary: killing a node loses every container on its engine."""

    def __init__(self, fake) -> None:
        self.fake = fake
        self.calls: list[tuple[str, str]] = []

    def kill(self, hostname):
        self.calls.append(("kill", hostname))
        for container in self.fake.engines[hostname].containers.held.values():
            container.lose()

    def restart(self, hostname):
        self.calls.append(("restart", hostname))


def test_a_lost_node_kills_its_worker_records_its_exit_and_the_restart_moves_it(swarm):
    with make(swarm) as cluster:
        cluster.start_workers()
        lost_container = cluster.container(1)
        cluster._node_loss = loss = FakeLoss(swarm)
        assert cluster.lose_node(1) == "node-3"
        assert loss.calls == [("kill", "node-3")]
        events = cluster.events.snapshot()
        [exit_] = [e for e in events if isinstance(e, ExitEvent)]
        assert (exit_.source, exit_.exit_code) == ("worker-1", 137)
        [notice] = [e for e in events if isinstance(e, NoticeEvent)]
        assert notice.topic == "node_lost" and notice.text.startswith("node-3 lost (its engine killed): worker-1")

        cluster.restart([0, 1], reason="worker-0, worker-1 failed", grace_s=2)
        assert not [c for c in lost_container.calls if c[0] == "stop"]  # nothing is left to stop
        live = [(s.name, s.node) for s in services(swarm, "worker") if not s.removed]
        assert live == [(f"{cluster.prefix}-worker-0-g1", "node-2"), (f"{cluster.prefix}-worker-1-g1", "node-1")]
        assert wait_for(lambda: sum(isinstance(e, AddressEvent) for e in cluster.events.snapshot()) == 4)
        after = [e for e in cluster.events.snapshot() if isinstance(e, AddressEvent)][2:]
        assert {e.task: e.node for e in after} == {"worker-0": "node-2", "worker-1": "node-1"}
        assert [e for e in cluster.events.snapshot() if isinstance(e, ExitEvent)][1:] == [
            e for e in cluster.events.snapshot() if isinstance(e, ExitEvent) and e.source == "worker-0"
        ]

        cluster.restore_node("node-3")  # in the background: the run goes on
        assert wait_for(lambda: loss.calls[-1] == ("restart", "node-3"))
        assert wait_for(
            lambda: any(isinstance(e, NoticeEvent) and e.topic == "node_restored" for e in cluster.events.snapshot())
        )
        cluster.restart([1], reason="again", grace_s=2)
        assert [s.node for s in services(swarm, "worker") if not s.removed] == ["node-2", "node-1"]  # not back
        lost_container.status = "exited"  # it came back with its node
    assert ("remove", True) in lost_container.calls  # teardown cleared the restored node
    assert not [e for e in cluster.events.snapshot() if isinstance(e, NoticeEvent) and e.topic == "teardown_incomplete"]


def test_losing_the_proxys_node_is_refused_with_a_hint(swarm):
    swarm.node_list[:] = [node_attrs("node-1", "manager")]  # everything on one node
    with make(swarm) as cluster:
        cluster.start_workers()
        with pytest.raises(InfrastructureError) as err:
            cluster.lose_node(1)
        assert "which also runs the proxy" in err.value.message and "--nodes 3" in err.value.hint


def test_a_swarm_that_is_not_a_local_one_says_it_cannot_switch_a_machine_off(swarm):
    with make(swarm) as cluster:
        cluster.start_workers()
        with pytest.raises(InfrastructureError) as err:
            cluster.lose_node(1)
        assert "not a local swarm made by `chaos swarm up`" in err.value.message
        assert "systemctl stop docker" in err.value.hint
        assert not [e for e in cluster.events.snapshot() if isinstance(e, ExitEvent)]


def test_one_docker_host_refuses_node_lost_before_anything_starts():
    fault = FAULTS.get("node_lost")(worker=1)
    [refusal] = refusals([fault], "docker")
    assert refusal.abilities == (NodeLoss,) and refusal.verbs == ("lose_node", "restore_node")
    assert refusals([fault], "swarm") == []


# --- finding the local swarm's node containers ---------------------------------------------


def test_the_local_swarm_is_found_from_the_managers_socket(tmp_path):
    for i in (1, 2, 3):
        (tmp_path / "swarm" / "t1" / f"node-{i}").mkdir(parents=True)
    (tmp_path / "swarm" / "t1" / "store").mkdir()
    plan = local_plan(f"unix://{tmp_path}/swarm/t1/node-1/docker.sock")
    assert (plan.name, plan.nodes, plan.node_container(3)) == ("t1", 3, "tfchaos-swarm-t1-node-3")
    assert local_plan("tcp://10.0.0.5:2376") is None and local_plan(None) is None
    assert local_plan("unix:///var/run/docker.sock") is None


class _HostContainers:
    def __init__(self, labels):
        self.labels = labels
        self.asked: list[str] = []

    def get(self, name):
        self.asked.append(name)
        return type("C", (), {"labels": self.labels, "kill": lambda self: None})()


def test_a_node_container_must_carry_the_swarms_label(tmp_path):
    (tmp_path / "swarm" / "t1" / "node-1").mkdir(parents=True)
    url = f"unix://{tmp_path}/swarm/t1/node-1/docker.sock"
    foreign = type("Host", (), {"containers": _HostContainers({})})()
    with pytest.raises(InfrastructureError) as err:
        LocalNodeLoss.of(url, host=foreign).kill("node-1")
    assert "does not carry io.tfchaos.swarm=t1" in err.value.message
    ours = type("Host", (), {"containers": _HostContainers({"io.tfchaos.swarm": "t1"})})()
    assert LocalNodeLoss.of(url, host=ours).index("node-1") == 1
    with pytest.raises(InfrastructureError):
        LocalNodeLoss.of(url, host=ours).index("gpu-7")


def test_the_swarm_scenarios_are_valid_on_the_swarm_and_refused_on_one_host_with_where_they_run(capsys):
    from pathlib import Path

    import chaos.cli

    folder = str(Path(__file__).parents[4] / "scenarios-swarm")
    assert chaos.cli.main(["validate", folder, "--backend", "swarm"]) == 0
    assert chaos.cli.main(["validate", folder]) == 2
    said = capsys.readouterr()
    err = said.out + said.err
    assert "fault 0 (node_lost) needs lose_node, restore_node, which the docker backend" in err
    assert "run it with --backend swarm" in err


class _NodeContainer:
    def __init__(self, code=0):
        self.code = code
        self.calls: list[tuple] = []

    def exec_run(self, cmd):
        self.calls.append(("exec", cmd[-1]))
        return self.code, b"iptables: Permission denied" if self.code else b""

    def kill(self):
        self.calls.append(("kill",))


def _local_swarm(node):
    from chaos.backends.swarm.nodes import LocalSwarm
    from chaos.backends.swarm.plan import SwarmPlan

    host = type("Host", (), {"containers": type("Cs", (), {"get": lambda self, name: node})()})()
    return LocalSwarm(host, SwarmPlan("t1", 3, "/tmp/tfchaos-test-sockets"))


def test_a_node_goes_silent_before_its_kill_so_no_fin_or_rst_leaves_it():
    from chaos.backends.swarm.nodes import SILENCE_NODE

    node = _NodeContainer()
    _local_swarm(node).kill_node(3)
    assert node.calls == [("exec", SILENCE_NODE), ("kill",)]
    assert "OUTPUT 1 -j DROP" in SILENCE_NODE and "FORWARD 1 -j DROP" in SILENCE_NODE


def test_a_node_that_cannot_be_silenced_is_not_killed():
    node = _NodeContainer(code=1)
    with pytest.raises(InfrastructureError) as err:
        _local_swarm(node).kill_node(3)
    assert "node-3 could not be cut off" in err.value.message and "Permission denied" in err.value.message
    assert ("kill",) not in node.calls


# --- a node drained ---------------------------------------------------------------------------


def test_a_drained_node_is_set_to_drain_its_worker_moves_and_the_heal_makes_it_active(swarm):
    with make(swarm) as cluster:
        cluster.start_workers()
        assert cluster.drain_node(1) == "node-3"
        assert swarm.node_updates == [("node-3", {"Role": "worker", "Availability": "drain"})]
        [notice] = [e for e in cluster.events.snapshot() if isinstance(e, NoticeEvent)]
        assert notice.topic == "node_drained" and notice.text.startswith("node-3 drained: Swarm stops worker-1")
        cluster.container(1).stop()  # what Swarm does to a drained node's task
        cluster.restart([0, 1], reason="worker-0, worker-1 failed", grace_s=2)
        live = [(s.name, s.node) for s in services(swarm, "worker") if not s.removed]
        assert live == [(f"{cluster.prefix}-worker-0-g1", "node-2"), (f"{cluster.prefix}-worker-1-g1", "node-1")]
        moves = [e.text for e in cluster.events.snapshot() if isinstance(e, NoticeEvent) and e.topic == "rescheduled"]
        assert moves == ["worker-1 moves from node-3 (drained) to node-1"]
        cluster.activate_node("node-3")
        assert swarm.node_updates[-1] == ("node-3", {"Role": "worker", "Availability": "active"})
        cluster.restart([1], reason="again", grace_s=2)
        assert [s.node for s in services(swarm, "worker") if not s.removed] == ["node-2", "node-1"]  # not back


def test_draining_the_proxys_node_is_refused_and_nothing_is_drained(swarm):
    swarm.node_list[:] = [node_attrs("node-1", "manager")]
    with make(swarm) as cluster:
        cluster.start_workers()
        with pytest.raises(InfrastructureError) as err:
            cluster.drain_node(0)
        assert "draining it would end the run" in err.value.message and swarm.node_updates == []


def test_one_docker_host_refuses_node_drained_and_names_the_swarm():
    fault = FAULTS.get("node_drained")(worker=1)
    [refusal] = refusals([fault], "docker")
    assert refusal.abilities == (NodeDrain,) and refusal.verbs == ("activate_node", "drain_node")
    assert refusals([fault], "swarm") == []
