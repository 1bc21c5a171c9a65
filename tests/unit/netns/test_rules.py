"""Rule building for the packet faults (chaos.netns.rules): parameters in,
argument lists out, table by table; the implementation chosen per kernel; the
errors when a kernel cannot serve a fault."""

import json

import pytest

from chaos.netns import rules
from chaos.netns.rules import Capabilities, PacketFaultUnsupported, Scope, Shaping, SocketPair

NO_NETEM = Capabilities(netem=False, statistic=True, nfqueue=True, length=True, ifb=True, iface="eth0")
NETEM = Capabilities(netem=True, statistic=True, nfqueue=True, length=True, ifb=True, iface="eth0")
BARE = Capabilities(iface="eth0", why={"netem": "Specified qdisc kind is unknown"})


def rules_of(plan, chain):
    """The rule arguments appended to one chain, in order, after its counting rule."""
    appended = [list(a[4:]) for a in plan.apply if a[:4] == ("iptables", "-w", "-A", chain)]
    assert not appended or appended[0] == [], f"{chain}: the first rule only counts"
    return appended[1:]


def hooks_of(plan):
    return [
        list(a[3:])
        for a in plan.apply
        if a[:4] in (("iptables", "-w", "-I", "INPUT"), ("iptables", "-w", "-I", "OUTPUT"))
    ]


LOSS_TABLE = [
    # direction, peer port, percent -> (chain, expected rule)
    (
        "ingress",
        None,
        5,
        {"TFC-abc123-I": [["-m", "statistic", "--mode", "random", "--probability", "0.050000", "-j", "DROP"]]},
    ),
    (
        "egress",
        None,
        1,
        {"TFC-abc123-O": [["-m", "statistic", "--mode", "random", "--probability", "0.010000", "-j", "DROP"]]},
    ),
    (
        "both",
        23601,
        20,
        {
            "TFC-abc123-I": [
                [
                    "-p",
                    "tcp",
                    "--sport",
                    "23601",
                    "-m",
                    "statistic",
                    "--mode",
                    "random",
                    "--probability",
                    "0.200000",
                    "-j",
                    "DROP",
                ]
            ],
            "TFC-abc123-O": [
                [
                    "-p",
                    "tcp",
                    "--dport",
                    "23601",
                    "-m",
                    "statistic",
                    "--mode",
                    "random",
                    "--probability",
                    "0.200000",
                    "-j",
                    "DROP",
                ]
            ],
        },
    ),
]


@pytest.mark.parametrize("direction, port, percent, chains", LOSS_TABLE)
def test_loss_without_netem_is_a_statistic_drop_per_direction(direction, port, percent, chains):
    plan = rules.plan_loss("abc123", Scope(direction, port), percent, 0, NO_NETEM)
    assert plan.implementation == "iptables statistic"
    assert {c: rules_of(plan, c) for c in chains} == chains
    made = [a[3] for a in plan.apply if a[2] == "-N"]
    assert sorted(made) == sorted(chains)
    # each chain hooked first in its builtin, never on loopback
    for hook in hooks_of(plan):
        assert hook[1] == "1" and hook[2:5] in (["!", "-i", "lo"], ["!", "-o", "lo"])
        assert hook[0] == ("INPUT" if hook[-1].endswith("-I") else "OUTPUT")


def test_undo_unhooks_flushes_and_deletes_each_chain_in_that_order():
    plan = rules.plan_loss("abc123", Scope("both"), 5, 0, NO_NETEM)
    assert list(plan.undo) == [
        ("iptables", "-w", "-D", "INPUT", "!", "-i", "lo", "-j", "TFC-abc123-I"),
        ("iptables", "-w", "-F", "TFC-abc123-I"),
        ("iptables", "-w", "-X", "TFC-abc123-I"),
        ("iptables", "-w", "-D", "OUTPUT", "!", "-o", "lo", "-j", "TFC-abc123-O"),
        ("iptables", "-w", "-F", "TFC-abc123-O"),
        ("iptables", "-w", "-X", "TFC-abc123-O"),
    ]


