"""The node_link fault: the link between the nodes of two workers cut or degraded on the
Swarm backend (rules in the first node's namespace, chaos.backends.swarm.links), and the
scenario rules that go with it (cluster.traffic: direct). Against the fake swarm; on real
nodes: tests/integration/test_swarm_backend.py."""

from __future__ import annotations

import json

import pytest
from fake_backend import FakeCluster
from fake_swarm import make_cluster as make
from fake_swarm import node_attrs

from chaos.backends.swarm import links
from chaos.backends.swarm.links import Link, dropped_packets, rule_specs
from chaos.errors import InfrastructureError, ScenarioError
from chaos.events import NoticeEvent
from chaos.faults import FAULTS
from chaos.scenario.loader import load_many
from chaos.scenario.model import Scenario
from chaos.topology import Topology

LINK = "scenarios-swarm/link-between-two-nodes-cut-fails-on-the-heartbeat-then-recovers.yaml"


# --- the rules --------------------------------------------------------------------------------


def test_a_cut_drops_every_vxlan_packet_to_and_from_the_peer_node():
    link = Link("node-2", "node-3", "172.30.0.3", 100, "tfchaos-ab-link")
    out, into = rule_specs(link)
    assert out[:1] == ["OUTPUT"] and ["-d", "172.30.0.3"] == out[out.index("-d") : out.index("-d") + 2]
    assert into[:1] == ["INPUT"] and "-s" in into and "172.30.0.3" in into
    for rule in (out, into):
        assert rule[rule.index("--dport") + 1] == "4789" and rule[-2:] == ["-j", "DROP"]
        assert "statistic" not in rule and "tfchaos-ab-link" in rule
    assert [c[:4] for c in links.apply_commands(link)] == [
        ["iptables", "-w", "-I", "OUTPUT"],
        ["iptables", "-w", "-I", "INPUT"],
    ]
    assert [c[3:] for c in links.undo_commands(link)] == rule_specs(link)  # undone rule by rule


def test_a_degraded_link_drops_its_share_at_random():
    [out, _] = rule_specs(Link("node-2", "node-3", "10.0.0.3", 25, "t"))
    assert out[out.index("--probability") + 1] == "0.2500" and "statistic" in out


def test_the_packets_the_rules_dropped_are_read_back_by_their_tag():
    listing = """Chain INPUT (policy ACCEPT 0 packets, 0 bytes)
    pkts      bytes target     prot opt in     out     source               destination
      41     6150 DROP       udp  --  *      *       172.30.0.3           0.0.0.0/0            udp dpt:4789 /* tfchaos-ab-link */
       7      900 DROP       udp  --  *      *       172.30.0.9           0.0.0.0/0            udp dpt:4789 /* another-run */

Chain OUTPUT (policy ACCEPT 0 packets, 0 bytes)
    pkts      bytes target     prot opt in     out     source               destination
      38     5800 DROP       udp  --  *      *       0.0.0.0/0            172.30.0.3           udp dpt:4789 /* tfchaos-ab-link */
"""
    assert dropped_packets(listing, "tfchaos-ab-link") == {"INPUT": 41, "OUTPUT": 38}
    assert dropped_packets(listing, "nothing") == {}


# --- TF_CONFIG and the scenario rules ----------------------------------------------------------


def test_direct_traffic_names_the_workers_themselves_in_tf_config():
    direct = json.loads(Topology(2, direct=True).tf_config(1))
    assert direct["cluster"]["worker"] == ["worker-0:23600", "worker-1:23601"] and direct["task"]["index"] == 1
    assert json.loads(Topology(2).tf_config(1))["cluster"]["worker"] == ["proxy:23600", "proxy:23601"]
    [scenario], errors = load_many([LINK])
    assert not errors and scenario.cluster.topology().direct


def _with(scenario_path: str, **changes) -> dict:
    [scenario], _ = load_many([scenario_path])
    data = scenario.to_dict()
    data["cluster"].update(changes.get("cluster", {}))
    if "faults" in changes:
        data["faults"] = changes["faults"]
    return data


