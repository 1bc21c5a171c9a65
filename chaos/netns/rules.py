"""Pure rule building for the packet faults: parameters in, argument lists out.

Everything here is a function of its arguments (no Docker, no kernel), so each
fault's rules and their undo are table-tested (tests/unit/netns).

Where the rules go: a fault owns two iptables chains in the worker's network
namespace, ``TFC-<tag>-I`` (hooked first in INPUT: packets *into* the worker,
``ingress``) and ``TFC-<tag>-O`` (first in OUTPUT: packets the worker sends,
``egress``), never on loopback. Undo unhooks, flushes and deletes exactly those
chains, so healing twice, or healing a half-applied fault, removes what is there
and nothing a user added. With netem (where the kernel has it) the fault owns
the root qdisc of the worker's interface (egress) and an ifb device that its
ingress traffic is redirected through.

Which implementation serves a fault (``plan_*``), by what the kernel has
(``Capabilities``, probed in the helper):

==================  ===============================  ===============================
fault               with netem                        without netem (this machine)
==================  ===============================  ===============================
packet_loss         netem loss (correlation)          iptables statistic DROP (no
                                                      correlation), else NFQUEUE
packet_corrupt      netem corrupt                     NFQUEUE: a bit flipped
packet_duplicate    netem duplicate                   NFQUEUE + raw socket (egress only)
packet_reorder      netem delay + reorder             NFQUEUE: held packets overtaken
packet_delay        netem delay/jitter/correlation    NFQUEUE: verdicts held
silent_drop         iptables DROP                     iptables DROP
syn_drop            iptables DROP --syn               iptables DROP --syn
mtu_blackhole       iptables length DROP              iptables length DROP
==================  ===============================  ===============================

A ``peer`` (only the traffic to/from one task) is a port match: every worker
reaches task j through the proxy's port for j, so worker i's connections to
task j are the ones to that port (egress: destination port; ingress: source
port). Connections task j opens *into* worker i arrive from the proxy on worker
i's own port, like every other task's, and cannot be told apart here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from chaos.errors import InfrastructureError

Direction = Literal["ingress", "egress", "both"]
Argv = tuple[str, ...]

# Packets the shaper sends itself (duplicates) carry this mark; its rule skips them.
SHAPER_MARK = 0x7FC4
MAX_PACKET = 65535


class PacketFaultUnsupported(InfrastructureError):
    """The kernel in the worker's namespace cannot serve a packet fault."""


@dataclass(frozen=True)
class Capabilities:
    """What the kernel (and the helper's tools) can do in a worker's namespace."""

    netem: bool = False  # tc qdisc netem
    statistic: bool = False  # iptables -m statistic
    nfqueue: bool = False  # iptables -j NFQUEUE and a userspace queue can bind
    length: bool = False  # iptables -m length
    ifb: bool = False  # ip link add type ifb (netem on ingress)
    iface: str = "eth0"  # the interface of the default route (the run's network)
    why: dict[str, str] = field(default_factory=dict, compare=False)  # capability -> what the probe saw

    @classmethod
    def from_probe(cls, text: str) -> Capabilities:
        """The JSON line ``chaos.netns.nfqueue probe`` prints (its last line)."""
        data = json.loads(text.strip().splitlines()[-1])
        return cls(
            **{k: data[k] for k in ("netem", "statistic", "nfqueue", "length", "ifb", "iface") if k in data},
            why=dict(data.get("why") or {}),
        )

    def describe(self) -> str:
        have = [k for k in ("netem", "statistic", "nfqueue", "length", "ifb") if getattr(self, k)]
        return "has " + (", ".join(have) or "none of netem, statistic, nfqueue, length, ifb")


@dataclass(frozen=True)
class Scope:
    """Which of the worker's packets a fault acts on."""

    direction: Direction = "both"
    peer_port: int | None = None  # only connections to/from the proxy port of one task

    def directions(self) -> list[str]:
        return ["ingress", "egress"] if self.direction == "both" else [self.direction]

    def match(self, direction: str, protocol: str | None = None) -> list[str]:
        """iptables match arguments for one direction."""
        args: list[str] = []
        proto = "tcp" if self.peer_port is not None else protocol
        if proto:
            args += ["-p", proto]
        if self.peer_port is not None:
            args += ["--sport" if direction == "ingress" else "--dport", str(self.peer_port)]
        return args


