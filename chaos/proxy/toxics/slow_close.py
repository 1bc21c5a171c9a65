"""slow_close: hold the close (EOF) back for ``delay`` ms; data passes untouched."""

from __future__ import annotations

from dataclasses import dataclass

from chaos.proxy.toxics.base import ToxicType, attr


@dataclass(frozen=True)
class SlowCloseAttributes:
    delay: int = attr(unit="ms")


class SlowClose(ToxicType):
    name = "slow_close"
    Attributes = SlowCloseAttributes

    @classmethod
    async def on_eof(cls, ctx, toxic, state):
        await ctx.sleep(toxic.attributes.delay / 1000.0, toxic)
