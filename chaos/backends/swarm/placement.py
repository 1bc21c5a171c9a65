"""Where a run's tasks go: each worker on its own node while there are nodes
enough (round-robin over the ready nodes after that), the proxy on a manager.

Runs side by side (``chaos run -j N --backend swarm``) spread over the nodes:
among nodes of one role, those running fewer workers of other runs come
first, so a suite on a swarm of several machines divides its time among them
(the counts: ``SwarmCluster._workers_per_node``).

Pure: the nodes come in as values (``Node.of`` reads one from the engine's node
listing), so every choice is unit-tested.

Order: worker nodes first, then managers, each by host name. On the local
swarm (node-1 the only manager) two workers land on node-2 and node-3 and the
proxy on node-1, so a fault that takes a node down (issue 23) takes a worker's
node, never the manager that runs the swarm.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from chaos.errors import InfrastructureError


@dataclass(frozen=True)
class Node:
    hostname: str  # the swarm's node.hostname: what a placement constraint names
    role: str  # manager / worker
    state: str  # ready / down / unknown ...
    availability: str  # active / pause / drain
    addr: str = ""  # the address the node's engine advertises (Status.Addr): where host-mode ports are
    id: str = ""  # the swarm's node id (a task's NodeID)

    @property
    def usable(self) -> bool:
        return self.state == "ready" and self.availability == "active"

    @classmethod
    def of(cls, attrs: dict[str, Any]) -> Node:
        """From a node's inspect data (``client.nodes.list()[i].attrs``)."""
        spec, status = attrs.get("Spec") or {}, attrs.get("Status") or {}
        addr = status.get("Addr", "")
        if addr in ("", "0.0.0.0"):  # some engines say so of a manager: its raft address has the host
            addr = ((attrs.get("ManagerStatus") or {}).get("Addr") or "").rpartition(":")[0] or addr
        return cls(
            hostname=(attrs.get("Description") or {}).get("Hostname", ""),
            role=spec.get("Role", "worker"),
            state=status.get("State", "unknown"),
            availability=spec.get("Availability", "active"),
            addr=addr,
            id=attrs.get("ID", ""),
        )


@dataclass(frozen=True)
class Placement:
    workers: tuple[str, ...]  # per worker index: the node's host name
    proxy: str

    def constraint(self, hostname: str) -> str:
        return f"node.hostname=={hostname}"

    @property
    def spread(self) -> bool:
        """Every worker on a node of its own."""
        return len(set(self.workers)) == len(self.workers)


def place(nodes: list[Node], workers: int, busy: Mapping[str, int] | None = None) -> Placement:
    """Workers round-robin over the usable nodes: worker nodes first (a node fault must never
    take the manager), then, within a role, the nodes with the fewest ``busy`` workers of other
    runs, then by host name; the proxy on the first manager."""
    busy = busy or {}
    usable = [n for n in nodes if n.usable]
    if not usable:
        states = ", ".join(f"{n.hostname or '?'} {n.state}/{n.availability}" for n in nodes) or "none"
        raise InfrastructureError(
            f"the swarm has no node ready and active to place workers on (nodes: {states})",
            hint="`docker node ls` on the manager shows them; `docker node update --availability active NODE` "
            "brings a drained node back",
        )
    order = sorted(usable, key=lambda n: (n.role == "manager", busy.get(n.hostname, 0), n.hostname))
    managers = sorted((n for n in usable if n.role == "manager"), key=lambda n: n.hostname)
    proxy = (managers or order)[0].hostname
    return Placement(tuple(order[i % len(order)].hostname for i in range(workers)), proxy)


def another_node(nodes: list[Node], placement: Placement, index: int, out_of_use: Collection[str]) -> str:
    """Where worker ``index`` goes when its node is out of use: a usable node this run has not
    lost or drained, one that runs none of the run's other workers first, worker nodes before
    managers."""
    others = {h for i, h in enumerate(placement.workers) if i != index}
    usable = [n for n in nodes if n.usable and n.hostname not in out_of_use]
    if not usable:
        states = ", ".join(f"{n.hostname or '?'} {n.state}/{n.availability}" for n in nodes) or "none"
        raise InfrastructureError(
            f"worker-{index}'s node {placement.workers[index]} is out of use and no other node is ready and active "
            f"to run it (nodes: {states}; lost or drained by this run: {', '.join(sorted(out_of_use)) or 'none'})",
            hint="a node_lost or node_drained scenario needs a node to spare: `chaos swarm up --nodes 3` or more "
            "for 2 workers",
        )
    return min(usable, key=lambda n: (n.hostname in others, n.role == "manager", n.hostname)).hostname


def moved(placement: Placement, index: int, hostname: str) -> Placement:
    """The placement with worker ``index`` on ``hostname``."""
    workers = list(placement.workers)
    workers[index] = hostname
    return Placement(tuple(workers), placement.proxy)
