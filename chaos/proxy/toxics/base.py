"""What every toxic type provides. A toxic type is a stateless behaviour plus a
frozen dataclass of its attributes; per-connection state lives in the pipe.

Hooks (all optional) receive ``ctx``, the pipe of one direction of one
connection (see ``chaos.proxy.pipe.Pipe``), which offers ``sleep``/``sleep_until``
(woken early when the toxic is removed), ``close()`` and ``reset()``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

Emit = Callable[[bytes], Awaitable[None]]

# Upper bound on every integer attribute: keeps timers and counters in range
# for both asyncio and uvloop (about 24 days in ms, 2 GiB in bytes).
MAX_ATTRIBUTE = 2**31 - 1


def attr(*, default: int | None = None, minimum: int = 0, unit: str = "") -> Any:
    """Declare an integer attribute; no default means the caller must give it."""
    meta = {"minimum": minimum, "unit": unit}
    if default is None:
        return dataclasses.field(metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


class ToxicType:
    """Base class; subclasses set ``name`` and ``Attributes`` and override hooks."""

    name: ClassVar[str]
    Attributes: ClassVar[type]

    @classmethod
    def check(cls, attrs: Any) -> str | None:
        """Cross-field validation; returns an error message or None."""
        return None

    @classmethod
    def new_state(cls, attrs: Any) -> Any:
        """Per-connection state, created when the toxic starts applying to it."""
        return None

    @classmethod
    def on_activate(cls, ctx: Any, toxic: Any, state: Any) -> None:
        """The toxic starts applying to an (open or new) connection."""

    @classmethod
    def on_deactivate(cls, ctx: Any, toxic: Any, state: Any) -> None:
        """The toxic was removed or replaced; undo anything on_activate started."""

    @classmethod
    async def on_data(cls, ctx: Any, toxic: Any, state: Any, data: bytes, stamp: float, emit: Emit) -> None:
        await emit(data)

    @classmethod
    async def on_eof(cls, ctx: Any, toxic: Any, state: Any) -> None:
        """The source half-closed; return when the EOF may travel on."""
