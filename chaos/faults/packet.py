"""Packet-level faults in a worker's own network namespace (issue 26).

The proxy's faults act on *streams* (it terminates TCP on both sides); these act
on the *packets* of the worker's own TCP connections, so the kernel's TCP sees
the loss, the corruption, the duplicate, the silence. Each fault runs a helper
container in the worker's namespace (``cluster.netns(index)``: NET_ADMIN there
only, chaos.backends.docker.netns), probes what the kernel can do, picks its
implementation (chaos.netns.rules: netem where the kernel has it, else
iptables' statistic match or the NFQUEUE shaper), applies its rules, and names
the implementation in its inject event (``params.implementation``). Its undo
(chaos.faults.undo, added step by step as it acts, so a half-done inject is undone
as far as it got) removes exactly its own rules, stops the shaper, records what
the rules did (packets dropped, corrupted, ...) as a notice, and removes the helper.

A restarted worker is a new container with a fresh namespace: a fault still
active then does not follow it (like a pod's NetworkChaos, it was applied to
the pod that was).
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any, ClassVar, Literal

from pydantic import Field, PrivateAttr

from chaos.backends.abilities import NamespacesAhead, PacketNamespaces
from chaos.errors import InfrastructureError
from chaos.events import RUNNER, NoticeEvent
from chaos.faults.base import WorkerFault, WorkerIndex, register_fault
from chaos.faults.undo import Undo
from chaos.netns import rules
from chaos.netns.rules import Capabilities, RulePlan, Scope, Shaping

DIRECTION_DOC = "ingress: packets into the worker; egress: packets it sends; both"
PEER_DOC = (
    "only this worker's connections to that worker (index), through the proxy's port for it; "
    "none: all of the worker's traffic"
)


class PacketFault(WorkerFault):
    """Base of the faults applied in a worker's network namespace."""

    needs_netns_helper: ClassVar[bool] = True  # the runner builds the helper image for it
    uses_abilities: ClassVar[tuple[type, ...]] = (PacketNamespaces,)

    direction: Literal["ingress", "egress", "both"] = Field("both", description=DIRECTION_DOC)
    peer: WorkerIndex | None = Field(None, description=PEER_DOC)
    # The implementation the inject chose (the inject event names it); the undo is the inject's.
    _state: dict[str, Any] = PrivateAttr(default_factory=dict)

    def plan(self, tag: str, scope: Scope, caps: Capabilities, ns: Any) -> RulePlan:
        raise NotImplementedError

    def scope(self, cluster: Any) -> Scope:
        if self.peer is None:
            return Scope(self.direction)
        if self.peer == self.worker or self.peer >= cluster.num_slots:
            raise InfrastructureError(
                f"{self.name}: peer {self.peer} is not another worker of this cluster "
                f"(worker {self.worker}; valid: {', '.join(str(i) for i in range(cluster.num_slots) if i != self.worker)})",
                hint="give the index of another worker, or leave peer out for all of the worker's traffic",
            )
        return Scope(self.direction, peer_port(cluster.tf_config(self.worker), self.peer))

    def prepare(self, cluster: Any) -> None:
        """Its helper started ahead in the worker's namespace (and the kernel
        probed): the inject is then one exec, where starting a helper took
        seconds on a loaded machine and a fault at an epoch's end landed after
        the epoch it was meant for had finished."""
        if isinstance(cluster, NamespacesAhead):
            cluster.netns_ahead(self.worker)

    def act(self, cluster: Any, undo: Undo) -> None:
        scope = self.scope(cluster)
        ns = cluster.netns(self.worker)
        # Undone last to first: the rules (their counters read first), the shaper,
        # the notice of what reached traffic, the helper.
        undo.add(lambda c: ns.close())
        seen: dict[str, Any] = {}
        caps = ns.capabilities()
        plan = self.plan(secrets.token_hex(3), scope, caps, ns)
        self._state["implementation"] = plan.implementation  # named in the inject event
        undo.add(lambda c: _record(c, self, plan, seen.get("counted", {}), seen.get("stats")))
        if plan.shaper is not None:
            queue = plan.shaper["queue"]
            undo.add(lambda c: seen.__setitem__("stats", ns.stop_shaper(queue)))
            ns.start_shaper(plan.shaper)

        def unapply(c: Any) -> None:
            seen["counted"] = ns.counters(_chains(plan))
            ns.try_all(plan.undo)  # each may be gone already (a half-done inject)

        undo.add(unapply)
        ns.run_all(plan.apply)

    def params(self) -> dict[str, Any]:
        data = super().params()
        if data.get("peer") is None:
            data.pop("peer", None)
        if "implementation" in self._state:
            data["implementation"] = self._state["implementation"]
        return data


def peer_port(tf_config: str, peer: int) -> int:
    """The proxy port of task ``peer`` (slot order: every task's entry is the
    proxy at base port + slot, chaos.topology)."""
    cluster = json.loads(tf_config)["cluster"]
    ports = sorted(int(entry.rsplit(":", 1)[1]) for entries in cluster.values() for entry in entries)
    return ports[peer]


def _chains(plan: RulePlan) -> list[str]:
    return sorted({argv[3] for argv in plan.apply if argv[:3] == ("iptables", "-w", "-N")})


