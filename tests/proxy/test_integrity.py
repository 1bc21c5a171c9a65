"""Nothing is lost: many concurrent connections, both directions, mixed
non-destructive toxics; every byte comes back, in order."""

from __future__ import annotations

import hashlib
import random
import threading

from proxy_helpers import add_toxic, connect, recv_exact, remove_toxic

CONNECTIONS = 24
SIZE = 256 * 1024


def _exchange(port: int, seed: int, results: dict) -> None:
    rng = random.Random(seed)
    payload = rng.randbytes(SIZE)
    try:
        with connect(port, timeout=20) as sock:
            sender = threading.Thread(target=_send_in_pieces, args=(sock, payload, rng))
            sender.start()
            echo = recv_exact(sock, SIZE, deadline=20)
            sender.join(20)
        results[seed] = hashlib.sha256(echo).digest() == hashlib.sha256(payload).digest()
    except Exception as exc:  # reported by the assertion below
        results[seed] = exc


def _send_in_pieces(sock, payload: bytes, rng: random.Random) -> None:
    pos = 0
    while pos < len(payload):
        n = rng.choice([1, 7, 100, 1460, 4096, 65536])
        sock.sendall(payload[pos : pos + n])
        pos += n


def test_bytes_in_equal_bytes_out_under_mixed_toxics(api, make_proxy):
    name, port = make_proxy()
    add_toxic(api, name, name="lat_up", type="latency", stream="upstream", attributes={"latency": 5, "jitter": 5})
    add_toxic(api, name, name="lat_down", type="latency", attributes={"latency": 10, "jitter": 10})
    add_toxic(
        api,
        name,
        name="slice_up",
        type="slicer",
        stream="upstream",
        attributes={"average_size": 3000, "size_variation": 2000, "delay": 50},
    )
    add_toxic(api, name, name="slice_down", type="slicer", attributes={"average_size": 800, "size_variation": 700})
    add_toxic(api, name, name="bw_down", type="bandwidth", toxicity=0.5, attributes={"rate": 20_000})
    add_toxic(api, name, name="bw_up", type="bandwidth", stream="upstream", attributes={"rate": 50_000})
    results: dict = {}
    threads = [threading.Thread(target=_exchange, args=(port, seed, results)) for seed in range(CONNECTIONS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results == {seed: True for seed in range(CONNECTIONS)}


def test_bytes_survive_toxics_changing_mid_stream(api, make_proxy):
    """Toxics come and go while data flows: still nothing lost or reordered."""
    name, port = make_proxy()
    results: dict = {}
    threads = [threading.Thread(target=_exchange, args=(port, 100 + seed, results)) for seed in range(8)]
    for t in threads:
        t.start()
    for _ in range(6):
        add_toxic(api, name, name="lat", type="latency", attributes={"latency": 3, "jitter": 3})
        add_toxic(api, name, name="sl", type="slicer", stream="upstream", attributes={"average_size": 500})
        remove_toxic(api, name, "lat")
        remove_toxic(api, name, "sl")
    for t in threads:
        t.join(30)
    assert results == {100 + seed: True for seed in range(8)}
