"""Event loop choice: uvloop when importable (it roughly halves the per-chunk
cost of the data plane, see docs/proxy.md); CHAOS_PROXY_UVLOOP=0 turns it off."""

from __future__ import annotations

import asyncio
import os


def new_event_loop() -> asyncio.AbstractEventLoop:
    if os.environ.get("CHAOS_PROXY_UVLOOP", "1") != "0":
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"
