"""Abilities around restarts: an orchestrator's own restart policy, containers made ahead."""

from __future__ import annotations

from abc import abstractmethod
from typing import Protocol, runtime_checkable


@runtime_checkable
class OrchestratorRestarts(Protocol):
    """Failed workers restarted by the platform's own restart policy (cluster.recovery.by: orchestrator)."""

    @abstractmethod
    def await_restarts(self, indices: list[int], reason: str, timeout_s: float = 120.0) -> list[int]:
        """Instead of ``restart``: wait until the orchestrator's restart policy started a new container
        for each of these workers since the last call, follow those, and record each as a
        ``RestartEvent(by="orchestrator")``. Returns the ones it restarted; a worker that did not exit
        with a failure is never restarted by the orchestrator and is left out at once."""


@runtime_checkable
class RestartsAhead(Protocol):
    """The next containers prepared before a restart is asked (chaos.backends.docker.standby)."""

    @abstractmethod
    def expect_restarts(self, expected: bool) -> None:
        """Whether another restart may come (a fault not yet fired or not yet healed): a cluster
        prepares the next containers ahead only then."""
