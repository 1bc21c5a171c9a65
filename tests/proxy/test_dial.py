"""How the proxy dials its upstream: a refused port closes the client at once
(a reachable host with nothing listening answers RST); a name that does not
resolve is treated like a host that does not answer, because Docker drops a
disconnected container's name at once where a partitioned host would just be
silent. Name resolution is faked at the dial (``open_upstream``: the server's
loop may be uvloop, which resolves without socket.getaddrinfo); the sockets are real."""

from __future__ import annotations

import logging
import socket
import threading
import time

import pytest
from proxy_helpers import connect, recv_exact, wait_closed

NAME = "localhost"  # resolvable when the proxy is made (the API checks it)


@pytest.fixture
def dns(monkeypatch):
    """The proxy's dials find NAME only while ``resolves`` is set."""
    from chaos.proxy import connection

    resolves = threading.Event()
    resolves.set()
    real = connection.open_upstream

    async def open_upstream(loop, protocol_factory, host, port):
        if host == NAME and not resolves.is_set():
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return await real(loop, protocol_factory, host, port)

    monkeypatch.setattr(connection, "open_upstream", open_upstream)
    return resolves


def _refused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_refused_upstream_closes_the_client_at_once(make_proxy):
    _, port = make_proxy(upstream=f"127.0.0.1:{_refused_port()}")
    sock = connect(port)
    how, seconds = wait_closed(sock, 2)
    sock.close()
    assert how in ("eof", "reset") and seconds < 0.5


class _Said(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def proxy_log():
    """What the proxy logs, whatever an earlier test did to logging (a dictConfig
    disables the loggers it does not name, and may stop propagation)."""
    said, logger = _Said(), logging.getLogger("chaos.proxy")
    disabled, level = logger.disabled, logger.level
    logger.disabled = False
    logger.setLevel(logging.WARNING)
    logger.addHandler(said)
    yield said.lines
    logger.removeHandler(said)
    logger.disabled = disabled
    logger.setLevel(level)


def test_an_unresolved_upstream_holds_the_client_then_closes_it_after_the_dial_timeout(
    make_proxy, dns, monkeypatch, proxy_log
):
    monkeypatch.setattr("chaos.proxy.connection.DIAL_TIMEOUT", 1.5)
    _, port = make_proxy(upstream=f"{NAME}:{_refused_port()}")
    dns.clear()  # the container left the network
    sock = connect(port)
    sock.sendall(b"x")
    how, seconds = wait_closed(sock, 5)
    sock.close()
    assert how in ("eof", "reset") and 1.4 <= seconds < 3.0
    said = [line for line in proxy_log if "cannot reach upstream" in line]
    assert said and said[-1].endswith("Name or service not known (for 1.5 s)"), said


def test_a_name_that_appears_during_the_dial_carries_the_clients_bytes(make_proxy, dns, echo_addr, monkeypatch):
    monkeypatch.setattr("chaos.proxy.connection.DIAL_TIMEOUT", 5.0)
    _, port = make_proxy(upstream=f"{NAME}:{echo_addr[1]}")
    dns.clear()  # the container left the network
    sock = connect(port)
    sock.sendall(b"held")  # read only once the upstream answers
    time.sleep(0.6)
    dns.set()  # the container is back on the network (a healed partition)
    sock.sendall(b"!")
    echo = recv_exact(sock, 5)
    sock.close()
    assert echo == b"held!"  # the bytes sent during the dial come first: nothing lost or reordered
