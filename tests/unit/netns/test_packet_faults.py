"""The packet faults against a fake network namespace that keeps iptables
state (chains, hooks, rules) the way the kernel does, so each test asserts
what is *left in the namespace* after heal, not only which calls were made."""

import json

import pytest
from pydantic import ValidationError

from chaos.backends.abilities import UnsupportedVerb
from chaos.backends.docker.netns import DockerNetns
from chaos.errors import ChaosError, InfrastructureError
from chaos.faults import FAULTS
from chaos.faults.packet import (
    MtuBlackhole,
    PacketCorrupt,
    PacketDelay,
    PacketDuplicate,
    PacketLoss,
    PacketReorder,
    SilentDrop,
    SynDrop,
    peer_port,
)
from chaos.netns.rules import Capabilities, PacketFaultUnsupported
from chaos.topology import Topology

HERE = Capabilities(
    netem=False,
    statistic=True,
    nfqueue=True,
    length=True,
    ifb=True,
    iface="eth0",
    why={"netem": "Error: Specified qdisc kind is unknown."},
)


class FakeNetns:
    """iptables as a state machine; every helper verb recorded."""

    def __init__(self, caps=HERE, connections="", fail_on=None):
        self.caps = caps
        self.chains: dict[str, list[tuple]] = {}
        self.hooks: dict[str, list[str]] = {"INPUT": [], "OUTPUT": []}
        self.shapers: dict[int, dict] = {}
        self.closed = False
        self.calls: list = []
        self._connections = connections
        self.fail_on = fail_on  # an argv prefix that fails, like a broken kernel

    def capabilities(self):
        return self.caps

    def connections(self):
        return self._connections

    def try_run(self, argv):
        self.calls.append(tuple(argv))
        if self.fail_on and tuple(argv[: len(self.fail_on)]) == self.fail_on:
            return 1, "iptables: fake failure"
        cmd, args = argv[0], list(argv[1:])
        assert cmd == "iptables" and args[0] == "-w", argv
        op, rest = args[1], args[2:]
        if op == "-N":
            if rest[0] in self.chains:
                return 1, "Chain already exists"
            self.chains[rest[0]] = []
        elif op == "-A":
            if rest[0] not in self.chains:
                return 1, "No chain"
            self.chains[rest[0]].append(tuple(rest[1:]))
        elif op == "-I":
            target = rest[-1]
            if target not in self.chains:
                return 1, "No chain"
            self.hooks[rest[0]].insert(0, target)
        elif op == "-D":
            if rest[-1] not in self.hooks[rest[0]]:
                return 1, "Bad rule"
            self.hooks[rest[0]].remove(rest[-1])
        elif op == "-F":
            if rest[0] not in self.chains:
                return 1, "No chain"
            self.chains[rest[0]] = []
        elif op == "-X":
            if rest[0] not in self.chains or any(rest[0] in h for h in self.hooks.values()):
                return 1, "Too many links / no chain"
            del self.chains[rest[0]]
        return 0, ""

    def run(self, argv):
        code, out = self.try_run(argv)
        if code:
            raise InfrastructureError(f"`{' '.join(argv)}` failed: {out}", hint="fake")
        return out

    def run_all(self, argvs):
        for argv in argvs:
            self.run(argv)

    def try_all(self, argvs):
        for argv in argvs:
            self.try_run(argv)

    def counters(self, chains):
        """Rule 1 (the counting rule) saw 70 packets, every other rule matched 7."""
        return {
            f"{c} {i}": 70 if i == 1 else 7
            for c in chains
            if c in self.chains
            for i in range(1, len(self.chains[c]) + 1)
        }

    def start_shaper(self, config):
        self.shapers[config["queue"]] = config

    def stop_shaper(self, queue):
        self.shapers.pop(queue)
        return {"seen": 100, "corrupted": 5, "held": 0}

    def close(self):
        self.closed = True

    def left(self):
        return {
            "chains": sorted(self.chains),
            "hooks": {k: v for k, v in self.hooks.items() if v},
            "shapers": sorted(self.shapers),
        }