IMPLEMENTATION_TABLE = [
    # fault, how, caps -> implementation
    ("loss", {"percent": 5}, NETEM, "netem"),
    ("loss", {"percent": 5}, NO_NETEM, "iptables statistic"),
    ("loss", {"percent": 5, "correlation": 25}, NO_NETEM, "nfqueue"),
    ("loss", {"percent": 5, "peer": 23601}, NETEM, "iptables statistic"),  # netem acts on a whole interface
    ("corrupt", {}, NETEM, "netem"),
    ("corrupt", {}, NO_NETEM, "nfqueue"),
    ("delay", {}, NO_NETEM, "nfqueue"),
    ("reorder", {}, NO_NETEM, "nfqueue"),
    ("duplicate", {"direction": "egress"}, NO_NETEM, "nfqueue"),
    ("duplicate", {"direction": "both"}, NETEM, "netem"),
]


def _plan(kind, how, caps):
    scope = Scope(how.get("direction", "both"), how.get("peer"))
    if kind == "loss":
        return rules.plan_loss("0000aa", scope, how["percent"], how.get("correlation", 0), caps)
    shaping = {
        "corrupt": Shaping(corrupt_pct=5),
        "delay": Shaping(delay_ms=50),
        "reorder": Shaping(reorder_pct=25, delay_ms=10),
        "duplicate": Shaping(duplicate_pct=5),
    }[kind]
    return rules.plan_shaping(f"packet_{kind}", "0000aa", scope, shaping, caps)


@pytest.mark.parametrize("kind, how, caps, implementation", IMPLEMENTATION_TABLE)
def test_the_implementation_follows_what_the_kernel_has(kind, how, caps, implementation):
    assert _plan(kind, how, caps).implementation == implementation


NETEM_ARGS = [
    (Shaping(loss_pct=5), ["loss", "5%"]),
    (Shaping(loss_pct=5, loss_correlation_pct=25), ["loss", "5%", "25%"]),
    (Shaping(corrupt_pct=0.5), ["corrupt", "0.5%"]),
    (Shaping(duplicate_pct=1), ["duplicate", "1%"]),
    (Shaping(delay_ms=100, jitter_ms=10, delay_correlation_pct=25), ["delay", "100ms", "10ms", "25%"]),
    (Shaping(delay_ms=10, reorder_pct=25), ["delay", "10ms", "reorder", "25%"]),
]


@pytest.mark.parametrize("shaping, args", NETEM_ARGS)
def test_netem_arguments_speak_netems_vocabulary(shaping, args):
    assert shaping.netem_args() == args


def test_netem_on_ingress_goes_through_an_ifb_device_and_undo_removes_both():
    plan = rules.netem_plan("packet_delay", "0000aa", Scope("both"), Shaping(delay_ms=50), NETEM)
    assert ("tc", "qdisc", "add", "dev", "eth0", "root", "netem", "delay", "50ms") in plan.apply
    assert ("ip", "link", "add", "tfc0000aa", "type", "ifb") in plan.apply
    assert ("tc", "qdisc", "add", "dev", "tfc0000aa", "root", "netem", "delay", "50ms") in plan.apply
    assert set(plan.undo) == {
        ("tc", "qdisc", "del", "dev", "eth0", "root"),
        ("tc", "qdisc", "del", "dev", "eth0", "ingress"),
        ("ip", "link", "del", "tfc0000aa"),
    }


def test_nfqueue_rules_skip_the_shapers_own_packets_and_bypass_a_dead_shaper():
    plan = rules.plan_shaping("packet_corrupt", "0000aa", Scope("ingress"), Shaping(corrupt_pct=5), NO_NETEM)
    (rule,) = rules_of(plan, "TFC-0000aa-I")
    queue = str(rules.queue_number("0000aa"))
    assert rule == [
        "-m",
        "mark",
        "!",
        "--mark",
        hex(rules.SHAPER_MARK),
        "-j",
        "NFQUEUE",
        "--queue-num",
        queue,
        "--queue-bypass",
    ]
    assert plan.shaper == {"queue": int(queue), "mark": rules.SHAPER_MARK, "corrupt_pct": 5}


