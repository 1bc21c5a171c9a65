"""bandwidth: cap the rate at ``rate`` KB/s (1 KB = 1000 bytes, as the official
server computes it). Large chunks are cut into 100 ms slices so the output is
smooth; the pacing clock is per connection so short sleeps do not drift."""

from __future__ import annotations

from dataclasses import dataclass

from chaos.proxy.toxics.base import ToxicType, attr


@dataclass(frozen=True)
class BandwidthAttributes:
    rate: int = attr(minimum=1, unit="KB/s")


class _Clock:
    __slots__ = ("next_at",)

    def __init__(self) -> None:
        self.next_at = 0.0  # time.monotonic() when the next slice may leave


class Bandwidth(ToxicType):
    name = "bandwidth"
    Attributes = BandwidthAttributes

    @classmethod
    def new_state(cls, attrs):
        return _Clock()

    @classmethod
    async def on_data(cls, ctx, toxic, state, data, stamp, emit):
        bytes_per_s = toxic.attributes.rate * 1000
        slice_size = max(bytes_per_s // 10, 1)
        view = memoryview(data)
        for start in range(0, len(view), slice_size):
            piece = view[start : start + slice_size]
            state.next_at = max(state.next_at, ctx.now()) + len(piece) / bytes_per_s
            # Wait for the time this slice "costs" on the wire, then send it.
            if not await ctx.sleep_until(state.next_at, toxic):
                # Removed mid-chunk: pass the rest on unthrottled, never drop it.
                await emit(bytes(view[start:]))
                return
            await emit(bytes(piece))
