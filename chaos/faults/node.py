"""Faults that only a cluster of several nodes has: a node lost under a worker."""

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
