"""reset_peer: on the next data, wait ``timeout`` ms then reset the connection
(RST via SO_LINGER 0 on both sockets), so the peers see ECONNRESET."""

from __future__ import annotations

from dataclasses import dataclass

from chaos.proxy.toxics.base import ToxicType, attr


@dataclass(frozen=True)
class ResetPeerAttributes:
    timeout: int = attr(default=0, unit="ms")


class ResetPeer(ToxicType):
    name = "reset_peer"
    Attributes = ResetPeerAttributes

    @classmethod
    async def on_data(cls, ctx, toxic, state, data, stamp, emit):
        if await ctx.sleep(toxic.attributes.timeout / 1000.0, toxic):
            ctx.reset()
        else:
            await emit(data)  # removed while waiting: the data goes on
