"""What the proxy holds after connections close, and the bound on what it
holds while they are open. Objects and bytes are counted, not RSS, so the
answers are exact."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import socket
import threading
import time

import pytest
import requests
from proxy_helpers import IO_TIMEOUT, add_toxic, addr, connect, recv_exact, roundtrip

from chaos.proxy import ProxyServer, heap
from chaos.proxy.budget import FLOOR, MIN_READ, QUEUE_HIGH, READ_SIZE
from chaos.proxy.connection import Connection, Side
from chaos.proxy.pipe import Pipe
from chaos.proxy.proxy import Proxy
from chaos.proxy.toxic_set import ToxicSet

KINDS = (Connection, Side, Pipe, Proxy, ToxicSet)


def _live(kinds=KINDS) -> dict[str, int]:
    """Instances the interpreter still has, unreachable garbage included."""
    counts = {k.__name__: 0 for k in kinds}
    for obj in gc.get_objects():
        if isinstance(obj, kinds):
            counts[type(obj).__name__] += 1
    return counts


def _tasks(server: ProxyServer) -> int:
    async def count() -> int:
        return len(asyncio.all_tasks())

    return asyncio.run_coroutine_threadsafe(count(), server.loop).result(IO_TIMEOUT)


@contextlib.contextmanager
def _no_cyclic_gc():
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _refused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once closed


@pytest.fixture
def unanswered_upstream():
    """An address whose SYNs go unanswered: a listener with a full backlog."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    fillers = []
    for _ in range(3):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(listener.getsockname())
        fillers.append(s)
    time.sleep(0.1)
    yield addr(listener.getsockname())
    for s in fillers:
        s.close()
    listener.close()


def _traffic(api: str, make_proxy, unanswered: str) -> int:
    """Connections through toxics that end every way a connection can end,
    then every proxy deleted; returns how many connections were opened."""
    name, port = make_proxy()
    add_toxic(api, name, type="latency", stream="upstream", attributes={"latency": 5})
    add_toxic(api, name, type="bandwidth", stream="downstream", attributes={"rate": 20_000})
    opened = 0
    for i in range(40):
        sock = connect(port)
        opened += 1
        if i % 4 == 0:  # a full round trip, then close
            assert roundtrip(sock, b"x" * 100_000)[0] == b"x" * 100_000
            sock.close()
        elif i % 4 == 1:  # close with data still in the toxics
            sock.sendall(b"y" * 300_000)
            sock.close()
        elif i % 4 == 2:  # half-close, read the rest, close
            sock.sendall(b"z" * 50_000)
            sock.shutdown(socket.SHUT_WR)
            assert recv_exact(sock, 50_000) == b"z" * 50_000
            sock.close()
        else:  # reset by the client
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            sock.sendall(b"w" * 10_000)
            sock.close()
    reset_name, reset_port = make_proxy()
    add_toxic(api, reset_name, type="reset_peer", attributes={"timeout": 0})
    _, refused_port = make_proxy(upstream=f"127.0.0.1:{_refused_port()}")
    _, unanswered_port = make_proxy(upstream=unanswered)  # the dial times out
    for port in (reset_port, refused_port, unanswered_port):
        for _ in range(5):
            with connect(port) as sock:
                opened += 1
                try:
                    sock.sendall(b"v")
                    sock.recv(10)
                except OSError:
                    pass
    for name in requests.get(api + "/proxies", timeout=IO_TIMEOUT).json():
        assert requests.delete(f"{api}/proxies/{name}", timeout=IO_TIMEOUT).status_code == 204
    return opened


def test_closed_connections_leave_no_objects_tasks_or_bytes(server, api, make_proxy, unanswered_upstream, monkeypatch):
    # With the cyclic GC off, anything a closed connection left behind (its
    # objects in a reference cycle, its pump or dial task, bytes counted as
    # held) stays visible. Before the fix every closed connection stayed as
    # garbage with its read buffers until a full collection, which the proxy's
    # few objects per connection rarely trigger; so did a deleted proxy.
    monkeypatch.setattr("chaos.proxy.connection.DIAL_TIMEOUT", 0.2)
    with _no_cyclic_gc():
        before, tasks_before = _live(), _tasks(server)
        opened = _traffic(api, make_proxy, unanswered_upstream)
        deadline = time.monotonic() + IO_TIMEOUT
        while (left := _live()) != before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert left == before, (
            f"after {opened} connections and their proxies were closed, still alive: {left} (before: {before})"
        )
        assert _tasks(server) == tasks_before
        assert server.budget.held == 0


