"""limit_data: let ``bytes`` bytes through in this direction, then close."""

from __future__ import annotations

from dataclasses import dataclass

from chaos.proxy.toxics.base import ToxicType, attr


@dataclass(frozen=True)
class LimitDataAttributes:
    bytes: int = attr(unit="bytes")


class _Count:
    __slots__ = ("sent",)

    def __init__(self) -> None:
        self.sent = 0


class LimitData(ToxicType):
    name = "limit_data"
    Attributes = LimitDataAttributes

    @classmethod
    def new_state(cls, attrs):
        return _Count()

    @classmethod
    async def on_data(cls, ctx, toxic, state, data, stamp, emit):
        room = toxic.attributes.bytes - state.sent
        if room > 0:
            piece = data[:room]
            state.sent += len(piece)
            await emit(piece)
        if state.sent >= toxic.attributes.bytes:
            ctx.close()
