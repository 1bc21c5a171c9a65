"""Registry of toxic types by name; one module per type."""

from __future__ import annotations

from chaos.proxy.toxics.bandwidth import Bandwidth
from chaos.proxy.toxics.base import ToxicType
from chaos.proxy.toxics.latency import Latency
from chaos.proxy.toxics.limit_data import LimitData
from chaos.proxy.toxics.reset_peer import ResetPeer
from chaos.proxy.toxics.slicer import Slicer
from chaos.proxy.toxics.slow_close import SlowClose
from chaos.proxy.toxics.timeout import Timeout

REGISTRY: dict[str, type[ToxicType]] = {
    t.name: t for t in (Latency, Bandwidth, SlowClose, Timeout, ResetPeer, Slicer, LimitData)
}


def names() -> list[str]:
    return sorted(REGISTRY)


def get(name: str) -> type[ToxicType] | None:
    return REGISTRY.get(name)
