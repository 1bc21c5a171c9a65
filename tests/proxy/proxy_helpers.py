"""Socket and API helpers shared by the proxy tests; every wait is bounded."""

from __future__ import annotations

import socket
import time

import requests

IO_TIMEOUT = 5.0
BANNER = b"hello from upstream"


def addr(host_port: tuple[str, int]) -> str:
    return f"{host_port[0]}:{host_port[1]}"


def port_of(listen: str) -> int:
    return int(listen.rsplit(":", 1)[1])


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
