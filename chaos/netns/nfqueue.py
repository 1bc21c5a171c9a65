"""The userspace packet shaper, for kernels without sch_netem, and the probe of
what a namespace's kernel can do. Standard library only: it runs in the helper
container as ``python3 -c <this file> serve '<json config>'`` (or ``probe``).

``serve`` binds an NFQUEUE (raw nfnetlink, no libnetfilter_queue) and gives
every queued packet a verdict, with netem's vocabulary and semantics:

- ``loss_pct`` (+ ``loss_correlation_pct``): drop (correlated: in bursts, at
  the same average rate; see ``Bursty``);
- ``corrupt_pct``: flip one random bit past the IP header, so the transport's
  checksum (TCP, UDP) is what catches it, as on a wire; the kernel marks a
  packet whose payload a queue rewrote as not checksummed (CHECKSUM_NONE), so
  the receiver verifies it;
- ``duplicate_pct``: accept, and send a copy through a raw socket whose packets
  carry ``mark`` (the queue's rule skips them); egress only;
- ``delay_ms`` ± ``jitter_ms`` (+ ``delay_correlation_pct``): the verdict is
  held, the packet leaves late;
- ``reorder_pct`` (with ``delay_ms``): that share of packets leaves at once,
  the others late, so the early ones overtake (netem's ``delay D reorder P``).

Packets the kernel queued as one GSO super-packet are segmented before they
reach the queue (the queue asks for no GSO), so each decision is about one
packet of at most the MTU. It writes its counters to ``/tmp/tfchaos-nfq-<queue>.json``
every second and at exit (SIGTERM: every held packet is released first).
"""

from __future__ import annotations

import heapq
import json
import os
import random
import select
import signal
import socket
import struct
import subprocess
import sys
import time

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET, NFQNL_MSG_VERDICT, NFQNL_MSG_CONFIG = 0, 1, 2
NFQA_CFG_CMD, NFQA_CFG_PARAMS, NFQA_CFG_QUEUE_MAXLEN = 1, 2, 3
NFQNL_CFG_CMD_BIND, NFQNL_CFG_CMD_UNBIND = 1, 2
NFQNL_COPY_PACKET = 2
NFQA_PACKET_HDR, NFQA_VERDICT_HDR, NFQA_PAYLOAD = 1, 2, 10
NF_DROP, NF_ACCEPT = 0, 1
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
SOL_NETLINK, NETLINK_NO_ENOBUFS = 270, 5
SO_MARK = 36
NLMSG_HDR = struct.Struct("=IHHII")
NFGEN = struct.Struct("!BBH")
QUEUE_MAXLEN = 8192


def _attr(kind: int, data: bytes) -> bytes:
    size = 4 + len(data)
    return struct.pack("=HH", size, kind) + data + b"\0" * ((4 - size % 4) % 4)


def _attrs(data: bytes) -> dict[int, bytes]:
    out = {}
    pos = 0
    while pos + 4 <= len(data):
        size, kind = struct.unpack_from("=HH", data, pos)
        if size < 4:
            break
        out[kind & 0x7FFF] = data[pos + 4 : pos + size]
        pos += (size + 3) & ~3
    return out