@dataclass(frozen=True)
class Shaping:
    """netem's vocabulary; the NFQUEUE shaper takes the same fields."""

    loss_pct: float = 0.0
    loss_correlation_pct: float = 0.0
    corrupt_pct: float = 0.0
    duplicate_pct: float = 0.0
    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    delay_correlation_pct: float = 0.0
    reorder_pct: float = 0.0

    def netem_args(self) -> list[str]:
        args: list[str] = []
        if self.delay_ms or self.reorder_pct:
            args += ["delay", _ms(self.delay_ms)]
            if self.jitter_ms:
                args += [_ms(self.jitter_ms)]
                if self.delay_correlation_pct:
                    args += [_pct(self.delay_correlation_pct)]
        if self.reorder_pct:
            args += ["reorder", _pct(self.reorder_pct)]
        if self.loss_pct:
            args += ["loss", _pct(self.loss_pct)]
            if self.loss_correlation_pct:
                args += [_pct(self.loss_correlation_pct)]
        if self.corrupt_pct:
            args += ["corrupt", _pct(self.corrupt_pct)]
        if self.duplicate_pct:
            args += ["duplicate", _pct(self.duplicate_pct)]
        return args

    def shaper_config(self) -> dict[str, float]:
        return {k: v for k, v in self.__dict__.items() if v}


def _ms(value: float) -> str:
    return f"{value:g}ms"


def _pct(value: float) -> str:
    return f"{value:g}%"


@dataclass(frozen=True)
class RulePlan:
    """How one fault is applied in one namespace, and undone."""

    fault: str
    implementation: str  # named in the fault's inject event: "iptables statistic", "nfqueue", "netem", ...
    apply: tuple[Argv, ...]
    undo: tuple[Argv, ...]  # each may fail (already gone): undo is best effort, in order
    shaper: dict[str, Any] | None = None  # the NFQUEUE shaper's config, when it runs

    def describe(self) -> str:
        return f"{self.fault} via {self.implementation}"


# --- iptables chains -----------------------------------------------------------

HOOKS = {"ingress": ("INPUT", "-i"), "egress": ("OUTPUT", "-o")}


def chain_name(tag: str, direction: str) -> str:
    return f"TFC-{tag}-{'I' if direction == 'ingress' else 'O'}"


def _hook(direction: str, chain: str) -> list[str]:
    builtin, flag = HOOKS[direction]
    return [builtin, "!", flag, "lo", "-j", chain]


def chains_plan(
    fault: str, implementation: str, tag: str, rules: dict[str, list[list[str]]], shaper: dict[str, Any] | None = None
) -> RulePlan:
    """A plan of one chain per direction with these rules (``{direction: [rule args]}``),
    after a first rule that matches every packet and does nothing: its counter is
    how many packets went that way while the fault was on (chaos.faults.packet
    reports the others' against it)."""
    apply: list[Argv] = []
    undo: list[Argv] = []
    for direction in ("ingress", "egress"):
        if direction not in rules:
            continue
        chain = chain_name(tag, direction)
        apply.append(("iptables", "-w", "-N", chain))
        apply.append(("iptables", "-w", "-A", chain))  # rule 1 only counts: every packet that direction
        for rule in rules[direction]:
            apply.append(("iptables", "-w", "-A", chain, *rule))
        hook = _hook(direction, chain)
        apply.append(("iptables", "-w", "-I", hook[0], "1", *hook[1:]))
        undo += [
            ("iptables", "-w", "-D", *_hook(direction, chain)),
            ("iptables", "-w", "-F", chain),
            ("iptables", "-w", "-X", chain),
        ]
    return RulePlan(fault, implementation, tuple(apply), tuple(undo), shaper)


def _require(fault: str, caps: Capabilities, what: str | tuple[str, ...], hint: str) -> None:
    """Raise unless the kernel has one of ``what``: the error names the fault,
    each missing capability with what the probe saw, and what to do."""
    wanted = (what,) if isinstance(what, str) else what
    if any(getattr(caps, w) for w in wanted):
        return
    missing = " or ".join(f"the {_KERNEL_NAMES[w]}" for w in wanted)
    seen = "; ".join(f"{w}: {caps.why[w]}" for w in wanted if caps.why.get(w))
    raise PacketFaultUnsupported(
        f"{fault} needs {missing} in the worker's network namespace, and this kernel has "
        f"{'neither' if len(wanted) > 1 else 'none'} ({caps.describe()}{'; ' + seen if seen else ''})",
        hint=hint,
    )


_KERNEL_NAMES = {
    "netem": "sch_netem qdisc",
    "statistic": "iptables statistic match (xt_statistic)",
    "nfqueue": "NFQUEUE target with a userspace queue (nfnetlink_queue)",
    "length": "iptables length match (xt_length)",
    "ifb": "ifb device",
}


