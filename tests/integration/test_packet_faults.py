"""The packet faults on real traffic between two containers on a project network.

Two unprivileged containers (the helper image: the Debian base with python3)
on their own labelled bridge network; each fault is injected into one of them
through a helper that joins its network namespace, exactly as in a run
(``chaos.netns.docker_helper``), and measured with ``chaos.netns.traffic``:
numbered UDP datagrams (lost, duplicated, out of order, corrupt; what a receiver
starved of CPU drops itself, its receive buffer full, is counted apart), round trips,
a TCP stream's digest, connects. After every heal the namespace is read again
by a fresh helper: no TFC- chain, netem qdisc or ifb device is left, and no
helper container either.
"""

from __future__ import annotations

import inspect
import json
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from chaos import LABEL_PROJECT, LABEL_RUN, PROJECT
from chaos.backends.docker.engine_objects import list_objects
from chaos.backends.docker.netns import LABEL_ROLE, ROLE, DockerNetns
from chaos.backends.docker.ownership import LABEL_SESSION, owner_labels
from chaos.faults.packet import (
    MtuBlackhole,
    PacketCorrupt,
    PacketDelay,
    PacketDuplicate,
    PacketLoss,
    PacketReorder,
    SilentDrop,
    SynDrop,
)
from chaos.images.netns_helper import ensure_helper_image
from chaos.netns import rules, traffic
from chaos.topology import Topology

pytestmark = pytest.mark.integration

TRAFFIC = inspect.getsource(traffic)
PORT = 9999


@pytest.fixture(scope="module")
def helper_image(docker_client):
    return ensure_helper_image(docker_client, progress=lambda msg: print(f"[images] {msg}", flush=True))


class Pair:
    """Two containers (0: sender, 1: receiver) on a network of their own, and the
    cluster verbs a packet fault uses (netns, tf_config, record)."""

    num_slots = 2

    def __init__(self, client, image: str) -> None:
        self.client = client
        self.run_id = uuid.uuid4().hex[:8]
        self.prefix = f"{PROJECT}-{self.run_id}"
        self.labels = {LABEL_PROJECT: PROJECT, LABEL_RUN: self.run_id, **owner_labels()}
        self.network = client.networks.create(self.prefix, driver="bridge", labels=self.labels)
        self.events: list = []
        self.containers = []
        try:
            for i in range(2):
                self.containers.append(
                    client.containers.run(
                        image,
                        entrypoint=["sleep", "infinity"],
                        command=[],
                        name=f"{self.prefix}-c{i}",
                        labels=self.labels,
                        network=self.network.name,
                        detach=True,
                        init=True,
                    )
                )
            for c in self.containers:
                c.reload()
        except BaseException:
            self.close()
            raise

    def address(self, index: int) -> str:
        return self.containers[index].attrs["NetworkSettings"]["Networks"][self.network.name]["IPAddress"]

    # --- the verbs a packet fault uses ---
    def netns(self, index: int) -> DockerNetns:
        return DockerNetns.join(
            self.client, self.containers[index], labels=self.labels, prefix=f"{self.prefix}-c{index}"
        )

    def tf_config(self, index: int) -> str:
        return Topology(2).tf_config(index)

    def record(self, event) -> None:
        self.events.append(event)

    # --- measuring ---
    def python(self, index: int, *args: str, detach: bool = False):
        argv = ["python3", "-c", TRAFFIC, *args]
        if detach:
            return self.containers[index].exec_run(argv, detach=True)
        result = self.containers[index].exec_run(argv)
        assert result.exit_code == 0, result.output.decode(errors="replace")
        return json.loads(result.output.decode().strip().splitlines()[-1])

    def udp(self, count: int, rate: float, size: int = 64, quiet_s: float = 2.0) -> dict:
        """Datagrams from 0 to 1; what 1 received."""
        out_file = f"/tmp/recv-{uuid.uuid4().hex[:6]}.json"
        self.containers[1].exec_run(
            ["sh", "-c", f'python3 -c "$1" recv {PORT} {quiet_s} > {out_file}', "sh", TRAFFIC], detach=True
        )
        self._wait_for(1, out_file)
        self.python(0, "send", self.address(1), str(PORT), str(count), str(rate), str(size))
        deadline = time.monotonic() + quiet_s + 30
        while time.monotonic() < deadline:
            result = self.containers[1].exec_run(["cat", out_file])
            lines = result.output.decode().strip().splitlines()
            if len(lines) >= 2:
                return json.loads(lines[-1])
            time.sleep(0.3)
        raise AssertionError("the receiver did not report")

    def _wait_for(self, index: int, path: str) -> None:
        for _ in range(100):
            if self.containers[index].exec_run(["test", "-s", path]).exit_code == 0:
                return
            time.sleep(0.1)
        raise AssertionError(f"{path} never appeared")

    def snmp(self, index: int, proto: str, field: str) -> int:
        text = self.containers[index].exec_run(["cat", "/proc/net/snmp"]).output.decode()
        head, values = [line.split()[1:] for line in text.splitlines() if line.startswith(f"{proto}:")]
        return int(values[head.index(field)])

    def leftovers(self, index: int) -> list[str]:
        """Our rules, qdiscs and devices in container ``index``'s namespace, read by a fresh helper."""
        ns = self.netns(index)
        try:
            saved = ns.run(["iptables-save"])
            qdiscs = ns.run(["tc", "qdisc", "show"])
            links = ns.run(["ip", "-o", "link", "show"])
        finally:
            ns.close()
        return rules.leftovers(saved, qdiscs, links)

    def helpers(self) -> list:
        return self.client.containers.list(
            all=True, filters={"label": [f"{LABEL_RUN}={self.run_id}", f"{LABEL_ROLE}={ROLE}"]}
        )

    def close(self) -> None:
        for c in self.client.containers.list(all=True, filters={"label": f"{LABEL_RUN}={self.run_id}"}):
            c.remove(force=True, v=True)
        self.network.remove()