class Queue:
    """One bound NFQUEUE."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.seq = 0
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
        self.sock.bind((0, 0))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        try:
            self.sock.setsockopt(SOL_NETLINK, NETLINK_NO_ENOBUFS, 1)
        except OSError:
            pass
        self._config(_attr(NFQA_CFG_CMD, struct.pack("!BBH", NFQNL_CFG_CMD_BIND, 0, socket.AF_INET)))
        self._config(_attr(NFQA_CFG_PARAMS, struct.pack("!IB", 0xFFFF, NFQNL_COPY_PACKET)))
        self._config(_attr(NFQA_CFG_QUEUE_MAXLEN, struct.pack("!I", QUEUE_MAXLEN)))

    def _send(self, msg_type: int, flags: int, payload: bytes) -> None:
        self.seq += 1
        body = NFGEN.pack(socket.AF_UNSPEC, 0, self.number) + payload
        self.sock.send(
            NLMSG_HDR.pack(NLMSG_HDR.size + len(body), (NFNL_SUBSYS_QUEUE << 8) | msg_type, flags, self.seq, 0) + body
        )

    def _config(self, payload: bytes) -> None:
        self._send(NFQNL_MSG_CONFIG, NLM_F_REQUEST | NLM_F_ACK, payload)
        while True:
            data = self.sock.recv(65536)
            for msg_type, body in self._messages(data):
                if msg_type == NLMSG_ERROR:
                    (error,) = struct.unpack_from("=i", body)
                    if error:
                        raise OSError(-error, f"nfqueue {self.number} config: {os.strerror(-error)}")
                    return

    @staticmethod
    def _messages(data: bytes):
        pos = 0
        while pos + NLMSG_HDR.size <= len(data):
            size, msg_type, _flags, _seq, _pid = NLMSG_HDR.unpack_from(data, pos)
            if size < NLMSG_HDR.size:
                break
            yield msg_type, data[pos + NLMSG_HDR.size : pos + size]
            pos += (size + 3) & ~3

    def packets(self):
        """(packet id, payload) of every packet in one read."""
        data = self.sock.recv(1 << 20)
        for msg_type, body in self._messages(data):
            if msg_type != (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
                continue
            attrs = _attrs(body[NFGEN.size :])
            if NFQA_PACKET_HDR not in attrs:
                continue
            (packet_id,) = struct.unpack_from("!I", attrs[NFQA_PACKET_HDR])
            yield packet_id, attrs.get(NFQA_PAYLOAD, b"")

    def verdict(self, packet_id: int, verdict: int, payload: bytes | None = None) -> None:
        body = _attr(NFQA_VERDICT_HDR, struct.pack("!II", verdict, packet_id))
        if payload is not None:
            body += _attr(NFQA_PAYLOAD, payload)
        self._send(NFQNL_MSG_VERDICT, NLM_F_REQUEST, body)

    def close(self) -> None:
        try:
            self._send(
                NFQNL_MSG_CONFIG,
                NLM_F_REQUEST,
                _attr(NFQA_CFG_CMD, struct.pack("!BBH", NFQNL_CFG_CMD_UNBIND, 0, socket.AF_INET)),
            )
        except OSError:
            pass
        self.sock.close()


class Correlated:
    """netem's correlated uniform random: next = c * last + (1 - c) * fresh."""

    def __init__(self, rng: random.Random, correlation_pct: float) -> None:
        self.rng, self.c, self.last = rng, correlation_pct / 100.0, rng.random()

    def __call__(self) -> float:
        self.last = self.c * self.last + (1 - self.c) * self.rng.random()
        return self.last


class Bursty:
    """Loss as a two-state Markov chain that keeps the average rate ``p`` and
    makes losses come in bursts as ``correlation`` grows: after a loss the next
    packet is lost with ``c + (1 - c) p``, after a delivery with ``(1 - c) p``
    (mean burst length ``1 / ((1 - c)(1 - p))``). netem's own correlation
    averages uniform draws instead, which lowers the loss rate it gives (5 %
    with 25 % correlation gave 0.2 % here), the flaw its manual warns of."""

    def __init__(self, rng: random.Random, p: float, correlation_pct: float) -> None:
        c = correlation_pct / 100.0
        self.rng, self.after_loss, self.after_ok, self.lost = rng, c + (1 - c) * p, (1 - c) * p, False

    def __call__(self) -> bool:
        self.lost = self.rng.random() < (self.after_loss if self.lost else self.after_ok)
        return self.lost


