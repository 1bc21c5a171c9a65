"""Changes reach connections that are already open (TF keeps gRPC connections
for the whole run, so a toxic that only hits new connections injects nothing)."""

from __future__ import annotations

import threading
import time

import requests
from proxy_helpers import IO_TIMEOUT, add_toxic, addr, connect, remove_toxic, roundtrip, wait_closed


def test_toxic_added_to_open_connection_then_removed(api, make_proxy):
    name, port = make_proxy()
    with connect(port) as sock:
        assert roundtrip(sock, b"a")[1] < 0.1
        add_toxic(api, name, type="latency", attributes={"latency": 200})
        assert roundtrip(sock, b"b")[1] >= 0.2
        remove_toxic(api, name, "latency_downstream")
        assert roundtrip(sock, b"c")[1] < 0.1


def test_toxic_update_reaches_open_connection(api, make_proxy):
    name, port = make_proxy()
    add_toxic(api, name, type="latency", attributes={"latency": 50})
    with connect(port) as sock:
        assert 0.05 <= roundtrip(sock, b"a")[1] < 0.2
        r = requests.patch(
            f"{api}/proxies/{name}/toxics/latency_downstream", json={"attributes": {"latency": 300}}, timeout=IO_TIMEOUT
        )
        assert r.status_code == 200
        assert roundtrip(sock, b"b")[1] >= 0.3


def test_removing_a_toxic_wakes_data_it_holds(api, make_proxy):
    name, port = make_proxy()
    add_toxic(api, name, type="latency", attributes={"latency": 10_000})
    with connect(port) as sock:
        threading.Timer(0.2, remove_toxic, (api, name, "latency_downstream")).start()
        took = roundtrip(sock, b"held")[1]
    assert 0.2 <= took < 1.0


def test_bandwidth_added_mid_transfer_slows_it(api, make_proxy, sink_addr):
    name, port = make_proxy(upstream=addr(sink_addr))
    chunk = b"z" * 65536
    with connect(port) as sock:
        start = time.monotonic()
        for _ in range(20):
            sock.sendall(chunk)
        fast = time.monotonic() - start
        add_toxic(api, name, type="bandwidth", stream="upstream", attributes={"rate": 500})
        start = time.monotonic()
        for _ in range(8):  # 512 KiB at 500 KB/s: about a second, minus what socket buffers absorb
            sock.sendall(chunk)
        sock.shutdown(1)
        sock.settimeout(10)
        assert int(sock.recv(100)) == 28 * 65536
        slow = time.monotonic() - start
    assert fast < 0.5 and slow >= 0.8


def test_disabling_closes_open_connections(api, make_proxy):
    name, port = make_proxy()
    sock = connect(port)
    assert roundtrip(sock, b"x")[0] == b"x"
    requests.post(f"{api}/proxies/{name}", json={"enabled": False}, timeout=IO_TIMEOUT)
    assert wait_closed(sock, 2)[0] in ("eof", "reset")
    sock.close()


def test_changing_upstream_restarts(api, make_proxy, banner_addr):
    name, port = make_proxy()
    sock = connect(port)
    assert roundtrip(sock, b"x")[0] == b"x"
    r = requests.post(f"{api}/proxies/{name}", json={"upstream": addr(banner_addr)}, timeout=IO_TIMEOUT)
    assert r.status_code == 200
    assert wait_closed(sock, 2)[0] in ("eof", "reset")  # old connection went to the old upstream
    sock.close()
    with connect(port) as fresh:  # same port, new upstream
        assert fresh.recv(100).startswith(b"hello")


def test_reset_removes_toxics_from_open_connections(api, make_proxy):
    name, port = make_proxy()
    with connect(port) as sock:
        add_toxic(api, name, type="latency", attributes={"latency": 300})
        assert roundtrip(sock, b"a")[1] >= 0.3
        assert requests.post(api + "/reset", timeout=IO_TIMEOUT).status_code == 204
        assert roundtrip(sock, b"b")[1] < 0.1