@pytest.fixture
def pair(docker_client, helper_image):
    p = Pair(docker_client, helper_image)
    try:
        yield p
    finally:
        p.close()


def healed_clean(pair: Pair, undo, index: int) -> None:
    undo(pair)
    assert pair.helpers() == [], "the fault's helper container is still there after heal"
    assert pair.leftovers(index) == []
    assert pair.helpers() == []


@pytest.mark.parametrize("percent", [1, 5, 20])
def test_loss_rate_over_10000_datagrams_is_within_2_points(pair, percent):
    fault = PacketLoss(worker=1, percent=percent, direction="ingress")
    undo = fault.inject(pair)
    implementation = fault.inject_event(0).params["implementation"]  # as the runner records it, at the inject
    overflow = pair.snmp(1, "Udp", "RcvbufErrors")
    try:
        out = pair.udp(10_000, 2000)
    finally:
        healed_clean(pair, undo, 1)
    overflow = pair.snmp(1, "Udp", "RcvbufErrors") - overflow  # a receiver starved of CPU drops some itself
    lost = (10_000 - out["distinct"] - overflow) / 100
    print(
        f"packet_loss {percent}% ({implementation}): lost {lost:.2f}% ({overflow} more dropped by a full "
        f"receive buffer); {pair.events[0].text}"
    )
    assert abs(lost - percent) <= 2, out
    notice = [e for e in pair.events if e.topic == "packet_fault"]
    assert notice and "iptables statistic" in notice[0].text
    assert pair.udp(2000, 1000)["distinct"] == 2000  # healed: nothing lost any more