class Cluster:
    def __init__(self, netns, num_slots=2):
        self.num_slots = num_slots
        self.netns_made = []
        self._netns = netns
        self.events = []

    def netns(self, index):
        self.netns_made.append(index)
        return self._netns

    def tf_config(self, index):
        return Topology(self.num_slots).tf_config(index)

    def record(self, event):
        self.events.append(event)


CLEAN = {"chains": [], "hooks": {}, "shapers": []}

FAULTS_HERE = [
    (PacketLoss(worker=1, percent=5), "iptables statistic"),
    (PacketLoss(worker=1, percent=5, correlation_pct=50), "nfqueue"),
    (PacketCorrupt(worker=1, percent=1), "nfqueue"),
    (PacketDuplicate(worker=1, percent=1), "nfqueue"),
    (PacketReorder(worker=1, percent=25), "nfqueue"),
    (PacketDelay(worker=1, delay_ms=50, jitter_ms=5), "nfqueue"),
    (SilentDrop(worker=1), "iptables"),
    (SilentDrop(worker=1, connections="all", direction="egress"), "iptables"),
    (SynDrop(worker=1), "iptables"),
    (MtuBlackhole(worker=1, max_bytes=1200), "iptables length"),
]
SS = "0 0 172.30.0.3:23601 172.30.0.2:40122\n0 0 172.30.0.3:51234 172.30.0.2:23600\n"


@pytest.mark.parametrize("fault, implementation", FAULTS_HERE, ids=lambda v: getattr(v, "name", v))
def test_each_fault_applies_its_rules_names_its_implementation_and_heals_to_nothing(fault, implementation):
    ns = FakeNetns(connections=SS)
    cluster = Cluster(ns)
    undo = fault.inject(cluster)
    assert cluster.netns_made == [1]
    assert ns.chains and all(rules for rules in ns.chains.values() if rules)
    hooked = [c for h in ns.hooks.values() for c in h]
    assert sorted(hooked) == sorted(ns.chains)
    assert fault.inject_event(0.0).params["implementation"] == implementation
    assert bool(ns.shapers) == (implementation == "nfqueue")
    undo(cluster)
    assert ns.left() == CLEAN and ns.closed
    (notice,) = cluster.events
    assert notice.topic == "packet_fault" and implementation in notice.text
    assert "7 of 70 packets" in notice.text or "14 of 70 packets" in notice.text, notice.text
    undo(cluster)  # undoing twice does nothing more
    assert ns.left() == CLEAN and len(cluster.events) == 1
    assert fault.inject_event(0.0).params["implementation"] == implementation  # still named after the undo


def test_the_undo_of_a_half_done_inject_removes_what_got_in():
    from chaos.faults.undo import Undo

    ns = FakeNetns(fail_on=("iptables", "-w", "-I", "OUTPUT"))
    cluster = Cluster(ns)
    fault = PacketLoss(worker=0, percent=5)
    undo = Undo()  # the runner passes its own: an inject that raises is undone as far as it got
    with pytest.raises(InfrastructureError):
        fault.inject(cluster, undo)
    assert ns.chains  # the ingress chain got in before the failure
    ns.fail_on = None
    undo(cluster)
    assert ns.left() == CLEAN and ns.closed


def test_the_heal_of_the_old_protocol_does_nothing_to_a_packet_fault():
    ns = FakeNetns()
    cluster = Cluster(ns)
    SynDrop(worker=0).heal(cluster)
    assert ns.calls == [] and cluster.netns_made == []


