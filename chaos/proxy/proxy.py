"""One proxy: a listener, its open connections and its toxics."""

from __future__ import annotations

import asyncio
import functools
import logging
import socket
import weakref
from typing import Any

from chaos.proxy.budget import Budget
from chaos.proxy.connection import Connection
from chaos.proxy.model import Address
from chaos.proxy.net import bind_listen
from chaos.proxy.toxic_set import ToxicSet

BACKLOG = 512
log = logging.getLogger("chaos.proxy")
MAX_LOGGED_HOSTS = 64  # a cluster has a handful; more is a load test, not worth a line each


def _call_if_alive(method: weakref.WeakMethod) -> None:
    bound = method()
    if bound is not None:
        bound()


class Proxy:
    def __init__(self, name: str, listen: Address, upstream: Address, budget: Budget) -> None:
        self.name = name
        self.listen = listen  # as requested until bound, then the real address
        self.upstream = upstream
        self.budget = budget  # the server's, shared by all its connections
        self.loop = asyncio.get_running_loop()
        # A weak callback: with a strong one, proxy and ToxicSet form a cycle and
        # a deleted proxy waits for the cyclic GC instead of being freed at once.
        self.toxics = ToxicSet(functools.partial(_call_if_alive, weakref.WeakMethod(self._toxics_changed)))
        self.connections: set[Connection] = set()
        self._server: asyncio.AbstractServer | None = None
        self._hosts_logged: set[str] = set()

    @property
    def enabled(self) -> bool:
        return self._server is not None

    async def bind(self, listen: Address | None = None) -> socket.socket:
        """Bind (but do not serve) ``listen`` or the current address; raises ApiError."""
        return await bind_listen(listen or self.listen)

    async def serve(self, sock: socket.socket) -> None:
        """Start accepting on a socket from ``bind`` (replacing any listener)."""
        self.stop()
        try:
            self._server = await self.loop.create_server(lambda: Connection(self).client, sock=sock, backlog=BACKLOG)
        except BaseException:
            sock.close()
            raise
        host, port = sock.getsockname()[:2]
        self.listen = Address(host, port)
        self._hosts_logged = set()
        log.info("proxy %s: listening on %s, upstream %s", self.name, self.listen, self.upstream)

    def client_accepted(self, peer: Any) -> None:
        """Log a listener's first client from each host: which hosts reached a
        link, and which link nobody reached, is what a hang's report names.
        Only the first per host (and only MAX_LOGGED_HOSTS hosts), so that a
        load of short connections costs no log writes."""
        host, port = (peer[0], peer[1]) if isinstance(peer, tuple) else (str(peer), 0)
        if host in self._hosts_logged or len(self._hosts_logged) >= MAX_LOGGED_HOSTS:
            return
        self._hosts_logged.add(host)
        log.info(
            "proxy %s: first client from %s accepted (port %s; later ones from it are not logged)",
            self.name,
            host,
            port,
        )

    async def start(self) -> None:
        if not self.enabled:
            await self.serve(await self.bind())

    def stop(self) -> None:
        """Stop listening and close every open connection."""
        if self._server is not None:
            self._server.close()
            self._server = None
        self.drop_connections()

    def drop_connections(self) -> None:
        for conn in list(self.connections):
            conn.close()

    def _toxics_changed(self) -> None:
        for conn in list(self.connections):
            if not conn.closed:
                conn.apply_toxics()

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "listen": str(self.listen),
            "upstream": str(self.upstream),
            "enabled": self.enabled,
            "toxics": [t.to_json() for t in self.toxics.all()],
        }