def test_two_faults_never_share_a_queue_or_a_chain():
    a, b = (
        rules.plan_shaping("packet_delay", tag, Scope("egress"), Shaping(delay_ms=5), NO_NETEM)
        for tag in ("00a0b0", "00a0b1")
    )
    assert a.shaper["queue"] != b.shaper["queue"]
    assert {x[3] for x in a.apply if x[2] == "-N"}.isdisjoint({x[3] for x in b.apply if x[2] == "-N"})


UNSUPPORTED = [
    # what, caps -> words the error must carry
    (lambda: _plan("corrupt", {}, BARE), ["packet_corrupt", "NFQUEUE", "Specified qdisc kind is unknown"]),
    (lambda: _plan("loss", {"percent": 5}, BARE), ["packet_loss", "statistic"]),
    (lambda: _plan("duplicate", {"direction": "ingress"}, NO_NETEM), ["packet_duplicate", "ingress", "netem"]),
    (lambda: rules.plan_mtu_blackhole("0000aa", Scope("both"), 1400, BARE), ["mtu_blackhole", "length"]),
]


@pytest.mark.parametrize("make, words", UNSUPPORTED)
def test_a_fault_the_kernel_cannot_serve_is_an_error_naming_the_fault_what_is_missing_and_a_hint(make, words):
    with pytest.raises(PacketFaultUnsupported) as err:
        make()
    for word in words:
        assert word in err.value.message
    assert err.value.hint


def test_syn_drop_matches_only_new_connections():
    plan = rules.plan_syn_drop("0000aa", Scope("both"))
    assert rules_of(plan, "TFC-0000aa-I") == [["-p", "tcp", "--syn", "-j", "DROP"]]
    assert rules_of(plan, "TFC-0000aa-O") == [["-p", "tcp", "--syn", "-j", "DROP"]]


SS = """0      0      172.30.0.3:23601  172.30.0.2:40122
0      0      172.30.0.3:51234  172.30.0.2:23600
0      0      127.0.0.1:8000    127.0.0.1:50000
0      0      [::ffff:172.30.0.3]:23601 [::ffff:172.30.0.2]:40130
garbage
"""


def test_ss_lines_become_connections():
    found = rules.parse_ss(SS)
    assert found[0] == SocketPair("172.30.0.3", 23601, "172.30.0.2", 40122)
    assert found[3] == SocketPair("::ffff:172.30.0.3", 23601, "::ffff:172.30.0.2", 40130)
    assert len(found) == 4


def test_silent_drop_of_open_connections_drops_exactly_their_four_tuples_both_ways_and_not_loopback():
    found = rules.parse_ss(SS)[:3]
    plan = rules.plan_silent_drop("0000aa", Scope("both"), found)
    assert rules_of(plan, "TFC-0000aa-I") == [
        ["-p", "tcp", "-s", "172.30.0.2", "--sport", "40122", "-d", "172.30.0.3", "--dport", "23601", "-j", "DROP"],
        ["-p", "tcp", "-s", "172.30.0.2", "--sport", "23600", "-d", "172.30.0.3", "--dport", "51234", "-j", "DROP"],
    ]
    assert rules_of(plan, "TFC-0000aa-O")[1] == [
        "-p",
        "tcp",
        "-s",
        "172.30.0.3",
        "--sport",
        "51234",
        "-d",
        "172.30.0.2",
        "--dport",
        "23600",
        "-j",
        "DROP",
    ]


