"""What a packet fault may do in a worker's network namespace.

A cluster that can reach its workers' namespaces has the verb
``netns(index) -> Netns``: a helper there until ``close`` (the Docker backend:
chaos.backends.docker.netns.DockerNetns; the unit tests: a fake that keeps
iptables state). The faults (chaos.faults.packet) speak only this.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from chaos.netns.rules import Capabilities


class Netns(Protocol):
    def capabilities(self) -> Capabilities:
        """What the kernel there can do (netem, statistic, NFQUEUE, ...), probed once."""

    def run(self, argv: Sequence[str]) -> str:
        """Run a command there; ``InfrastructureError`` with its output if it fails."""

    def try_run(self, argv: Sequence[str]) -> tuple[int, str]:
        """Run a command there; (exit code, output), never raises for a failing command."""

    def run_all(self, argvs: Sequence[Sequence[str]]) -> None:
        """These commands in order, at once; stops at the first that fails and raises naming it."""

    def try_all(self, argvs: Sequence[Sequence[str]]) -> None:
        """These commands in order, at once, whatever each answers (an undo)."""

    def connections(self) -> str:
        """``ss -Htn state established`` there."""

    def counters(self, chains: list[str]) -> dict[str, int]:
        """Packets each rule of these iptables chains matched."""

    def start_shaper(self, config: dict[str, Any]) -> None:
        """Start the NFQUEUE shaper (chaos.netns.nfqueue) with this config; returns once it serves."""

    def stop_shaper(self, queue: int) -> dict[str, Any] | None:
        """Stop it (what it holds is released first); its counters."""

    def close(self) -> None:
        """Remove the helper; idempotent."""