def test_a_node_link_needs_direct_traffic_and_a_proxy_fault_needs_the_proxy():
    with pytest.raises(ScenarioError) as err:
        Scenario.model_validate(_with(LINK, cluster={"traffic": "proxy"}))
    assert "node_link" in str(err.value) and "set cluster.traffic: direct" in str(err.value)
    latency = [{"latency": {"worker": 1, "latency_ms": 50}, "at": {"epoch": 1}, "for": 10}]
    with pytest.raises(ScenarioError) as err:
        Scenario.model_validate(_with(LINK, faults=latency))
    assert "latency" in str(err.value) and "cluster.traffic: direct bypasses" in str(err.value)
    dropped = [{"silent_drop": {"worker": 1}, "at": {"epoch": 1}, "for": 10}]
    assert Scenario.model_validate(_with(LINK, faults=dropped)).cluster.traffic == "direct"  # in the worker's namespace


def test_each_fault_on_the_proxys_link_says_it_needs_the_proxy():
    import inspect

    for name, cls in FAULTS.items():
        source = "\n".join(inspect.getsource(k) for k in cls.__mro__ if k.__module__.startswith("chaos.faults"))
        if ".proxy(" in source:
            assert cls.needs_traffic == "proxy", name


def test_the_fault_degrades_then_restores_and_names_two_different_workers():
    fault = FAULTS.get("node_link")(workers=[0, 1], loss_percent=40)
    cluster = FakeCluster()
    undo = fault.inject(cluster)
    assert cluster.degraded_links == {("node-of-worker-0", "node-of-worker-1")}
    undo(cluster)
    assert cluster.degraded_links == set()
    with pytest.raises(ValueError, match="two different workers"):
        FAULTS.get("node_link")(workers=[1, 1])


# --- on the swarm -----------------------------------------------------------------------------


class FakeNodes:
    """The local swarm's node containers (LocalNodeLoss) at their boundary: commands run in a node."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, list[str]]] = []

    def run(self, hostname, argv):
        self.ran.append((hostname, argv))
        if argv == links.COUNT_COMMAND:
            tag = next(a for c in self.ran for a in c[1] if a.startswith("tfchaos-") and "-link-" in a)
            return f"Chain OUTPUT (policy ACCEPT)\n  12 900 DROP udp -- * * 0.0.0.0/0 x udp dpt:4789 /* {tag} */\n"
        return ""


def test_the_link_is_cut_on_the_first_workers_node_toward_the_second_and_restored(swarm):
    with make(swarm) as cluster:
        cluster.start_workers()
        cluster._node_loss = nodes = FakeNodes()
        link = cluster.degrade_link(0, 1, 100)
        assert (link.node, link.peer, link.peer_addr) == ("node-2", "node-3", "172.30.0.3")
        assert [h for h, _ in nodes.ran] == ["node-2", "node-2"] and nodes.ran[0][1][:4] == [
            "iptables",
            "-w",
            "-I",
            "OUTPUT",
        ]
        cluster.restore_link(link)
        cluster.restore_link(link)  # restored already: nothing more
        assert [argv[2] for _, argv in nodes.ran[2:]] == ["-L", "-D", "-D"]
        texts = {e.topic: e.text for e in cluster.events.snapshot() if isinstance(e, NoticeEvent)}
        assert texts["link_degraded"].startswith("the link between node-2 and node-3 cut")
        assert "packets dropped on node-2: 12 to node-3" in texts["link_restored"]


def test_a_link_left_degraded_is_restored_by_the_teardown(swarm):
    with make(swarm) as cluster:
        cluster.start_workers()
        cluster._node_loss = nodes = FakeNodes()
        cluster.degrade_link(1, 0, 30)
    assert [argv[2] for _, argv in nodes.ran] == ["-I", "-I", "-L", "-D", "-D"]
    assert nodes.ran[0][0] == "node-3"


def test_two_workers_on_one_node_have_no_link_between_them(swarm):
    swarm.node_list[:] = [node_attrs("node-1", "manager")]
    with make(swarm) as cluster:
        cluster.start_workers()
        cluster._node_loss = FakeNodes()
        with pytest.raises(InfrastructureError) as err:
            cluster.degrade_link(0, 1, 100)
    assert "both run on node-1" in err.value.message and "--nodes 3" in err.value.hint


def test_a_swarm_that_is_not_local_is_refused_naming_the_fault(swarm):
    with make(swarm) as cluster:
        cluster.start_workers()
        with pytest.raises(InfrastructureError) as err:
            cluster.degrade_link(0, 1, 100)
    assert "node_link" in err.value.message and "UDP 4789" in err.value.hint


def test_with_direct_traffic_the_proxy_has_no_links():
    assert Topology(2, direct=True).routes() == [] and len(Topology(2).routes()) == 2
