"""The framework's only way to talk to the proxy: the toxiproxy-python client.

Talking Toxiproxy's API (and nothing of our own server) keeps the official
Toxiproxy server a drop-in replacement.

The client keeps its API address in class attributes (``APIConsumer.host`` /
``port``), read at every request, so it talks to one API at a time per
process. Scenarios run side by side in threads, each with its own proxy: so
every request, through the client or through a ``Proxy`` it returned, runs
under one process-wide lock with the address set to its own cluster's API.
(Without this, one scenario's routes were created in another scenario's
proxy, and a worker's port was refused from its first step on.)
"""

from __future__ import annotations

import contextlib
import functools
import threading

from toxiproxy import Toxiproxy
from toxiproxy.api import APIConsumer
from toxiproxy.exceptions import NotFound

from chaos.errors import InfrastructureError
from chaos.topology import ProxyRoute

_API = threading.RLock()  # one request at a time, with its own address


class ProxyClient:
    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.server = Toxiproxy()

    @contextlib.contextmanager
    def api(self):
        """The client's requests go to this proxy API for the duration."""
        with _API:
            APIConsumer.host, APIConsumer.port = self.host, self.port
            yield

    def populate(self, routes: list[ProxyRoute]) -> None:
        if routes:
            with self.api():
                self.server.populate([r.to_dict() for r in routes])

    def names(self) -> list[str]:
        with self.api():
            return list(self.server.proxies())

    def proxy(self, name: str) -> BoundProxy:
        with self.api():
            try:
                proxy = self.server.get_proxy(name)
            except NotFound:
                proxy = None
        if proxy is None:
            raise InfrastructureError(
                f"the proxy has no route {name!r}",
                hint="was it reset or destroyed by hand? restart the scenario",
            )
        return BoundProxy(self, proxy)

    def reset(self) -> None:
        """Remove every toxic and enable every route (heals all network faults)."""
        with self.api():
            self.server.reset()


class BoundProxy:
    """A toxiproxy ``Proxy`` whose every method call goes to its own cluster's API."""

    def __init__(self, client: ProxyClient, proxy) -> None:
        self._client = client
        self._proxy = proxy

    def __getattr__(self, name: str):
        value = getattr(self._proxy, name)
        if not callable(value):
            return value

        @functools.wraps(value)
        def call(*args, **kwargs):
            with self._client.api():
                return value(*args, **kwargs)

        return call
