"""Degraded links, one proxy toxic each: what real networks do besides being slow.

All act on the worker's proxy (everything sent to worker i crosses proxy i),
on one stream or both: ``upstream`` is data *to* the worker, ``downstream``
its replies. Parameters are in a network engineer's units (ms, bytes, µs).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from chaos.backends.abilities import ProxyLinks
from chaos.backends.base import ClusterControl
from chaos.faults.base import WorkerFault, register_fault
from chaos.faults.toxics import Streams, add_toxics, undo_toxics
from chaos.faults.undo import Undo

STREAM_HELP = "upstream (to the worker), downstream (its replies) or both"


class _ToxicFault(WorkerFault):
    """A fault that is one toxic type with attributes from the fault's fields."""

    needs_traffic: ClassVar[str | None] = "proxy"  # it acts on the proxy's link
    uses_abilities: ClassVar[tuple[type, ...]] = (ProxyLinks,)

    toxic: ClassVar[str]
    stream: Streams = Field("both", description=STREAM_HELP)

    def attributes(self) -> dict:
        raise NotImplementedError

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        undo_toxics(undo, self.worker, self.name, self.stream)
        add_toxics(cluster.proxy(self.worker), self.name, self.toxic, self.stream, self.attributes())


@register_fault
class ConnectionReset(_ToxicFault):
    """Reset the worker's connections (TCP RST) after timeout_ms; new connections are reset too."""

    name: ClassVar[str] = "connection_reset"
    toxic: ClassVar[str] = "reset_peer"
    timeout_ms: int = Field(0, ge=0, le=600_000, description="reset this long after data arrives, ms (0: at once)")

    def attributes(self) -> dict:
        return {"timeout": self.timeout_ms}


@register_fault
class StreamCut(_ToxicFault):
    """Close each connection after it has carried limit_bytes (a stream cut after N bytes)."""

    name: ClassVar[str] = "stream_cut"
    toxic: ClassVar[str] = "limit_data"
    limit_bytes: int = Field(ge=1, le=1 << 40, description="bytes a connection carries before it is closed")

    def attributes(self) -> dict:
        return {"bytes": self.limit_bytes}


@register_fault
class SlowClose(_ToxicFault):
    """Delay the close of the worker's connections by delay_ms (a peer that lingers)."""

    name: ClassVar[str] = "slow_close"
    toxic: ClassVar[str] = "slow_close"
    delay_ms: int = Field(ge=0, le=600_000, description="delay before a close is passed on, ms")

    def attributes(self) -> dict:
        return {"delay": self.delay_ms}


@register_fault
class Sliced(_ToxicFault):
    """Deliver the worker's data in small pieces (average_bytes ± variation_bytes, delay_us apart)."""

    name: ClassVar[str] = "sliced"
    toxic: ClassVar[str] = "slicer"
    average_bytes: int = Field(ge=1, le=1 << 20, description="average piece size, bytes")
    variation_bytes: int = Field(0, ge=0, le=1 << 20, description="± variation of the piece size, bytes")
    delay_us: int = Field(0, ge=0, le=10_000_000, description="delay between pieces, microseconds")

    def attributes(self) -> dict:
        return {"average_size": self.average_bytes, "size_variation": self.variation_bytes, "delay": self.delay_us}


@register_fault
class OneWayBlackhole(_ToxicFault):
    """Hold and drop the data on one stream only: requests reach the worker, replies never return (or the reverse)."""

    name: ClassVar[str] = "blackhole"
    toxic: ClassVar[str] = "timeout"
    stream: Streams = Field(description=STREAM_HELP)

    def attributes(self) -> dict:
        return {"timeout": 0}  # Toxiproxy's timeout 0: hold the data, close nothing