def test_silent_drop_with_a_peer_keeps_only_the_connections_to_its_port():
    plan = rules.plan_silent_drop("0000aa", Scope("egress", 23600), rules.parse_ss(SS))
    assert rules_of(plan, "TFC-0000aa-O") == [
        ["-p", "tcp", "-s", "172.30.0.3", "--sport", "51234", "-d", "172.30.0.2", "--dport", "23600", "-j", "DROP"]
    ]


def test_silent_drop_with_no_open_connection_in_scope_says_when_to_fire_it():
    with pytest.raises(PacketFaultUnsupported) as err:
        rules.plan_silent_drop("0000aa", Scope("both"), rules.parse_ss("0 0 127.0.0.1:1 127.0.0.1:2\n"))
    assert "no open TCP connection" in err.value.message and "connections: all" in err.value.hint


def test_silent_drop_of_all_connections_drops_every_tcp_packet_in_scope():
    plan = rules.plan_silent_drop("0000aa", Scope("ingress"), None)
    assert rules_of(plan, "TFC-0000aa-I") == [["-p", "tcp", "-j", "DROP"]]
    assert rules_of(plan, "TFC-0000aa-O") == []


def test_mtu_blackhole_drops_what_is_longer_and_the_icmp_that_would_tell():
    plan = rules.plan_mtu_blackhole("0000aa", Scope("egress"), 1400, NO_NETEM)
    assert rules_of(plan, "TFC-0000aa-O") == [["-m", "length", "--length", "1401:65535", "-j", "DROP"]]
    assert rules_of(plan, "TFC-0000aa-I") == [["-p", "icmp", "--icmp-type", "fragmentation-needed", "-j", "DROP"]]


def test_capabilities_come_from_the_probes_last_line():
    probe = "a log line\n" + json.dumps(
        {
            "netem": False,
            "ifb": True,
            "statistic": True,
            "length": True,
            "nfqueue": True,
            "iface": "eth0",
            "why": {"netem": "Specified qdisc kind is unknown."},
        }
    )
    caps = Capabilities.from_probe(probe)
    assert (caps.netem, caps.statistic, caps.nfqueue, caps.iface) == (False, True, True, "eth0")
    assert caps.describe() == "has statistic, nfqueue, length, ifb"


LEFT = [
    ("-A INPUT ! -i lo -j TFC-0000aa-I\n:TFC-0000aa-I - [0:0]\n", "", "", 2),
    ("-A INPUT -j DOCKER\n", "qdisc noqueue 0: root refcnt 2\n", "1: lo: <LOOPBACK>\n", 0),
    ("", "qdisc netem 8001: root refcnt 2 limit 1000 delay 50ms\n", "5: tfc0000aa: <BROADCAST>\n", 2),
]


@pytest.mark.parametrize("saved, qdiscs, links, count", LEFT)
def test_leftovers_are_our_chains_qdiscs_and_ifb_devices_only(saved, qdiscs, links, count):
    assert len(rules.leftovers(saved, qdiscs, links)) == count


def test_the_probe_takes_the_interface_toward_the_proxy_not_the_default_route(monkeypatch):
    """A swarm task: the overlay is eth0, the default route goes by the docker_gwbridge (eth1)."""
    from chaos.netns import nfqueue

    routes = {
        ("ip", "-o", "route", "get", "10.0.3.7"): "10.0.3.7 dev eth0 src 10.0.3.2 uid 0",
        ("ip", "-o", "route", "show", "default"): "default via 172.18.0.1 dev eth1",
    }
    monkeypatch.setattr(nfqueue, "_run", lambda argv: (True, routes[tuple(argv)]))
    monkeypatch.setattr(nfqueue.socket, "getaddrinfo", lambda host, *a: [(2, 1, 6, "", ("10.0.3.7", 0))])
    assert nfqueue.route_device("proxy") == "eth0"

    def unknown(host, *a):
        raise OSError("Name or service not known")

    monkeypatch.setattr(nfqueue.socket, "getaddrinfo", unknown)
    assert nfqueue.route_device("proxy") == "eth1"  # no such name: the default route's
    assert nfqueue.route_device(None) == "eth1"
