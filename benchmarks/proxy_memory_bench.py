"""Memory benchmark of the chaos.proxy data plane under load (not a test).

    python benchmarks/proxy_memory_bench.py [--rounds 5] [--connections 200] [--mebibytes 1]
                                            [--proxies 4] [--latency-ms 50] [--rate-kbs 1000]

The proxy runs as its own process (``python -m chaos.proxy``), an echo server in
a second one, the clients here. Each proxy gets a latency and a bandwidth toxic
on both streams. Each round opens ``--connections`` connections at once (spread
over the proxies), sends ``--mebibytes`` MiB on each, reads the echo back in
full and closes. The proxy process's resident memory (/proc/PID/status VmRSS)
is read before each round, sampled every 10 ms during it (the peak is shown)
and read after it once its sockets are closed and ``--settle`` seconds have
passed (the proxy returns freed heap memory to the OS within about a second of
a burst ending, chaos/proxy/heap.py); at the end every proxy is deleted and it
is read once more. What the proxy still holds is counted from
outside: its open sockets (/proc/PID/fd) beyond the API listener and the
proxies' listeners, its threads, and the proxies its API lists.

The proxy inherits this process's environment, so e.g. CHAOS_PROXY_UVLOOP=0
measures the plain asyncio loop.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import requests  # noqa: E402

MiB = 1024 * 1024
WRITE_SIZE = 64 * 1024


# -- backend process: an echo server on loopback --------------------------------
async def _echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(256 * 1024):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


async def _backend() -> None:
    server = await asyncio.start_server(_echo, "127.0.0.1", 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until the parent closes stdin


# -- the proxy process and what /proc says about it -------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def proxy_process():
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "chaos.proxy", "--host", "127.0.0.1", "--port", str(port)],
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
        yield proc, url
    finally:
        proc.terminate()
        proc.wait(10)


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def sockets(pid: int) -> int:
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            count += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
        except OSError:
            pass  # closed meanwhile
    return count


def threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


class PeakSampler:
    """Samples RSS every 10 ms on a thread; ``peak`` is the largest seen."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak = pid, rss_mb(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.01):
            self.peak = max(self.peak, rss_mb(self.pid))

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_mb(self.pid))


def settle(pid: int, idle_sockets: int, quiet: float, timeout: float = 30.0) -> int:
    """Wait until the proxy holds no more sockets than when idle (or time out),
    then ``quiet`` seconds; returns the sockets it holds beyond idle."""
    deadline = time.monotonic() + timeout
    while sockets(pid) > idle_sockets and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(quiet)
    return max(sockets(pid) - idle_sockets, 0)


# -- the load -------------------------------------------------------------------
async def _one(port: int, size: int) -> int:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    payload = memoryview(bytes(size))

    async def send() -> None:
        for start in range(0, size, WRITE_SIZE):
            writer.write(payload[start : start + WRITE_SIZE])
            await writer.drain()
        writer.write_eof()

    sender = asyncio.ensure_future(send())
    got = 0
    while data := await reader.read(256 * 1024):
        got += len(data)
    await sender
    writer.close()
    return got


async def _round(ports: list[int], connections: int, size: int) -> list[int]:
    return await asyncio.gather(*(_one(ports[i % len(ports)], size) for i in range(connections)))


def add_proxy(api: str, name: str, upstream_port: int, latency_ms: int, rate_kbs: int) -> int:
    r = requests.post(
        api + "/proxies",
        json={"name": name, "listen": "127.0.0.1:0", "upstream": f"127.0.0.1:{upstream_port}"},
        timeout=5,
    )
    r.raise_for_status()
    for stream in ("upstream", "downstream"):
        for body in (
            {"type": "latency", "attributes": {"latency": latency_ms}},
            {"type": "bandwidth", "attributes": {"rate": rate_kbs}},
        ):
            requests.post(f"{api}/proxies/{name}/toxics", json={**body, "stream": stream}, timeout=5).raise_for_status()
    return int(r.json()["listen"].rsplit(":", 1)[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=200, help="concurrent connections per round")
    parser.add_argument("--mebibytes", type=float, default=1.0, help="MiB each connection sends (and gets back)")
    parser.add_argument("--proxies", type=int, default=4)
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--rate-kbs", type=int, default=1000, help="bandwidth toxic rate, KB/s per connection")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds to wait after a round before reading RSS")
    parser.add_argument("--backend", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.backend:
        return asyncio.run(_backend())
    size = int(args.mebibytes * MiB)

    rows = []
    with ExitStack() as stack:
        back = subprocess.Popen(
            [sys.executable, __file__, "--backend"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        stack.callback(back.wait, 10)
        stack.callback(back.stdin.close)
        echo_port = int(back.stdout.readline())
        proc, api = stack.enter_context(proxy_process())
        pid = proc.pid
        started = rss_mb(pid)
        ports = [add_proxy(api, f"mem{i}", echo_port, args.latency_ms, args.rate_kbs) for i in range(args.proxies)]
        idle = sockets(pid)
        for n in range(1, args.rounds + 1):
            before = rss_mb(pid)
            t0 = time.monotonic()
            with PeakSampler(pid) as sampler:
                got = asyncio.run(_round(ports, args.connections, size))
            seconds = time.monotonic() - t0
            if got != [size] * args.connections:
                short = sum(g != size for g in got)
                raise SystemExit(f"round {n}: {short} of {args.connections} connections got the wrong byte count")
            left = settle(pid, idle, args.settle)
            rows.append((n, before, sampler.peak, rss_mb(pid), left, threads(pid), seconds))
        for i in range(args.proxies):
            requests.delete(f"{api}/proxies/mem{i}", timeout=5).raise_for_status()
        api_sockets = idle - args.proxies  # the API listener (and any kept-alive API connection)
        left_after_delete = settle(pid, api_sockets, args.settle)
        deleted = (rss_mb(pid), left_after_delete, threads(pid), len(requests.get(api + "/proxies", timeout=5).json()))
        with open(f"/proc/{pid}/status") as f:
            hwm = next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmHWM:"))

    from chaos.proxy.loop import loop_name, new_event_loop

    loop = new_event_loop()
    print(
        f"proxy: python -m chaos.proxy, loop: {loop_name(loop)}; {args.proxies} proxies, each with latency "
        f"{args.latency_ms} ms + bandwidth {args.rate_kbs} KB/s on both streams; per round {args.connections} "
        f"concurrent connections x {args.mebibytes:g} MiB echoed; {os.cpu_count()} CPUs"
    )
    loop.close()
    print(f"RSS at start (no proxies): {started:.0f} MB; RSS after = {args.settle:g} s after the last socket closed")
    print(
        f"{'round':>5}{'RSS before':>12}{'peak during':>13}{'RSS after':>11}{'sockets left':>14}"
        f"{'threads':>9}{'seconds':>9}"
    )
    for n, before, peak, after, left, nthreads, seconds in rows:
        print(f"{n:>5}{before:>9.0f} MB{peak:>10.0f} MB{after:>8.0f} MB{left:>14}{nthreads:>9}{seconds:>9.1f}")
    rss, left, nthreads, nproxies = deleted
    print(
        f"after deleting every proxy: RSS {rss:.0f} MB, sockets left {left}, threads {nthreads}, "
        f"proxies listed {nproxies}; peak RSS of the whole run (VmHWM) {hwm:.0f} MB"
    )


if __name__ == "__main__":
    main()
