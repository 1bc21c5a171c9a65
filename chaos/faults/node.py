"""Faults that only a cluster of several nodes has: a node lost or drained under a worker."""

from __future__ import annotations

from typing import ClassVar

from chaos.backends.base import ClusterControl
from chaos.faults.base import WorkerFault, register_fault
from chaos.faults.undo import Undo


@register_fault
class NodeLost(WorkerFault):
    """Stop the engine of the node the worker runs on, unannounced: the worker dies with it
    and, once restarted, runs on another node; heal starts the node again."""

    name: ClassVar[str] = "node_lost"
    uses_verbs: ClassVar[frozenset[str]] = frozenset({"lose_node", "restore_node"})

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        node = cluster.lose_node(self.worker)
        undo.add(lambda c: c.restore_node(node))


@register_fault
class NodeDrained(WorkerFault):
    """Drain the node the worker runs on, as an operator does before maintenance: the
    orchestrator stops the worker gracefully (SIGTERM, then SIGKILL after the stop grace)
    and, once restarted, it runs on another node; heal makes the node active again."""

    name: ClassVar[str] = "node_drained"
    uses_verbs: ClassVar[frozenset[str]] = frozenset({"drain_node", "activate_node"})

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        node = cluster.drain_node(self.worker)
        undo.add(lambda c: c.activate_node(node))
