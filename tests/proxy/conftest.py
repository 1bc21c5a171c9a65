"""Fixtures: one in-process proxy server per session (state wiped after each
test), loopback echo and sink servers, and small socket helpers. Every wait is
bounded by a socket timeout or a deadline."""

from __future__ import annotations

import socket
import socketserver
import threading
import time
from typing import Iterator

import pytest
import requests

from chaos.proxy import ProxyServer

IO_TIMEOUT = 5.0


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


def addr(host_port: tuple[str, int]) -> str:
    return f"{host_port[0]}:{host_port[1]}"


def port_of(listen: str) -> int:
    return int(listen.rsplit(":", 1)[1])


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


def add_toxic(api: str, proxy: str, **body) -> dict:
    r = requests.post(f"{api}/proxies/{proxy}/toxics", json=body, timeout=IO_TIMEOUT)
    assert r.status_code == 200, r.text
    return r.json()


def remove_toxic(api: str, proxy: str, name: str) -> None:
    r = requests.delete(f"{api}/proxies/{proxy}/toxics/{name}", timeout=IO_TIMEOUT)
    assert r.status_code == 204, r.text


def connect(port: int, timeout: float = IO_TIMEOUT) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def recv_exact(sock: socket.socket, n: int, deadline: float = IO_TIMEOUT) -> bytes:
    end = time.monotonic() + deadline
    chunks, got = [], 0
    while got < n:
        if time.monotonic() > end:
            raise TimeoutError(f"got {got} of {n} bytes")
        data = sock.recv(n - got)
        if not data:
            raise ConnectionError(f"closed after {got} of {n} bytes")
        chunks.append(data)
        got += len(data)
    return b"".join(chunks)


def roundtrip(sock: socket.socket, payload: bytes) -> tuple[bytes, float]:
    """Send, read the echo back; returns (echo, seconds)."""
    start = time.monotonic()
    sock.sendall(payload)
    data = recv_exact(sock, len(payload))
    return data, time.monotonic() - start


def wait_closed(sock: socket.socket, deadline: float = IO_TIMEOUT) -> tuple[str, float]:
    """Read until the peer closes; returns ("eof"|"reset", seconds)."""
    start = time.monotonic()
    sock.settimeout(deadline)
    while True:
        try:
            data = sock.recv(65536)
        except ConnectionResetError:
            return "reset", time.monotonic() - start
        if not data:
            return "eof", time.monotonic() - start
        if time.monotonic() - start > deadline:
            raise TimeoutError("peer did not close")


def serves(port: int) -> bool:
    """A proxy at ``port`` passes an echo round trip."""
    with connect(port) as sock:
        return roundtrip(sock, b"still here")[0] == b"still here"


class _BannerHandler(_EchoHandler):
    """Says BANNER as soon as a client connects (downstream-only data), then echoes."""

    def handle(self) -> None:
        try:
            self.request.sendall(BANNER)
        except OSError:
            return
        super().handle()


BANNER = b"hello from upstream"


@pytest.fixture(scope="session")
def banner_addr() -> Iterator[tuple[str, int]]:
    yield from _serve(_BannerHandler)