# --- the faults ------------------------------------------------------------------


def plan_loss(tag: str, scope: Scope, percent: float, correlation_pct: float, caps: Capabilities) -> RulePlan:
    shaping = Shaping(loss_pct=percent, loss_correlation_pct=correlation_pct)
    if caps.netem and _netem_serves(scope, caps):
        return netem_plan("packet_loss", tag, scope, shaping, caps)
    if correlation_pct == 0 and caps.statistic:
        rule = ["-m", "statistic", "--mode", "random", "--probability", _probability(percent), "-j", "DROP"]
        return chains_plan(
            "packet_loss", "iptables statistic", tag, {d: [[*scope.match(d), *rule]] for d in scope.directions()}
        )
    if caps.nfqueue:
        return nfqueue_plan("packet_loss", tag, scope, shaping)
    _require(
        "packet_loss",
        caps,
        ("netem", "nfqueue") if correlation_pct else ("netem", "statistic", "nfqueue"),
        "without netem, loss with a correlation needs NFQUEUE (nfnetlink_queue); "
        "without correlation the statistic match (xt_statistic) serves it",
    )
    raise AssertionError("unreachable: _require raised")


def _probability(percent: float) -> str:
    return f"{percent / 100:.6f}"


def plan_shaping(fault: str, tag: str, scope: Scope, shaping: Shaping, caps: Capabilities) -> RulePlan:
    """corrupt, duplicate, reorder, delay: netem, else the NFQUEUE shaper."""
    if caps.netem and _netem_serves(scope, caps):
        return netem_plan(fault, tag, scope, shaping, caps)
    if fault == "packet_duplicate" and "ingress" in scope.directions():
        raise PacketFaultUnsupported(
            f"packet_duplicate on ingress needs the kernel's sch_netem qdisc with an ifb device "
            f"({caps.describe()}): without netem, duplicates are sent from the worker's namespace, so only "
            "its own packets (egress) can be duplicated",
            hint="use direction: egress (the worker's packets), or aim the fault at the peer that sends them",
        )
    _require(
        fault,
        caps,
        ("netem", "nfqueue"),
        "load sch_netem (`modprobe sch_netem`, package linux-modules-extra on some distributions) "
        "or nfnetlink_queue on the Docker host",
    )
    return nfqueue_plan(fault, tag, scope, shaping)


def _netem_serves(scope: Scope, caps: Capabilities) -> bool:
    """netem here acts on a whole interface: no peer filter, and ingress needs ifb."""
    return scope.peer_port is None and ("ingress" not in scope.directions() or caps.ifb)


def nfqueue_plan(fault: str, tag: str, scope: Scope, shaping: Shaping) -> RulePlan:
    queue = queue_number(tag)
    target = [
        "-m",
        "mark",
        "!",
        "--mark",
        f"{SHAPER_MARK:#x}",
        "-j",
        "NFQUEUE",
        "--queue-num",
        str(queue),
        "--queue-bypass",
    ]
    shaper = {"queue": queue, "mark": SHAPER_MARK, **shaping.shaper_config()}
    return chains_plan(fault, "nfqueue", tag, {d: [[*scope.match(d), *target]] for d in scope.directions()}, shaper)


def queue_number(tag: str) -> int:
    """A queue number per fault (from its tag): two faults never share a queue."""
    return 1000 + int(tag, 16) % 60000


def ifb_name(tag: str) -> str:
    return f"tfc{tag}"[:15]


def netem_plan(fault: str, tag: str, scope: Scope, shaping: Shaping, caps: Capabilities) -> RulePlan:
    iface, ifb = caps.iface, ifb_name(tag)
    netem = shaping.netem_args()
    apply: list[Argv] = []
    undo: list[Argv] = []
    if "egress" in scope.directions():
        apply.append(("tc", "qdisc", "add", "dev", iface, "root", "netem", *netem))
        undo.append(("tc", "qdisc", "del", "dev", iface, "root"))
    if "ingress" in scope.directions():
        apply += [
            ("ip", "link", "add", ifb, "type", "ifb"),
            ("ip", "link", "set", ifb, "up"),
            ("tc", "qdisc", "add", "dev", iface, "handle", "ffff:", "ingress"),
            (
                "tc",
                "filter",
                "add",
                "dev",
                iface,
                "parent",
                "ffff:",
                "matchall",
                "action",
                "mirred",
                "egress",
                "redirect",
                "dev",
                ifb,
            ),
            ("tc", "qdisc", "add", "dev", ifb, "root", "netem", *netem),
        ]
        undo += [("tc", "qdisc", "del", "dev", iface, "ingress"), ("ip", "link", "del", ifb)]
    return RulePlan(fault, "netem", tuple(apply), tuple(undo))


