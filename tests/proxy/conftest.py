"""Fixtures: one in-process proxy server per session (state wiped after each
test), loopback echo and sink servers, and small socket helpers. Every wait is
bounded by a socket timeout or a deadline."""

from __future__ import annotations

import socket
import socketserver
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from chaos.proxy import ProxyServer

# The project runs pytest with --import-mode=importlib, which keeps test
# directories off sys.path; the tests here share proxy_helpers.py.
sys.path.insert(0, str(Path(__file__).parent))

from proxy_helpers import BANNER, IO_TIMEOUT, addr, port_of  # noqa: E402


class _EchoHandler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        sock = self.request
        sock.settimeout(30)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                data = sock.recv(256 * 1024)
                if not data:
                    break
                sock.sendall(data)
        except OSError:
            pass


class _SinkHandler(socketserver.BaseRequestHandler):
    """Reads everything, then answers the byte count as text and closes."""

    def handle(self) -> None:
        sock = self.request
        sock.settimeout(30)
        total = 0
        try:
            while True:
                data = sock.recv(256 * 1024)
                if not data:
                    break
                total += len(data)
            sock.sendall(str(total).encode())
        except OSError:
            pass


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def _serve(handler) -> Iterator[tuple[str, int]]:
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server.server_address
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def echo_addr() -> Iterator[tuple[str, int]]:
    yield from _serve(_EchoHandler)


@pytest.fixture(scope="session")
def sink_addr() -> Iterator[tuple[str, int]]:
    yield from _serve(_SinkHandler)


@pytest.fixture(scope="session")
def _server() -> Iterator[ProxyServer]:
    with ProxyServer.running(host="127.0.0.1", port=0) as server:
        yield server


@pytest.fixture
def server(_server: ProxyServer) -> Iterator[ProxyServer]:
    yield _server
    for name in list(requests.get(_server.api_url + "/proxies", timeout=IO_TIMEOUT).json()):
        requests.delete(f"{_server.api_url}/proxies/{name}", timeout=IO_TIMEOUT)


@pytest.fixture
def api(server: ProxyServer) -> str:
    return server.api_url


@pytest.fixture
def client(server: ProxyServer):
    """toxiproxy-python pointed at the in-process server (host/port are class attributes)."""
    import toxiproxy
    from toxiproxy.api import APIConsumer

    old = APIConsumer.host, APIConsumer.port
    APIConsumer.host, APIConsumer.port = "127.0.0.1", server.port
    yield toxiproxy.Toxiproxy()
    APIConsumer.host, APIConsumer.port = old


@pytest.fixture
def make_proxy(api: str, echo_addr):
    """Create a proxy (to the echo server unless told) and return its listen port."""
    counter = iter(range(10**6))

    def make(name: str | None = None, upstream: str | None = None, **extra) -> tuple[str, int]:
        name = name or f"p{next(counter)}"
        body = {"name": name, "listen": "127.0.0.1:0", "upstream": upstream or addr(echo_addr), **extra}
        r = requests.post(api + "/proxies", json=body, timeout=IO_TIMEOUT)
        assert r.status_code == 201, r.text
        return name, port_of(r.json()["listen"])

    return make


class _BannerHandler(_EchoHandler):
    """Says BANNER as soon as a client connects (downstream-only data), then echoes."""

    def handle(self) -> None:
        try:
            self.request.sendall(BANNER)
        except OSError:
            return
        super().handle()


@pytest.fixture(scope="session")
def banner_addr() -> Iterator[tuple[str, int]]:
    yield from _serve(_BannerHandler)