def test_corrupted_datagrams_are_dropped_by_the_checksum_and_counted_as_checksum_errors(pair):
    before = {f: pair.snmp(1, "Udp", f) for f in ("InCsumErrors", "InErrors", "NoPorts", "RcvbufErrors")}
    fault = PacketCorrupt(worker=1, percent=10, direction="ingress")
    undo = fault.inject(pair)
    try:
        out = pair.udp(10_000, 2000)
    finally:
        implementation = fault.inject_event(0).params["implementation"]
        healed_clean(pair, undo, 1)
    errors = {f: pair.snmp(1, "Udp", f) - before[f] for f in before}
    missing = 10_000 - out["distinct"]
    print(f"packet_corrupt 10%: received {out}, UDP counters {errors}")
    assert out["corrupt"] == 0  # none reached the application
    corrupted = missing - errors["RcvbufErrors"]  # a receiver starved of CPU drops some itself
    assert abs(corrupted / 100 - 10) <= 2
    # Each missing datagram was dropped by UDP as an error (a flipped port: NoPorts; a full
    # buffer counts as one too), most corrupted ones by the checksum.
    assert abs(errors["InErrors"] + errors["NoPorts"] - missing) <= 5, errors
    assert errors["InCsumErrors"] >= 0.9 * corrupted, errors
    assert implementation == "nfqueue"


def test_duplicated_datagrams_arrive_twice(pair):
    fault = PacketDuplicate(worker=0, percent=10, direction="egress")
    undo = fault.inject(pair)
    try:
        out = pair.udp(10_000, 2000)
    finally:
        healed_clean(pair, undo, 0)
    print(f"packet_duplicate 10%: {out}")
    assert out["distinct"] == 10_000
    assert abs(out["duplicates"] / 100 - 10) <= 2


def test_reordered_datagrams_overtake_the_held_ones(pair):
    fault = PacketReorder(worker=1, percent=25, delay_ms=10, direction="ingress")
    undo = fault.inject(pair)
    try:
        out = pair.udp(5000, 2000)
    finally:
        healed_clean(pair, undo, 1)
    print(f"packet_reorder 25%/10ms: {out}")
    assert out["distinct"] == 5000 and out["reordered"] > 500
    assert pair.udp(2000, 2000)["reordered"] == 0


def test_delay_adds_to_every_round_trip(pair):
    pair.python(1, "echo", "9997", detach=True)
    time.sleep(0.5)
    base = pair.python(0, "rtt", pair.address(1), "9997", "20")
    fault = PacketDelay(worker=1, delay_ms=100, direction="ingress")
    undo = fault.inject(pair)
    try:
        pair.python(1, "echo", "9996", detach=True)
        time.sleep(0.5)
        slow = pair.python(0, "rtt", pair.address(1), "9996", "20")
    finally:
        healed_clean(pair, undo, 1)
    print(f"packet_delay 100 ms: rtt {base} -> {slow}")
    assert slow["median_ms"] >= 100 > base["median_ms"] * 5 and slow["lost"] == 0


def test_mtu_blackhole_drops_only_what_is_longer(pair):
    fault = MtuBlackhole(worker=1, max_bytes=1400, direction="ingress")
    undo = fault.inject(pair)
    try:
        small = pair.udp(300, 1000, size=1000, quiet_s=1.0)
        big = pair.udp(300, 1000, size=1450, quiet_s=1.0)  # 1478-byte packets: under the MTU, over 1400
    finally:
        healed_clean(pair, undo, 1)
    print(f"mtu_blackhole 1400: 1000-byte datagrams {small}, 1450-byte {big}")
    assert small["distinct"] == 300 and big["distinct"] == 0
    assert pair.udp(300, 1000, size=1450, quiet_s=1.0)["distinct"] == 300


