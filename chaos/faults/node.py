"""Faults that only a cluster of several nodes has: a node lost or drained under a worker, and
the link between two nodes cut or degraded."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, field_validator

from chaos.backends.abilities import NodeDrain, NodeLinks, NodeLoss
from chaos.backends.base import ClusterControl
from chaos.faults.base import WorkerFault, WorkersFault, register_fault
from chaos.faults.undo import Undo


@register_fault
class NodeLost(WorkerFault):
    """Stop the engine of the node the worker runs on, unannounced: the worker dies with it
    and, once restarted, runs on another node; heal starts the node again."""

    name: ClassVar[str] = "node_lost"
    uses_abilities: ClassVar[tuple[type, ...]] = (NodeLoss,)

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        node = cluster.lose_node(self.worker)
        undo.add(lambda c: c.restore_node(node))


@register_fault
class NodeDrained(WorkerFault):
    """Drain the node the worker runs on, as an operator does before maintenance: the
    orchestrator stops the worker gracefully (SIGTERM, then SIGKILL after the stop grace)
    and, once restarted, it runs on another node; heal makes the node active again."""

    name: ClassVar[str] = "node_drained"
    uses_abilities: ClassVar[tuple[type, ...]] = (NodeDrain,)

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        node = cluster.drain_node(self.worker)
        undo.add(lambda c: c.activate_node(node))


@register_fault
class NodeLink(WorkersFault):
    """Cut or degrade the link between the nodes two workers run on: the overlay's packets
    between those two nodes are dropped (all of them, or loss_percent at random), while
    each node still reaches every other node and the proxy. Needs cluster.traffic: direct
    (through the proxy, no byte between the two workers crosses that link); heal restores it."""

    name: ClassVar[str] = "node_link"
    uses_abilities: ClassVar[tuple[type, ...]] = (NodeLinks,)
    needs_traffic: ClassVar[str | None] = "direct"
    workers: list[int] = Field(
        min_length=2, max_length=2, description="the two workers whose nodes' link fails (on two different nodes)"
    )
    loss_percent: float = Field(
        100.0, gt=0, le=100, description="the share of packets between the two nodes dropped; 100 cuts the link"
    )

    @field_validator("workers")
    @classmethod
    def _two(cls, value: list[int]) -> list[int]:
        if value[0] == value[1]:
            raise ValueError(f"two different workers, got {value[0]} twice")
        return value

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        link = cluster.degrade_link(self.workers[0], self.workers[1], self.loss_percent)
        undo.add(lambda c: c.restore_link(link))