def _record(cluster: Any, fault: PacketFault, plan: RulePlan, counted: dict[str, int], stats: dict | None) -> None:
    """What the fault did to real packets: the Chaos Toolkit lesson (a fault that
    never reached traffic makes every check pass)."""
    parts = []
    for chain in sorted({key.rsplit(" ", 1)[0] for key in counted}):
        seen = counted.get(f"{chain} 1", 0)  # the counting rule (chaos.netns.rules.chains_plan)
        matched = sum(v for k, v in counted.items() if k.startswith(chain + " ") and k != f"{chain} 1")
        way = "ingress" if chain.endswith("-I") else "egress"
        parts.append(f"{way}: {matched} of {seen} packets matched")
    if stats:
        parts.append("shaper " + ", ".join(f"{k} {v}" for k, v in stats.items() if k != "held"))
    record = getattr(cluster, "record", None)
    if record is not None and parts:
        record(
            NoticeEvent(
                t=time.time(),
                source=RUNNER,
                topic="packet_fault",
                text=f"{fault.name} on {fault.target} via {plan.implementation}: {'; '.join(parts)}",
            )
        )


@register_fault
class PacketLoss(PacketFault):
    """Drop a share of the worker's packets (its kernel's TCP retransmits them)."""

    name: ClassVar[str] = "packet_loss"
    percent: float = Field(gt=0, le=100, description="share of packets dropped, percent")
    correlation_pct: float = Field(
        0.0,
        ge=0,
        lt=100,
        description="how much a loss makes the next one likelier, percent (bursts at the same average rate; "
        "needs netem or NFQUEUE)",
    )

    def plan(self, tag: str, scope: Scope, caps: Capabilities, ns: Any) -> RulePlan:
        return rules.plan_loss(tag, scope, self.percent, self.correlation_pct, caps)


@register_fault
class PacketCorrupt(PacketFault):
    """Flip one bit in a share of the worker's packets (past the IP header: the TCP checksum should catch it)."""

    name: ClassVar[str] = "packet_corrupt"
    percent: float = Field(gt=0, le=100, description="share of packets corrupted, percent")

    def plan(self, tag: str, scope: Scope, caps: Capabilities, ns: Any) -> RulePlan:
        return rules.plan_shaping(self.name, tag, scope, Shaping(corrupt_pct=self.percent), caps)


@register_fault
class PacketDuplicate(PacketFault):
    """Send a share of the worker's packets twice."""

    name: ClassVar[str] = "packet_duplicate"
    direction: Literal["ingress", "egress", "both"] = Field(
        "egress", description=DIRECTION_DOC + " (without netem: egress only)"
    )
    percent: float = Field(gt=0, le=100, description="share of packets duplicated, percent")

    def plan(self, tag: str, scope: Scope, caps: Capabilities, ns: Any) -> RulePlan:
        return rules.plan_shaping(self.name, tag, scope, Shaping(duplicate_pct=self.percent), caps)


@register_fault
class PacketReorder(PacketFault):
    """Reorder the worker's packets: all are held delay_ms except a share that leaves at once and overtakes them."""

    name: ClassVar[str] = "packet_reorder"
    percent: float = Field(gt=0, le=100, description="share of packets sent at once (ahead of the held ones), percent")
    delay_ms: float = Field(10.0, gt=0, le=10_000, description="how long the other packets are held, milliseconds")

    def plan(self, tag: str, scope: Scope, caps: Capabilities, ns: Any) -> RulePlan:
        return rules.plan_shaping(
            self.name, tag, scope, Shaping(reorder_pct=self.percent, delay_ms=self.delay_ms), caps
        )


@register_fault
class PacketDelay(PacketFault):
    """Delay each of the worker's packets by delay_ms ± jitter_ms (in its kernel, under its TCP)."""

    name: ClassVar[str] = "packet_delay"
    delay_ms: float = Field(gt=0, le=60_000, description="added delay per packet, milliseconds")
    jitter_ms: float = Field(0.0, ge=0, le=60_000, description="random ± variation, milliseconds")
    correlation_pct: float = Field(
        0.0, ge=0, lt=100, description="how much one packet's jitter follows the last's, percent"
    )

    def plan(self, tag: str, scope: Scope, caps: Capabilities, ns: Any) -> RulePlan:
        shaping = Shaping(delay_ms=self.delay_ms, jitter_ms=self.jitter_ms, delay_correlation_pct=self.correlation_pct)
        return rules.plan_shaping(self.name, tag, scope, shaping, caps)


@register_fault
class SilentDrop(PacketFault):
    """Drop the worker's TCP packets without a FIN, RST or ICMP: its connections go silent (half-open)."""

    name: ClassVar[str] = "silent_drop"
    connections: Literal["open", "all"] = Field(
        "open",
        description="open: only the connections open at the inject (new ones work); all: every TCP packet "
        "in scope, new connections too",
    )

    def plan(self, tag: str, scope: Scope, caps: Capabilities, ns: Any) -> RulePlan:
        if self.connections == "all":
            return rules.plan_silent_drop(tag, scope, None)
        found = rules.parse_ss(ns.connections())
        return rules.plan_silent_drop(tag, scope, found)


@register_fault
class SynDrop(PacketFault):
    """Drop new TCP connections' SYNs: connects time out, open connections go on."""

    name: ClassVar[str] = "syn_drop"

    def plan(self, tag: str, scope: Scope, caps: Capabilities, ns: Any) -> RulePlan:
        return rules.plan_syn_drop(tag, scope)


@register_fault
class MtuBlackhole(PacketFault):
    """Drop the worker's packets above max_bytes and any ICMP 'fragmentation needed': a path-MTU blackhole."""

    name: ClassVar[str] = "mtu_blackhole"
    max_bytes: int = Field(1400, ge=68, le=65535, description="the largest IP packet that still gets through, bytes")

    def plan(self, tag: str, scope: Scope, caps: Capabilities, ns: Any) -> RulePlan:
        return rules.plan_mtu_blackhole(tag, scope, self.max_bytes, caps)
