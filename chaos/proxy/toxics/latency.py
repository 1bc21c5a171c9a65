"""latency: delay each chunk by latency ± jitter ms, counted from when the
proxy read it (so a stream is delayed, not throttled, as in the official server)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from chaos.proxy.toxics.base import ToxicType, attr


@dataclass(frozen=True)
class LatencyAttributes:
    latency: int = attr(unit="ms")
    jitter: int = attr(default=0, unit="ms")


class Latency(ToxicType):
    name = "latency"
    Attributes = LatencyAttributes

    @classmethod
    async def on_data(cls, ctx, toxic, state, data, stamp, emit):
        a = toxic.attributes
        delay = a.latency + (random.uniform(-a.jitter, a.jitter) if a.jitter else 0)
        await ctx.sleep_until(stamp + max(delay, 0) / 1000.0, toxic)
        await emit(data)