def test_connection_closed_before_its_pump_ran_leaves_nothing(server, api, make_proxy):
    # Reachable when data read during the dial is pumped once the upstream
    # answers, and the client's close was already queued behind that answer:
    # the pump task is cancelled before its first step, so its ``finally``
    # never runs. Staged here on a real connection, in that order.
    name, port = make_proxy()
    add_toxic(api, name, type="latency", attributes={"latency": 50})
    proxy = server.collection.proxies[name]
    with _no_cyclic_gc():
        before = _live((Connection, Side, Pipe))
        with connect(port) as sock:
            assert roundtrip(sock, b"x")[0] == b"x"  # connected both ways

            async def close_with_pump_scheduled() -> None:
                (conn,) = proxy.connections
                conn.down._enqueue(b"data")  # schedules the pump task...
                conn.close()  # ...and closes before it ran

            asyncio.run_coroutine_threadsafe(close_with_pump_scheduled(), server.loop).result(IO_TIMEOUT)
        deadline = time.monotonic() + IO_TIMEOUT
        while (left := _live((Connection, Side, Pipe))) != before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert left == before
        assert server.budget.held == 0


# -- the bound while connections are open ---------------------------------------------
@contextlib.contextmanager
def _own_server(queue_limit: int):
    with ProxyServer.running(host="127.0.0.1", port=0, queue_limit=queue_limit) as server:
        yield server


def _add_proxy(api: str, name: str, upstream: str) -> int:
    r = requests.post(
        api + "/proxies", json={"name": name, "listen": "127.0.0.1:0", "upstream": upstream}, timeout=IO_TIMEOUT
    )
    assert r.status_code == 201, r.text
    return int(r.json()["listen"].rsplit(":", 1)[1])


def _send_to_sink(port: int, size: int, results: list, timeout: float = 20) -> None:
    try:
        with connect(port, timeout=timeout) as sock:
            sock.sendall(bytes(size))
            sock.shutdown(socket.SHUT_WR)
            results.append(int(sock.recv(64)))
    except OSError as exc:
        results.append(exc)


def test_one_connection_holds_at_most_queue_high(sink_addr):
    with _own_server(queue_limit=1 << 30) as server:
        port = _add_proxy(server.api_url, "slow", addr(sink_addr))
        add_toxic(server.api_url, "slow", type="latency", stream="upstream", attributes={"latency": 200})
        results: list = []
        _send_to_sink(port, 16 * QUEUE_HIGH // 4, results)  # 16 MiB into a 200 ms delay line
        assert results == [16 * QUEUE_HIGH // 4]
        assert QUEUE_HIGH // 2 < server.budget.peak <= QUEUE_HIGH + MIN_READ


def test_all_connections_together_stay_under_the_limit(sink_addr):
    limit, conns, each = 2 * 1024 * 1024, 8, 3 * 1024 * 1024
    with _own_server(queue_limit=limit) as server:
        port = _add_proxy(server.api_url, "slow", addr(sink_addr))
        add_toxic(server.api_url, "slow", type="latency", stream="upstream", attributes={"latency": 300})
        results: list = []
        threads = [threading.Thread(target=_send_to_sink, args=(port, each, results)) for _ in range(conns)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert results == [each] * conns  # every byte arrived: paused, never dropped
        # Over the limit each direction may still fill to FLOOR (one read may
        # cross it by MIN_READ), so no connection waits on the others.
        assert limit < server.budget.peak <= limit + READ_SIZE + 2 * conns * (FLOOR + MIN_READ)
        assert server.budget.held == 0


def test_client_cannot_fill_memory_while_upstream_is_dialled(server, api, make_proxy, unanswered_upstream):
    # Reading from the client pauses until the upstream answers. uvloop starts
    # reading after connection_made, which undid that pause, and later pauses
    # were skipped as the side counted as paused: the proxy read whatever the
    # client sent while the dial hung (256 MiB in 0.6 s).
    name, port = make_proxy(upstream=unanswered_upstream)
    add_toxic(api, name, type="latency", attributes={"latency": 10})
    with connect(port) as sock:
        sock.settimeout(0.5)
        sent = 0
        with contextlib.suppress(OSError):
            while sent < 64 * 1024 * 1024:
                sent += sock.send(bytes(1024 * 1024))
        time.sleep(0.2)
        assert sent > 2 * READ_SIZE  # the kernel took some
        assert server.budget.held <= READ_SIZE, f"{server.budget.held} bytes read before the upstream answered"


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_freed_heap_goes_back_to_the_os_after_a_burst(server):
    if not server.trimmer.active:
        pytest.skip("not glibc")
    # 30 MB of 100 KB blocks with 5 KB blocks between them, as data chunks and
    # what is allocated meanwhile leave the heap: the freed blocks stay inside
    # the heap, where glibc keeps them (RSS does not drop) until trimmed.
    blocks, pins = [], []
    for _ in range(300):
        blocks.append(b"x" * 100_000)
        pins.append(b"p" * 5000)
    trims = server.trimmer.trims
    del blocks
    freed = _rss_bytes()
    deadline = time.monotonic() + 5 * heap.CHECK_EVERY
    while server.trimmer.trims == trims and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.trimmer.trims > trims
    assert _rss_bytes() < freed - 20_000_000
    del pins
