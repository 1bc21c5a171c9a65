"""Faults on a worker's network: everything sent to worker i crosses proxy i."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, PrivateAttr

from chaos.backends.base import ClusterControl
from chaos.faults.base import WorkerFault, register_fault
from chaos.faults.toxics import Stream, add_toxics, remove_toxics


@register_fault
class BlockedPort(WorkerFault):
    """Block the worker's port: refused (proxy disabled) or blackholed (data held and dropped)."""

    name: ClassVar[str] = "blocked_port"
    mode: Literal["refused", "blackholed"] = Field(
        "refused",
        description="refused: connections are refused; blackholed: accepted, then nothing gets through",
    )

    def inject(self, cluster: ClusterControl) -> None:
        proxy = cluster.proxy(self.worker)
        if self.mode == "refused":
            proxy.disable()
        else:
            # Toxiproxy's `timeout` toxic with timeout 0 holds the connection
            # open and drops the data until the toxic is removed.
            add_toxics(proxy, "blackhole", "timeout", "both", {"timeout": 0})

    def heal(self, cluster: ClusterControl) -> None:
        proxy = cluster.proxy(self.worker)
        if self.mode == "refused":
            proxy.enable()  # enabling an enabled proxy is a no-op in Toxiproxy
        else:
            remove_toxics(proxy, "blackhole", "both")


@register_fault
class Latency(WorkerFault):
    """Delay data to and/or from the worker by latency_ms ± jitter_ms."""

    name: ClassVar[str] = "latency"
    latency_ms: int = Field(ge=0, le=600_000, description="added delay per chunk, milliseconds")
    jitter_ms: int = Field(0, ge=0, le=600_000, description="random ± variation, milliseconds")
    stream: Stream = Field("both", description="upstream (to the worker), downstream (its replies) or both")

    def inject(self, cluster: ClusterControl) -> None:
        add_toxics(
            cluster.proxy(self.worker),
            "latency",
            "latency",
            self.stream,
            {"latency": self.latency_ms, "jitter": self.jitter_ms},
        )

    def heal(self, cluster: ClusterControl) -> None:
        remove_toxics(cluster.proxy(self.worker), "latency", self.stream)


@register_fault
class Bandwidth(WorkerFault):
    """Limit the worker's link to rate_kbps kilobits per second."""

    name: ClassVar[str] = "bandwidth"
    rate_kbps: int = Field(ge=8, description="kilobits per second (Toxiproxy's rate is KB/s: divided by 8)")
    stream: Stream = Field("both", description="upstream (to the worker), downstream (its replies) or both")

    def inject(self, cluster: ClusterControl) -> None:
        add_toxics(
            cluster.proxy(self.worker),
            "bandwidth",
            "bandwidth",
            self.stream,
            {"rate": self.rate_kbps // 8},
        )

    def heal(self, cluster: ClusterControl) -> None:
        remove_toxics(cluster.proxy(self.worker), "bandwidth", self.stream)


@register_fault
class Partition(WorkerFault):
    """Cut the worker off the cluster network; heal reconnects it."""

    name: ClassVar[str] = "partition"
    # Reconnecting a connected container is an error in Docker: remember.
    _disconnected: bool = PrivateAttr(False)

    def inject(self, cluster: ClusterControl) -> None:
        cluster.disconnect(self.worker)
        self._disconnected = True

    def heal(self, cluster: ClusterControl) -> None:
        if self._disconnected:
            cluster.reconnect(self.worker)
            self._disconnected = False
