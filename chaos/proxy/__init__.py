"""A Toxiproxy-compatible TCP fault-injection proxy (HTTP API 2.x) on asyncio.

Runtime deps: stdlib, aiohttp, optional uvloop; imports only ``chaos`` and
``chaos.errors`` from the project, so the proxy image needs just those files.
The server is imported when asked for, so the proxy's typed values
(``chaos.proxy.model``: its ``Stream``, which faults name too) load without aiohttp.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ProxyServer", "VERSION"]


def __getattr__(name: str) -> Any:
    if name == "ProxyServer":
        from chaos.proxy.server import ProxyServer

        return ProxyServer
    if name == "VERSION":
        from chaos.proxy.version import VERSION

        return VERSION
    raise AttributeError(f"module 'chaos.proxy' has no attribute {name!r}")
