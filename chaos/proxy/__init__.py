"""A Toxiproxy-compatible TCP fault-injection proxy (HTTP API 2.x) on asyncio.

Runtime deps: stdlib, aiohttp, optional uvloop; imports only ``chaos`` and
``chaos.errors`` from the project, so the proxy image needs just those files.
"""

from chaos.proxy.server import ProxyServer
from chaos.proxy.version import VERSION

__all__ = ["ProxyServer", "VERSION"]
