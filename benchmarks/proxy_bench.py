"""Benchmark of the chaos.proxy data plane (not a test).

    python benchmarks/proxy_bench.py [--iterations 5000] [--gigabytes 2] [--in-process]

In one run (< 60 s) it measures, over loopback:
  * round-trip latency (p50, p99) of a 64-byte ping-pong against an echo server,
  * throughput (MB/s) of a bulk one-way transfer into a sink server,
first on a direct connection, then through the proxy with no toxics, and prints
a table plus the latency the proxy adds (µs) and the throughput ratio.

Like the real setup, the proxy runs as its own process (``python -m chaos.proxy``)
and the echo/sink servers run in a third process; ``--in-process`` runs the
proxy on a background thread of this process instead (``ProxyServer.running``).
Set CHAOS_PROXY_UVLOOP=0 to measure the plain asyncio loop.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import requests  # noqa: E402

MESSAGE = b"x" * 64
CHUNK = 1024 * 1024


# -- backend process: echo and sink servers on loopback -----------------------
def _serve(sock: socket.socket, handle) -> None:
    while True:
        conn, _ = sock.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


def _echo(conn: socket.socket) -> None:
    with conn:
        while data := conn.recv(65536):
            conn.sendall(data)


def _sink(conn: socket.socket) -> None:
    buf = bytearray(CHUNK)
    total = 0
    with conn:
        while n := conn.recv_into(buf):
            total += n
        conn.sendall(str(total).encode())


def backend() -> None:
    ports = []
    for handler in (_echo, _sink):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        ports.append(sock.getsockname()[1])
        threading.Thread(target=_serve, args=(sock, handler), daemon=True).start()
    print(*ports, flush=True)
    sys.stdin.read()  # run until the parent closes our stdin


# -- measurements -------------------------------------------------------------
def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def latency_us(port: int, iterations: int) -> tuple[float, float]:
    with _connect(port) as sock:
        samples = []
        for i in range(iterations + iterations // 10):
            start = time.perf_counter()
            sock.sendall(MESSAGE)
            got = 0
            while got < len(MESSAGE):
                got += len(sock.recv(len(MESSAGE) - got))
            if i >= iterations // 10:  # the first 10% warm up
                samples.append((time.perf_counter() - start) * 1e6)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.99) - 1]


def throughput_mb_s(port: int, total: int) -> float:
    payload = memoryview(bytes(CHUNK))
    with _connect(port) as sock:
        start = time.perf_counter()
        for _ in range(total // CHUNK):
            sock.sendall(payload)
        sock.shutdown(socket.SHUT_WR)
        received = int(sock.recv(64))
        elapsed = time.perf_counter() - start
    assert received == total // CHUNK * CHUNK, (received, total)
    return received / elapsed / 1e6


# -- proxy set-up ---------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def proxy_api(in_process: bool):
    if in_process:
        from chaos.proxy import ProxyServer

        with ProxyServer.running(port=0) as server:
            yield server.api_url
        return
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "chaos.proxy", "--port", str(port)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                requests.get(url + "/version", timeout=1)
                break
            except requests.ConnectionError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit("the proxy did not start") from None
                time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def add_proxy(api: str, name: str, upstream_port: int) -> int:
    r = requests.post(
        api + "/proxies",
        json={"name": name, "listen": "127.0.0.1:0", "upstream": f"127.0.0.1:{upstream_port}"},
        timeout=5,
    )
    r.raise_for_status()
    return int(r.json()["listen"].rsplit(":", 1)[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=5000)
    parser.add_argument("--gigabytes", type=float, default=2.0)
    parser.add_argument("--in-process", action="store_true")
    parser.add_argument("--backend", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.backend:
        return backend()
    total = int(args.gigabytes * 1e9) // CHUNK * CHUNK
    with ExitStack() as stack:
        back = subprocess.Popen(
            [sys.executable, __file__, "--backend"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        stack.callback(back.wait, 10)
        stack.callback(back.stdin.close)
        echo_port, sink_port = map(int, back.stdout.readline().split())
        api = stack.enter_context(proxy_api(args.in_process))
        via = {"echo": add_proxy(api, "echo", echo_port), "sink": add_proxy(api, "sink", sink_port)}

        rows = {}
        for label, echo, sink in (("direct", echo_port, sink_port), ("proxy", via["echo"], via["sink"])):
            p50, p99 = latency_us(echo, args.iterations)
            rows[label] = (p50, p99, throughput_mb_s(sink, total))

    from chaos.proxy.loop import loop_name, new_event_loop

    where = "in-process thread" if args.in_process else "separate process (python -m chaos.proxy)"
    loop = new_event_loop()
    print(
        f"proxy: {where}, loop: {loop_name(loop)}; {args.iterations} x {len(MESSAGE)} B ping-pong; "
        f"{total / 1e9:.2f} GB bulk; {os.cpu_count()} CPUs"
    )
    loop.close()
    print(f"{'path':<8}{'p50 RTT (us)':>14}{'p99 RTT (us)':>14}{'MB/s':>10}")
    for label, (p50, p99, mbs) in rows.items():
        print(f"{label:<8}{p50:>14.1f}{p99:>14.1f}{mbs:>10.0f}")
    (d50, d99, dmb), (p50, p99, pmb) = rows["direct"], rows["proxy"]
    print(f"added latency: p50 {p50 - d50:.1f} us, p99 {p99 - d99:.1f} us (target < 100 us)")
    print(f"throughput through proxy: {pmb:.0f} MB/s = {pmb / dmb:.2f} x direct (target >= 1000 MB/s)")


if __name__ == "__main__":
    main()