class Shaper:
    """The decisions, apart from the socket (unit-tested with a seeded rng)."""

    def __init__(self, config: dict, rng: random.Random | None = None) -> None:
        self.rng = rng or random.Random(config.get("seed"))
        self.loss = config.get("loss_pct", 0.0) / 100.0
        self.corrupt = config.get("corrupt_pct", 0.0) / 100.0
        self.duplicate = config.get("duplicate_pct", 0.0) / 100.0
        self.reorder = config.get("reorder_pct", 0.0) / 100.0
        self.delay_s = config.get("delay_ms", 0.0) / 1000.0
        self.jitter_s = config.get("jitter_ms", 0.0) / 1000.0
        self.lose = Bursty(self.rng, self.loss, config.get("loss_correlation_pct", 0.0))
        self.delay_draw = Correlated(self.rng, config.get("delay_correlation_pct", 0.0))
        self.counts = {"seen": 0, "dropped": 0, "corrupted": 0, "duplicated": 0, "delayed": 0, "reordered": 0}

    def decide(self, payload: bytes) -> tuple[str, bytes | None, float, bool]:
        """(verdict "drop"/"accept", new payload or None, seconds to hold, duplicate?)."""
        self.counts["seen"] += 1
        if self.loss and self.lose():
            self.counts["dropped"] += 1
            return "drop", None, 0.0, False
        new = None
        if self.corrupt and self.rng.random() < self.corrupt:
            new = corrupt(payload, self.rng)
            self.counts["corrupted"] += 1 if new is not None else 0
        hold = 0.0
        if self.delay_s or self.jitter_s:
            if self.reorder and self.rng.random() < self.reorder:
                self.counts["reordered"] += 1  # leaves now: overtakes the held ones
            else:
                hold = max(0.0, self.delay_s + (2 * self.delay_draw() - 1) * self.jitter_s)
                self.counts["delayed"] += 1
        dup = bool(self.duplicate and self.rng.random() < self.duplicate)
        self.counts["duplicated"] += dup
        return "accept", new, hold, dup


def corrupt(packet: bytes, rng: random.Random) -> bytes | None:
    """One random bit flipped past the IPv4 header (None: nothing past it)."""
    if len(packet) < 20 or packet[0] >> 4 != 4:
        return None
    start = (packet[0] & 0x0F) * 4
    if len(packet) <= start:
        return None
    pos = rng.randrange(start, len(packet))
    out = bytearray(packet)
    out[pos] ^= 1 << rng.randrange(8)
    return bytes(out)


def serve(config: dict) -> int:
    queue = Queue(int(config["queue"]))
    shaper = Shaper(config)
    stats_path = f"/tmp/tfchaos-nfq-{queue.number}.json"
    raw = None
    if shaper.duplicate:
        raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        raw.setsockopt(socket.SOL_SOCKET, SO_MARK, int(config.get("mark", 0)))
    held: list[tuple[float, int, int, bytes | None]] = []
    order = 0
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    signal.signal(signal.SIGINT, lambda *_: stop.append(True))
    last_write = 0.0

    def write_stats() -> None:
        tmp = stats_path + ".tmp"
        with open(tmp, "w") as fh:
            json.dump({**shaper.counts, "held": len(held)}, fh)
        os.replace(tmp, stats_path)

    with open(f"/tmp/tfchaos-nfq-{queue.number}.pid", "w") as fh:
        fh.write(str(os.getpid()))
    print(json.dumps({"serving": queue.number}), flush=True)
    while not stop:
        now = time.monotonic()
        timeout = max(0.0, held[0][0] - now) if held else 0.5
        try:
            ready, _, _ = select.select([queue.sock], [], [], min(timeout, 0.5))
        except InterruptedError:
            continue
        if ready:
            try:
                batch = list(queue.packets())
            except OSError:  # ENOBUFS and the like: carry on
                batch = []
            for packet_id, payload in batch:
                verdict, new, hold, dup = shaper.decide(payload)
                if verdict == "drop":
                    queue.verdict(packet_id, NF_DROP)
                    continue
                if hold > 0:
                    order += 1
                    heapq.heappush(held, (time.monotonic() + hold, order, packet_id, new))
                else:
                    queue.verdict(packet_id, NF_ACCEPT, new)
                if dup and raw is not None and len(payload) >= 20:
                    try:
                        raw.sendto(new or payload, (socket.inet_ntoa(payload[16:20]), 0))
                    except OSError:
                        pass
        now = time.monotonic()
        while held and held[0][0] <= now:
            _, _, packet_id, new = heapq.heappop(held)
            queue.verdict(packet_id, NF_ACCEPT, new)
        if now - last_write >= 1.0:
            write_stats()
            last_write = now
    while held:  # release what is held: a heal loses nothing it did not mean to
        _, _, packet_id, new = heapq.heappop(held)
        queue.verdict(packet_id, NF_ACCEPT, new)
    write_stats()
    queue.close()
    return 0