def test_syn_drop_times_out_new_connections_and_heal_lets_them_through(pair):
    pair.python(1, "tcp-recv", "9995", detach=True)
    time.sleep(0.5)
    fault = SynDrop(worker=1, direction="ingress")
    undo = fault.inject(pair)
    try:
        probe = (
            "import socket,sys\ntry:\n socket.create_connection((sys.argv[1], 9995), timeout=3)\n"
            " print('connected')\nexcept OSError as e:\n print(type(e).__name__)"
        )
        result = pair.containers[0].exec_run(["python3", "-c", probe, pair.address(1)])
        during = result.output.decode().strip()
    finally:
        healed_clean(pair, undo, 1)
    after = pair.containers[0].exec_run(["python3", "-c", probe, pair.address(1)]).output.decode().strip()
    print(f"syn_drop: during {during!r}, after {after!r}")
    assert during in ("TimeoutError", "timeout") and after == "connected"


def test_silent_drop_freezes_an_open_connection_without_fin_or_rst(pair):
    # A TCP stream that is open when the fault comes: its bytes stop, no error reaches either side.
    server = (
        "import socket,time,json\ns=socket.socket();s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
        "s.bind(('0.0.0.0',9994));s.listen(1);c,_=s.accept();n=0;c.settimeout(1.0);t=time.time()\n"
        "last=time.time()\nwhile time.time()-t<12:\n try:\n  d=c.recv(65536)\n  if not d: break\n"
        "  n+=len(d);last=time.time()\n except socket.timeout: pass\n"
        "print(json.dumps({'bytes':n,'quiet_s':round(time.time()-last,1)}))"
    )
    client = (
        "import socket,time,sys\nc=socket.create_connection((sys.argv[1],9994));c.settimeout(1.0)\n"
        "t=time.time()\nwhile time.time()-t<12:\n try: c.send(b'x'*1000)\n except OSError as e:\n"
        "  print(type(e).__name__); time.sleep(0.5)\n time.sleep(0.01)"
    )
    out_file = "/tmp/silent.json"
    pair.containers[1].exec_run(["sh", "-c", f'python3 -c "$1" > {out_file}', "sh", server], detach=True)
    time.sleep(0.5)
    pair.containers[0].exec_run(["python3", "-c", client, pair.address(1)], detach=True)
    time.sleep(2)
    fault = SilentDrop(worker=1, connections="open")
    undo = fault.inject(pair)
    try:
        time.sleep(11)
        result = json.loads(pair.containers[1].exec_run(["cat", out_file]).output.decode().strip() or "{}")
    finally:
        healed_clean(pair, undo, 1)
    print(f"silent_drop: {result}")
    assert result["bytes"] > 0 and result["quiet_s"] >= 5  # data flowed, then nothing, and no FIN/RST ended it


# --- a whole run, interrupted --------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
LOSS_SCENARIO = ROOT / "scenarios" / "packet-loss-20pct-on-one-worker-slows-every-step.yaml"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "sigkill-then-clean"])
def test_an_interrupted_run_leaves_no_helper_and_no_rule(images, helper_image, docker_client, sig):
    from test_cleanup import Chaos  # the same subprocess harness as every interrupt test

    run = Chaos("run", str(LOSS_SCENARIO), "-j", "1")
    assert run.wait_for_line("FAULT packet_loss on worker-1 injected"), "".join(run.lines)[-3000:]
    helpers = [o for o in list_objects(docker_client, {LABEL_SESSION: run.session}) if o.labels.get(LABEL_ROLE) == ROLE]
    assert len(helpers) == 1, "the fault's helper should be in the worker's namespace now"
    run.proc.send_signal(sig)
    code, out = run.finish(timeout=120)
    if sig == signal.SIGINT:
        assert code == 130 and "Traceback" not in out, out[-3000:]
    else:
        assert run.objects(docker_client), "a SIGKILLed run leaves its objects, the helper among them"
        clean = subprocess.run([sys.executable, "-m", "chaos", "clean"], capture_output=True, text=True, timeout=120)
        assert clean.returncode == 0, clean.stdout + clean.stderr
    # the workers' namespaces went with their containers; the helper with the run
    assert run.objects(docker_client) == [], out[-2000:]
