"""Measured traffic for the packet faults' integration tests (standard library
only; runs in a container as ``python3 -c <this file> ...``).

``recv PORT SECONDS``: count numbered UDP datagrams until SECONDS pass with
none, then print one JSON line: received, distinct, duplicates, reordered (a
number lower than one already seen), corrupt (a payload that does not match
its number; the UDP checksum should have dropped those).

``send HOST PORT COUNT RATE [SIZE]``: COUNT datagrams of SIZE bytes (64), RATE a second.

``echo PORT`` / ``rtt HOST PORT COUNT``: a UDP echo and COUNT round trips
through it (median and max milliseconds, lost).

``tcp-recv PORT`` / ``tcp-send HOST PORT BYTES``: one TCP stream of BYTES with
a checksummed pattern; the receiver prints bytes, seconds and whether the data
arrived intact.
"""

from __future__ import annotations

import hashlib
import json
import socket
import struct
import sys
import time

SIZE = 64


def payload(n: int, size: int = SIZE) -> bytes:
    head = struct.pack("!IH", n, size)
    body = hashlib.sha256(head).digest()
    return (head + body * (size // 32 + 1))[:size]


def recv(port: int, quiet_s: float) -> dict:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.bind(("0.0.0.0", port))
    print(json.dumps({"listening": port}), flush=True)
    seen: set[int] = set()
    received = duplicates = reordered = corrupt = 0
    highest = -1
    sock.settimeout(max(10.0, quiet_s))  # the first datagram (none at all: nothing got through)
    while True:
        try:
            data = sock.recv(2048)
        except TimeoutError:
            break
        sock.settimeout(quiet_s)
        if len(data) < 6 or data != payload(*struct.unpack("!IH", data[:6])):
            corrupt += 1
            continue
        (n,) = struct.unpack("!I", data[:4])
        received += 1
        if n in seen:
            duplicates += 1
            continue
        seen.add(n)
        if n < highest:
            reordered += 1
        highest = max(highest, n)
    return {
        "received": received,
        "distinct": len(seen),
        "duplicates": duplicates,
        "reordered": reordered,
        "corrupt": corrupt,
        "highest": highest,
    }


def send(host: str, port: int, count: int, rate: float, size: int = SIZE) -> dict:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.IPPROTO_IP, 10, 0)  # IP_MTU_DISCOVER = IP_PMTUDISC_DONT: let big ones fragment
    start = time.monotonic()
    for n in range(count):
        due = start + n / rate
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        sock.sendto(payload(n, size), (host, port))
    return {"sent": count, "seconds": round(time.monotonic() - start, 3)}


def echo(port: int, seconds: float = 120) -> dict:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("0.0.0.0", port))
    print(json.dumps({"listening": port}), flush=True)
    sock.settimeout(seconds)
    echoed = 0
    try:
        while True:
            data, peer = sock.recvfrom(2048)
            if data == b"stop":
                break
            sock.sendto(data, peer)
            echoed += 1
    except TimeoutError:
        pass
    return {"echoed": echoed}


def rtt(host: str, port: int, count: int) -> dict:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(2.0)
    times, lost = [], 0
    for n in range(count):
        start = time.monotonic()
        sock.sendto(payload(n), (host, port))
        try:
            while True:
                data = sock.recv(2048)
                if data[:4] == payload(n)[:4]:
                    break
            times.append((time.monotonic() - start) * 1000)
        except TimeoutError:
            lost += 1
        time.sleep(0.01)
    sock.sendto(b"stop", (host, port))
    times.sort()
    return {
        "median_ms": round(times[len(times) // 2], 2) if times else None,
        "max_ms": round(times[-1], 2) if times else None,
        "lost": lost,
    }


def tcp_recv(port: int) -> dict:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", port))
    server.listen(1)
    print(json.dumps({"listening": port}), flush=True)
    conn, _ = server.accept()
    start = time.monotonic()
    digest = hashlib.sha256()
    total = 0
    while True:
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        digest.update(chunk)
        total += len(chunk)
    return {"bytes": total, "seconds": round(time.monotonic() - start, 3), "sha256": digest.hexdigest()}


def pattern(size: int) -> bytes:
    block = hashlib.sha256(b"tfchaos").digest() * 2048
    return (block * (size // len(block) + 1))[:size]


def tcp_send(host: str, port: int, size: int) -> dict:
    data = pattern(size)
    sock = socket.create_connection((host, port), timeout=120)
    start = time.monotonic()
    sock.sendall(data)
    sock.shutdown(socket.SHUT_WR)
    sock.recv(1)
    return {"bytes": size, "seconds": round(time.monotonic() - start, 3), "sha256": hashlib.sha256(data).hexdigest()}


def main(argv: list[str]) -> int:
    cmd, args = argv[0], argv[1:]
    if cmd == "recv":
        out = recv(int(args[0]), float(args[1]))
    elif cmd == "send":
        out = send(args[0], int(args[1]), int(args[2]), float(args[3]), *(int(a) for a in args[4:5]))
    elif cmd == "echo":
        out = echo(int(args[0]))
    elif cmd == "rtt":
        out = rtt(args[0], int(args[1]), int(args[2]))
    elif cmd == "tcp-recv":
        out = tcp_recv(int(args[0]))
    elif cmd == "tcp-send":
        out = tcp_send(args[0], int(args[1]), int(args[2]))
    else:
        print(f"unknown command {cmd!r}", file=sys.stderr)
        return 2
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