def _run(argv: list[str]) -> tuple[bool, str]:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    text = (proc.stderr or proc.stdout).strip()
    return proc.returncode == 0, text.splitlines()[-1] if text else ""


def probe(toward: str | None = None) -> dict:
    """What this namespace's kernel can do, tried for real and undone at once, and the
    interface toward ``toward`` (a host name)."""
    why: dict[str, str] = {}
    found: dict[str, object] = {}
    ok, out = _run(["tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "0ms"])
    found["netem"] = ok
    if ok:
        _run(["tc", "qdisc", "del", "dev", "lo", "root"])
    else:
        why["netem"] = f"tc qdisc add ... netem: {out}"
    ok, out = _run(["ip", "link", "add", "tfcprobe", "type", "ifb"])
    found["ifb"] = ok
    if ok:
        _run(["ip", "link", "del", "tfcprobe"])
    else:
        why["ifb"] = f"ip link add ... type ifb: {out}"
    chain = "TFC-probe"
    ok, out = _run(["iptables", "-w", "-N", chain])
    if not ok:
        why["iptables"] = f"iptables -N: {out}"
    for name, rule in (
        ("statistic", ["-m", "statistic", "--mode", "random", "--probability", "0.5"]),
        ("length", ["-m", "length", "--length", "1:2"]),
        ("nfqueue_target", ["-j", "NFQUEUE", "--queue-num", "65000", "--queue-bypass"]),
    ):
        good, out = _run(["iptables", "-w", "-A", chain, *rule]) if ok else (False, why["iptables"])
        found[name] = good
        if not good:
            why[name] = out
    if ok:
        _run(["iptables", "-w", "-F", chain])
        _run(["iptables", "-w", "-X", chain])
    try:
        Queue(65001).close()
        bound = True
    except OSError as exc:
        bound, why["nfqueue"] = False, f"binding a queue: {exc}"
    found["nfqueue"] = bool(found.pop("nfqueue_target")) and bound
    if not found["nfqueue"] and "nfqueue" not in why:
        why["nfqueue"] = why.get("nfqueue_target", "")
    found["iface"] = route_device(toward)
    found["why"] = why
    return found


def route_device(toward: str | None) -> str:
    """The interface traffic to ``toward`` (the proxy's name) leaves by, else the default
    route's: a swarm task's default route is its docker_gwbridge (eth1), not the overlay
    its peers are on (measured: eth0, the overlay, 10.0.x.0/24)."""
    try:
        address = socket.getaddrinfo(toward, None, socket.AF_INET)[0][4][0] if toward else None
    except OSError:
        address = None
    ok, out = _run(["ip", "-o", "route", "get", address] if address else ["ip", "-o", "route", "show", "default"])
    words = out.split()
    return words[words.index("dev") + 1] if ok and "dev" in words else "eth0"


def main(argv: list[str]) -> int:
    if argv[:1] == ["probe"] and len(argv) <= 2:
        print(json.dumps(probe(*argv[1:])), flush=True)
        return 0
    if argv[:1] == ["serve"] and len(argv) == 2:
        return serve(json.loads(argv[1]))
    print("usage: nfqueue.py probe [HOST] | serve '<json config>'", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
