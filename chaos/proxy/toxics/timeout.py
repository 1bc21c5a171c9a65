"""timeout: drop all data; close the connection after ``timeout`` ms, or with
0 hold it open (data still dropped) until the toxic is removed."""

from __future__ import annotations

from dataclasses import dataclass

from chaos.proxy.toxics.base import ToxicType, attr


@dataclass(frozen=True)
class TimeoutAttributes:
    timeout: int = attr(unit="ms")


class _Timer:
    __slots__ = ("handle",)

    def __init__(self) -> None:
        self.handle = None


class Timeout(ToxicType):
    name = "timeout"
    Attributes = TimeoutAttributes

    @classmethod
    def new_state(cls, attrs):
        return _Timer()

    @classmethod
    def on_activate(cls, ctx, toxic, state):
        # The clock runs from when the toxic reaches the connection, data or not.
        if toxic.attributes.timeout > 0:
            state.handle = ctx.call_later(toxic.attributes.timeout / 1000.0, ctx.close)

    @classmethod
    def on_deactivate(cls, ctx, toxic, state):
        if state.handle is not None:
            state.handle.cancel()

    @classmethod
    async def on_data(cls, ctx, toxic, state, data, stamp, emit):
        return  # dropped on the floor, like the official server
