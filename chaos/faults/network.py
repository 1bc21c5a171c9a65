"""Faults on a worker's network: everything sent to worker i crosses proxy i."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from chaos.backends.abilities import Partitions, ProxyLinks
from chaos.backends.base import ClusterControl
from chaos.faults.base import WorkerFault, register_fault
from chaos.faults.toxics import Streams, add_toxics, undo_toxics
from chaos.faults.undo import Undo


@register_fault
class BlockedPort(WorkerFault):
    """Block the worker's port: refused (proxy disabled) or blackholed (data held and dropped)."""

    name: ClassVar[str] = "blocked_port"
    needs_traffic: ClassVar[str | None] = "proxy"  # it acts on the proxy's link
    uses_abilities: ClassVar[tuple[type, ...]] = (ProxyLinks,)
    mode: Literal["refused", "blackholed"] = Field(
        "refused",
        description="refused: connections are refused; blackholed: accepted, then nothing gets through",
    )

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        proxy = cluster.proxy(self.worker)
        if self.mode == "refused":
            undo.add(lambda c: c.proxy(self.worker).enable())  # enabling an enabled proxy is a no-op
            proxy.disable()
        else:
            # Toxiproxy's `timeout` toxic with timeout 0 holds the connection
            # open and drops the data until the toxic is removed.
            undo_toxics(undo, self.worker, "blackhole", "both")
            add_toxics(proxy, "blackhole", "timeout", "both", {"timeout": 0})


@register_fault
class Latency(WorkerFault):
    """Delay data to and/or from the worker by latency_ms ± jitter_ms."""

    name: ClassVar[str] = "latency"
    needs_traffic: ClassVar[str | None] = "proxy"  # it acts on the proxy's link
    uses_abilities: ClassVar[tuple[type, ...]] = (ProxyLinks,)
    latency_ms: int = Field(ge=0, le=600_000, description="added delay per chunk, milliseconds")
    jitter_ms: int = Field(0, ge=0, le=600_000, description="random ± variation, milliseconds")
    stream: Streams = Field("both", description="upstream (to the worker), downstream (its replies) or both")

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        undo_toxics(undo, self.worker, "latency", self.stream)
        add_toxics(
            cluster.proxy(self.worker),
            "latency",
            "latency",
            self.stream,
            {"latency": self.latency_ms, "jitter": self.jitter_ms},
        )


@register_fault
class Bandwidth(WorkerFault):
    """Limit the worker's link to rate_kbps kilobits per second."""

    name: ClassVar[str] = "bandwidth"
    needs_traffic: ClassVar[str | None] = "proxy"  # it acts on the proxy's link
    uses_abilities: ClassVar[tuple[type, ...]] = (ProxyLinks,)
    rate_kbps: int = Field(ge=8, description="kilobits per second (Toxiproxy's rate is KB/s: divided by 8)")
    stream: Streams = Field("both", description="upstream (to the worker), downstream (its replies) or both")

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        undo_toxics(undo, self.worker, "bandwidth", self.stream)
        add_toxics(
            cluster.proxy(self.worker),
            "bandwidth",
            "bandwidth",
            self.stream,
            {"rate": self.rate_kbps // 8},
        )


@register_fault
class Partition(WorkerFault):
    """Cut the worker off the cluster network; heal reconnects it."""

    name: ClassVar[str] = "partition"
    uses_abilities: ClassVar[tuple[type, ...]] = (Partitions,)

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        cluster.disconnect(self.worker)
        # Only once disconnected: reconnecting a connected container is an error in Docker.
        undo.add(lambda c: c.reconnect(self.worker))
