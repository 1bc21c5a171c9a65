"""Abilities only a cluster of several nodes has: a node lost or drained under a worker,
the link between two nodes degraded."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class NodeLoss(Protocol):
    """A worker's node lost unannounced, and started again."""

    @abstractmethod
    def lose_node(self, index: int) -> str:
        """Stop the engine of the node worker ``index`` runs on, unannounced (its processes die
        with it, no signal first); returns the node's name. The run places nothing on it again:
        the worker's next start goes to another node."""

    @abstractmethod
    def restore_node(self, node: str) -> None:
        """Start a lost node's engine again (it rejoins the cluster)."""


@runtime_checkable
class NodeDrain(Protocol):
    """A worker's node drained for maintenance, and made active again."""

    @abstractmethod
    def drain_node(self, index: int) -> str:
        """Drain the node worker ``index`` runs on (an operator's maintenance: the orchestrator
        stops its tasks gracefully and places nothing there); returns the node's name. The
        worker's next start goes to another node."""

    @abstractmethod
    def activate_node(self, node: str) -> None:
        """Make a drained node take tasks again."""


@runtime_checkable
class NodeLinks(Protocol):
    """The link between two workers' nodes degraded or cut, and restored."""

    @abstractmethod
    def degrade_link(self, a: int, b: int, loss_percent: float) -> Any:
        """Drop ``loss_percent`` of the packets between the nodes workers ``a`` and ``b`` run on
        (100: the link is cut), both ways; each node still reaches the others. Returns what
        ``restore_link`` takes."""

    @abstractmethod
    def restore_link(self, link: Any) -> None:
        """Undo a ``degrade_link`` (already undone: nothing)."""


# Abilities that move a worker to another node: its next start is the runner's doing.
MOVES_WORKERS = (NodeLoss, NodeDrain)
