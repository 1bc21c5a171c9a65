"""slicer: cut each chunk into pieces of about average_size ± size_variation
bytes, ``delay`` µs apart, to exercise readers that assume whole messages."""

from __future__ import annotations

import random
from dataclasses import dataclass

from chaos.proxy.toxics.base import ToxicType, attr


@dataclass(frozen=True)
class SlicerAttributes:
    average_size: int = attr(minimum=1, unit="bytes")
    size_variation: int = attr(default=0, unit="bytes")
    delay: int = attr(default=0, unit="us")


def cut_points(size: int, average: int, variation: int) -> list[int]:
    """Offsets splitting ``size`` bytes into pieces near ``average`` (iterative,
    so a huge chunk with a tiny average cannot overflow the stack)."""
    points = [0]
    pos = 0
    while size - pos > average + variation:
        step = average + (random.randint(-variation, variation) if variation else 0)
        pos += max(step, 1)
        points.append(pos)
    points.append(size)
    return points


class Slicer(ToxicType):
    name = "slicer"
    Attributes = SlicerAttributes

    @classmethod
    def check(cls, attrs):
        if attrs.size_variation >= attrs.average_size:
            return "size_variation must be smaller than average_size"
        return None

    @classmethod
    async def on_data(cls, ctx, toxic, state, data, stamp, emit):
        a = toxic.attributes
        points = cut_points(len(data), a.average_size, a.size_variation)
        view = memoryview(data)
        for i in range(1, len(points)):
            await emit(bytes(view[points[i - 1] : points[i]]))
            if i + 1 < len(points) and not await ctx.sleep(a.delay / 1e6, toxic):
                await emit(bytes(view[points[i] :]))  # removed: rest in one piece
                return
