"""The framework's only way to talk to the proxy: the toxiproxy-python client.

Talking Toxiproxy's API (and nothing of our own server) keeps the official
Toxiproxy server a drop-in replacement. The client keeps its API address in
class attributes, so one process drives one proxy API at a time.
"""

from __future__ import annotations

from toxiproxy import Toxiproxy
from toxiproxy.exceptions import NotFound

from chaos.cluster.topology import ProxyRoute
from chaos.errors import InfrastructureError


class ProxyClient:
    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.server = Toxiproxy()
        self.server.update_api_consumer(host, port)

    def populate(self, routes: list[ProxyRoute]) -> None:
        self.server.update_api_consumer(self.host, self.port)
        if routes:
            self.server.populate([r.to_dict() for r in routes])

    def names(self) -> list[str]:
        self.server.update_api_consumer(self.host, self.port)
        return list(self.server.proxies())

    def proxy(self, name: str):
        self.server.update_api_consumer(self.host, self.port)
        try:
            proxy = self.server.get_proxy(name)
        except NotFound:
            proxy = None
        if proxy is None:
            raise InfrastructureError(
                f"the proxy has no route {name!r}",
                hint="was it reset or destroyed by hand? restart the scenario",
            )
        return proxy

    def reset(self) -> None:
        """Remove every toxic and enable every route (heals all network faults)."""
        self.server.update_api_consumer(self.host, self.port)
        self.server.reset()