def test_a_fault_the_kernel_cannot_serve_is_refused_before_any_rule_and_its_helper_goes():
    from chaos.faults.undo import Undo

    ns = FakeNetns(caps=Capabilities(iface="eth0", why={"netem": "Specified qdisc kind is unknown."}))
    cluster = Cluster(ns)
    fault = PacketCorrupt(worker=1, percent=1)
    undo = Undo()
    with pytest.raises(PacketFaultUnsupported) as err:
        fault.inject(cluster, undo)
    assert "packet_corrupt" in err.value.message and "netem" in err.value.message and err.value.hint
    assert ns.calls == []
    undo(cluster)
    assert ns.closed


def test_the_peer_is_the_proxy_port_of_that_worker():
    ns = FakeNetns()
    fault = SynDrop(worker=0, peer=2, direction="egress")
    fault.inject(Cluster(ns, num_slots=3))
    (counting, rule) = next(iter(ns.chains.values()))
    assert counting == ()
    assert "--dport" in rule and rule[rule.index("--dport") + 1] == "23602"
    assert fault.inject_event(0).params["peer"] == 2


@pytest.mark.parametrize("peer", [0, 5])
def test_a_peer_that_is_the_worker_itself_or_not_in_the_cluster_is_refused_with_the_valid_ones(peer):
    with pytest.raises(ChaosError) as err:
        PacketLoss(worker=0, percent=5, peer=peer).inject(Cluster(FakeNetns()))
    assert "valid: 1" in err.value.message


def test_peer_port_reads_every_tasks_port_from_tf_config():
    parameter_servers = Topology(2, num_ps=1)
    assert [peer_port(parameter_servers.tf_config(0), slot) for slot in range(4)] == [23600, 23601, 23602, 23603]


def test_a_cluster_without_network_namespaces_is_refused_by_type_before_the_fault_acts():
    class NoNetns:
        num_slots = 2

    with pytest.raises(UnsupportedVerb) as err:
        PacketLoss(worker=0, percent=5).inject(NoNetns())
    assert "packet_loss needs netns" in err.value.message and "NoNetns" in err.value.message and err.value.hint


@pytest.mark.parametrize(
    "make, field",
    [
        (lambda: PacketLoss(worker=0, percent=0), "percent"),
        (lambda: PacketLoss(worker=0, percent=101), "percent"),
        (lambda: PacketLoss(worker=0, percent=5, direction="sideways"), "direction"),
        (lambda: PacketReorder(worker=0, percent=25, delay_ms=0), "delay_ms"),
        (lambda: MtuBlackhole(worker=0, max_bytes=20), "max_bytes"),
        (lambda: SilentDrop(worker=0, connections="some"), "connections"),
    ],
)
def test_bad_parameters_are_refused_naming_the_field(make, field):
    with pytest.raises(ValidationError) as err:
        make()
    assert field in str(err.value)


def test_every_packet_fault_is_registered_and_asks_for_the_helper_image():
    names = [
        "packet_loss",
        "packet_corrupt",
        "packet_duplicate",
        "packet_reorder",
        "packet_delay",
        "silent_drop",
        "syn_drop",
        "mtu_blackhole",
    ]
    for name in names:
        assert name in FAULTS and FAULTS.get(name).needs_netns_helper


def test_the_inject_event_before_an_inject_has_no_implementation_and_no_peer():
    params = PacketLoss(worker=0, percent=5).inject_event(0).params
    assert "implementation" not in params and "peer" not in params
    assert json.dumps(params)


@pytest.mark.parametrize("implementation", [FakeNetns, DockerNetns], ids=lambda c: c.__name__)
def test_the_fake_and_the_docker_helper_both_serve_every_verb_of_the_seam(implementation):
    import inspect

    from chaos.netns.access import Netns

    verbs = {n: inspect.signature(v) for n, v in vars(Netns).items() if callable(v) and not n.startswith("_")}
    assert verbs
    for name, wanted in verbs.items():
        given = inspect.signature(getattr(implementation, name))
        assert list(given.parameters)[: len(wanted.parameters)] == list(wanted.parameters), name