def plan_syn_drop(tag: str, scope: Scope) -> RulePlan:
    return chains_plan(
        "syn_drop", "iptables", tag, {d: [[*scope.match(d, "tcp"), "--syn", "-j", "DROP"]] for d in scope.directions()}
    )


@dataclass(frozen=True)
class SocketPair:
    """An established TCP connection as the worker's namespace sees it."""

    local: str
    local_port: int
    remote: str
    remote_port: int


def parse_ss(text: str) -> list[SocketPair]:
    """``ss -Htn state established`` (no header): ``Recv-Q Send-Q Local:Port Peer:Port``."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 4:
            continue
        local, remote = parts[-2], parts[-1]
        try:
            (lh, lp), (rh, rp) = local.rsplit(":", 1), remote.rsplit(":", 1)
            out.append(SocketPair(lh.strip("[]"), int(lp), rh.strip("[]"), int(rp)))
        except ValueError:
            continue
    return out


def plan_silent_drop(tag: str, scope: Scope, connections: list[SocketPair] | None) -> RulePlan:
    """DROP, no RST, no ICMP: the peers see a connection that goes quiet.

    ``connections``: only these (the ones open at the inject; new ones work);
    None: every TCP packet in scope (established and new alike).
    """
    if connections is not None and not [c for c in _in_scope(connections, scope) if not _loopback(c)]:
        raise PacketFaultUnsupported(
            "silent_drop found no open TCP connection in scope in the worker's namespace at the inject "
            f"({'none at all' if not connections else f'{len(connections)} open, none in scope'})",
            hint="fire it mid-training (at: {epoch: 2}), when TF's connections are open, "
            "or use connections: all to drop every TCP packet, new connections too",
        )
    rules: dict[str, list[list[str]]] = {}
    for d in scope.directions():
        if connections is None:
            rules[d] = [[*scope.match(d, "tcp"), "-j", "DROP"]]
            continue
        rules[d] = [_tuple_match(d, c) + ["-j", "DROP"] for c in _in_scope(connections, scope) if not _loopback(c)]
    return chains_plan("silent_drop", "iptables", tag, rules)


def _loopback(c: SocketPair) -> bool:
    return c.local.startswith("127.") or c.local == "::1"


def _in_scope(connections: Iterable[SocketPair], scope: Scope) -> list[SocketPair]:
    if scope.peer_port is None:
        return list(connections)
    return [c for c in connections if c.remote_port == scope.peer_port]


def _tuple_match(direction: str, c: SocketPair) -> list[str]:
    if direction == "ingress":
        return ["-p", "tcp", "-s", c.remote, "--sport", str(c.remote_port), "-d", c.local, "--dport", str(c.local_port)]
    return ["-p", "tcp", "-s", c.local, "--sport", str(c.local_port), "-d", c.remote, "--dport", str(c.remote_port)]


def plan_mtu_blackhole(tag: str, scope: Scope, max_bytes: int, caps: Capabilities) -> RulePlan:
    """Packets longer than ``max_bytes`` vanish, and so does any ICMP
    "fragmentation needed" that would tell the sender (a PMTU blackhole)."""
    _require(
        "mtu_blackhole",
        caps,
        "length",
        "the length match ships with every iptables; check the helper image (`chaos images status`)",
    )
    rules: dict[str, list[list[str]]] = {}
    for d in scope.directions():
        rules[d] = [[*scope.match(d), "-m", "length", "--length", f"{max_bytes + 1}:{MAX_PACKET}", "-j", "DROP"]]
    rules.setdefault("ingress", []).append(["-p", "icmp", "--icmp-type", "fragmentation-needed", "-j", "DROP"])
    return chains_plan("mtu_blackhole", "iptables length", tag, rules)


def leftovers(iptables_save: str, tc_qdiscs: str = "", links: str = "") -> list[str]:
    """What of ours is still in a namespace: chains, qdiscs, ifb devices (for the
    after-heal checks)."""
    left = [line for line in iptables_save.splitlines() if "TFC-" in line]
    left += [line for line in tc_qdiscs.splitlines() if " netem " in f" {line} " or "ingress ffff:" in line]
    left += [line for line in links.splitlines() if ": tfc" in line]
    return left
