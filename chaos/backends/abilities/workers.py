"""Abilities on a worker's processes and on what it is created with."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Protocol, runtime_checkable

from chaos.worker.control import WorkerCommand


@runtime_checkable
class Freezing(Protocol):
    """Every process of a worker frozen and thawed (the cgroup freezer)."""

    @abstractmethod
    def pause(self, index: int) -> None:
        """Freeze every process of a worker."""

    @abstractmethod
    def unpause(self, index: int) -> None:
        """Thaw them (not paused: an error, as the engine says)."""


@runtime_checkable
class WorkerCommands(Protocol):
    """Commands to the training process itself (the harness's control file, chaos.worker.control)."""

    @abstractmethod
    def command(self, index: int, command: WorkerCommand) -> None:
        """Send a command to the worker's training process."""


@runtime_checkable
class ResourceLimits(Protocol):
    """A running worker's CPU and memory limits changed, and given back."""

    @abstractmethod
    def limit_cpu(self, index: int, cpus: float) -> None:
        """Let a running worker use this much CPU time, in cores, from now on."""

    @abstractmethod
    def restore_cpu(self, index: int) -> None:
        """Give a running worker back the CPU limit it was created with (none: unlimited)."""

    @abstractmethod
    def limit_memory(self, index: int, limit_bytes: int) -> None:
        """Give a running worker this memory limit (swap included) from now on."""

    @abstractmethod
    def restore_memory(self, index: int) -> None:
        """Give a running worker back the memory limit it was created with (none: unlimited)."""

    @abstractmethod
    def memory_usage(self, index: int) -> int:
        """Bytes the worker's container uses now."""


@runtime_checkable
class WorkerOverrides(Protocol):
    """Workers created differently from their next (re)start on (chaos.backends.overrides)."""

    @abstractmethod
    def override(
        self,
        index: int,
        owner: str,
        *,
        image: str | None = None,
        env: dict[str, str] | None = None,
        settings: dict[str, Any] | None = None,
        cluster_config: str | None = None,
    ) -> None:
        """Create worker ``index`` differently from its next (re)start on (``owner``: the fault);
        ``cluster_config``: the TF_CONFIG text it is told the cluster with (whatever its resolver)."""

    @abstractmethod
    def clear_override(self, index: int, owner: str) -> None:
        """Undo ``owner``'s overrides of worker ``index`` (and its write limits); from the next (re)start."""


@runtime_checkable
class SpareAddresses(Protocol):
    """An address on the run's own network that nothing answers on."""

    @abstractmethod
    def unused_address(self) -> str:
        """An IP address on the run's own network that no container holds (connects to it time out)."""
