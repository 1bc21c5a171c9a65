"""Each toxic over real TCP (an echo server behind the proxy), measured."""

from __future__ import annotations

import time

import pytest
from proxy_helpers import BANNER, add_toxic, addr, connect, recv_exact, remove_toxic, roundtrip, wait_closed

SLACK = 0.25  # scheduling allowance on a loaded 2-core machine


def test_latency_adds_delay(api, make_proxy):
    name, port = make_proxy()
    add_toxic(api, name, type="latency", attributes={"latency": 100})
    with connect(port) as sock:
        for _ in range(3):
            data, took = roundtrip(sock, b"ping")
            assert data == b"ping" and 0.1 <= took < 0.1 + SLACK


def test_latency_jitter_stays_in_range(api, make_proxy):
    name, port = make_proxy()
    add_toxic(api, name, type="latency", attributes={"latency": 100, "jitter": 50})
    times = []
    with connect(port) as sock:
        for _ in range(8):
            times.append(roundtrip(sock, b"j")[1])
    assert all(0.05 <= t < 0.15 + SLACK for t in times), times
    assert max(times) - min(times) > 0.005  # it does vary


@pytest.mark.parametrize("stream", ["downstream", "upstream"])
def test_latency_affects_only_its_direction(api, make_proxy, banner_addr, stream):
    name, port = make_proxy(upstream=addr(banner_addr))
    add_toxic(api, name, type="latency", stream=stream, attributes={"latency": 200})
    start = time.monotonic()
    with connect(port) as sock:
        assert recv_exact(sock, len(BANNER)) == BANNER  # travels downstream only
        banner_time = time.monotonic() - start
        echo_time = roundtrip(sock, b"x")[1]  # travels both ways
    if stream == "downstream":
        assert banner_time >= 0.2
    else:
        assert banner_time < 0.15
    assert 0.2 <= echo_time < 0.2 + SLACK


def _transfer_time(port: int, size: int) -> float:
    payload = bytes(range(256)) * (size // 256)
    with connect(port, timeout=10) as sock:
        start = time.monotonic()
        sock.sendall(payload)
        assert recv_exact(sock, len(payload), deadline=10) == payload
        return time.monotonic() - start


@pytest.mark.parametrize("stream", ["downstream", "upstream"])
def test_bandwidth_caps_rate_within_10_percent(api, make_proxy, stream):
    name, port = make_proxy()
    rate_kb = 300
    add_toxic(api, name, type="bandwidth", stream=stream, attributes={"rate": rate_kb})
    size = 300 * 1024
    took = _transfer_time(port, size)
    rate = size / took / 1000
    assert rate_kb * 0.9 <= rate <= rate_kb * 1.1, f"{rate:.0f} KB/s"


def test_slow_close_delays_the_close(api, make_proxy):
    name, port = make_proxy()
    add_toxic(api, name, type="slow_close", attributes={"delay": 300})
    with connect(port) as sock:
        assert roundtrip(sock, b"bye")[0] == b"bye"
        sock.shutdown(2 - 1)  # SHUT_WR: echo server closes, its EOF comes back through the toxic
        how, took = wait_closed(sock)
    assert how == "eof" and 0.3 <= took < 0.3 + SLACK


def test_without_slow_close_the_close_is_prompt(make_proxy):
    _, port = make_proxy()
    with connect(port) as sock:
        sock.shutdown(1)
        how, took = wait_closed(sock)
    assert how == "eof" and took < 0.1


def test_timeout_drops_data_then_closes(api, make_proxy):
    name, port = make_proxy()
    with connect(port) as sock:
        add_toxic(api, name, type="timeout", attributes={"timeout": 300})
        start = time.monotonic()
        sock.sendall(b"lost")
        how, _ = wait_closed(sock)
        took = time.monotonic() - start
    assert how == "eof" and 0.25 <= took < 0.3 + SLACK  # and nothing was echoed (wait_closed saw no data)


def test_timeout_zero_holds_until_removed(api, make_proxy):
    name, port = make_proxy()
    add_toxic(api, name, type="timeout", attributes={"timeout": 0})
    with connect(port) as sock:
        sock.sendall(b"dropped")
        sock.settimeout(0.5)
        with pytest.raises(TimeoutError):  # held open, nothing comes back
            sock.recv(100)
        sock.settimeout(5)
        remove_toxic(api, name, "timeout_downstream")
        assert roundtrip(sock, b"back")[0] == b"back"  # same connection works again


@pytest.mark.parametrize("delay_ms", [0, 200])
def test_reset_peer_resets(api, make_proxy, delay_ms):
    name, port = make_proxy()
    add_toxic(api, name, type="reset_peer", attributes={"timeout": delay_ms})
    with connect(port) as sock:
        start = time.monotonic()
        sock.sendall(b"boom")
        how, _ = wait_closed(sock)
        took = time.monotonic() - start
    assert how == "reset"
    assert delay_ms / 1000 <= took < delay_ms / 1000 + SLACK


def test_limit_data_closes_after_limit(api, make_proxy):
    name, port = make_proxy()
    add_toxic(api, name, type="limit_data", attributes={"bytes": 10})
    with connect(port) as sock:
        sock.sendall(b"0123456789abcdefghij")
        got = b""
        while True:
            data = sock.recv(100)
            if not data:
                break
            got += data
    assert got == b"0123456789"


def test_slicer_delivers_same_bytes_in_smaller_reads(api, make_proxy):
    name, port = make_proxy()
    add_toxic(api, name, type="slicer", attributes={"average_size": 10, "size_variation": 4, "delay": 2000})
    payload = bytes(range(256)) * 4
    with connect(port) as sock:
        sock.sendall(payload)
        reads = []
        while sum(map(len, reads)) < len(payload):
            reads.append(sock.recv(4096))
            assert reads[-1]
    assert b"".join(reads) == payload
    assert len(reads) >= 20 and sorted(map(len, reads))[len(reads) // 2] <= 14


@pytest.mark.parametrize("toxicity,delayed", [(0.0, False), (1.0, True)])
def test_toxicity_zero_and_one(api, make_proxy, toxicity, delayed):
    name, port = make_proxy()
    add_toxic(api, name, type="latency", toxicity=toxicity, attributes={"latency": 200})
    for _ in range(3):  # each a new connection, each rolls
        with connect(port) as sock:
            took = roundtrip(sock, b"t")[1]
        assert (took >= 0.2) is delayed
