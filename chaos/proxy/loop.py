"""Event loop choice: uvloop when importable (the "fast" extra), else asyncio.
Measured on 2 cores the two are within noise of each other (docs/proxy.md);
uvloop stays the default for its lower per-callback cost on busier machines.
CHAOS_PROXY_UVLOOP=0 turns it off."""

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
