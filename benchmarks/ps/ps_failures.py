"""Measure what ParameterServerStrategy does when one task fails.

Brings up chief (coordinator) + PS + workers of the worker image on a labelled
network of its own (no proxy: names resolve directly), lets the coordinator
train (ps_probe.py), injects one failure at a step, optionally heals it, and
prints every container's lines with seconds since the inject.

    python benchmarks/ps/ps_failures.py kill-ps
    python benchmarks/ps/ps_failures.py kill-worker --hold 20
    python benchmarks/ps/ps_failures.py CASE --ps 2 --image tfchaos/worker:tf2.20

Cases: kill-ps kill-worker pause-ps pause-worker partition-ps partition-worker
kill-chief pause-chief partition-chief fit-bar fit-nobar. Everything created
carries the label io.tfchaos.probe=ps and is removed at the end (not when the
driver itself is SIGKILLed or timed out: then remove that label's objects by
hand). Results and exact log lines: docs/findings.md "Parameter servers".
"""

from __future__ import annotations

import argparse
import json
import threading
import time
import uuid
from pathlib import Path

import docker

HERE = Path(__file__).resolve().parent
PORT = 2222
LABELS = {"io.tfchaos.probe": "ps"}
PROBE_SOURCE = (HERE / "ps_probe.py").read_text()

CASES = {
    # case: (action, target, heal)
    "kill-ps": ("kill", "ps-0", None),
    "kill-worker": ("kill", "worker-1", "start"),
    "pause-ps": ("pause", "ps-0", "unpause"),
    "pause-worker": ("pause", "worker-1", "unpause"),
    "partition-ps": ("disconnect", "ps-0", "connect"),
    "partition-worker": ("disconnect", "worker-1", "connect"),
    "kill-chief": ("kill", "chief", "new-chief"),
    "pause-chief": ("pause", "chief", "unpause"),
    "partition-chief": ("disconnect", "chief", "connect"),
    "fit-bar": (None, None, None),
    "fit-nobar": (None, None, None),
}


class Run:
    def __init__(self, args):
        self.args = args
        self.client = docker.from_env()
        self.id = uuid.uuid4().hex[:6]
        self.lines: list[tuple[float, str, str]] = []
        self.lock = threading.Lock()
        self.containers = {}
        self.created = []
        self.t_inject = None
        self.out = Path(args.out) / f"{args.case}-{self.id}"
        self.out.mkdir(parents=True, exist_ok=True)

    def cluster(self):
        return {
            "chief": [f"chief:{PORT}"],
            "ps": [f"ps-{i}:{PORT + 20 + i}" for i in range(self.args.ps)],
            "worker": [f"worker-{i}:{PORT + 1 + i}" for i in range(self.args.workers)],
        }

    def start(self, name, env_extra=None, gen=0):
        kind, _, idx = name.rpartition("-") if name != "chief" else ("chief", "", "0")
        tf_config = json.dumps({"cluster": self.cluster(), "task": {"type": kind, "index": int(idx)}})
        # Low-level API: the high-level one drops network aliases at create.
        api = self.client.api
        created = api.create_container(
            self.args.image,
            name=f"psprobe-{self.id}-{name}-g{gen}",
            labels=LABELS,
            entrypoint=["/opt/venv/bin/python", "-c", PROBE_SOURCE],
            environment={
                "TF_CONFIG": tf_config,
                "TF_CPP_MIN_LOG_LEVEL": "0",
                **dict(kv.split("=", 1) for kv in self.args.env),
                **(env_extra or {}),
            },
            host_config=api.create_host_config(
                binds={self.volume.name: {"bind": "/backup", "mode": "rw"}}, network_mode=self.net.name, init=True
            ),
            networking_config=api.create_networking_config({self.net.name: api.create_endpoint_config(aliases=[name])}),
        )
        c = self.client.containers.get(created["Id"])
        c.start()
        self.containers[name] = c
        self.created.append(c)  # a replaced chief must be removed too
        threading.Thread(target=self.follow, args=(c, name), daemon=True).start()
        return c

    def follow(self, c, name, since=None):
        buf = b""
        # since: a restarted container's log would replay its first run's lines
        for chunk in c.logs(stream=True, follow=True, since=since):
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                with self.lock:
                    self.lines.append((time.time(), name, line.decode(errors="replace")))
        try:
            code = c.wait(timeout=5)["StatusCode"]
        except Exception:
            code = "?"
        with self.lock:
            self.lines.append((time.time(), name, f"[exited {code}]"))

    def events(self, name, kind=None):
        with self.lock:
            out = []
            for _t, n, line in self.lines:
                if n == name and line.startswith("{"):
                    try:
                        ev = json.loads(line)
                    except ValueError:
                        continue
                    if kind is None or ev.get("kind") == kind:
                        out.append(ev)
            return out

    def wait(self, pred, timeout):
        end = time.time() + timeout
        while time.time() < end:
            if pred():
                return True
            time.sleep(0.2)
        return False

    def act(self, action, target):
        c = self.containers[target]
        if action == "kill":
            c.kill()
        elif action == "pause":
            c.pause()
        elif action == "unpause":
            c.unpause()
        elif action == "disconnect":
            self.net.disconnect(c, force=True)
        elif action == "connect":
            self.net.connect(c, aliases=[target])
        elif action == "start":
            since = int(time.time())
            c.start()
            threading.Thread(target=self.follow, args=(c, target, since), daemon=True).start()
        elif action == "new-chief":
            self.start("chief", gen=1)
        self.mark(f"[{action} {target}]")

    def mark(self, text):
        with self.lock:
            self.lines.append((time.time(), "driver", text))

    def main(self):
        a = self.args
        action, target, heal = CASES[a.case]
        self.net = self.client.networks.create(f"psprobe-{self.id}", driver="bridge", labels=LABELS)
        self.volume = self.client.volumes.create(f"psprobe-{self.id}", labels=LABELS)
        try:
            for i in range(a.ps):
                self.start(f"ps-{i}")
            for i in range(a.workers):
                self.start(f"worker-{i}")
            env = {"STEPS": str(a.steps), "STACKS_AFTER": "600"}
            if a.case.startswith("fit-"):
                env["MODE"] = "fit_bar"
                env["BAR"] = "1" if a.case == "fit-bar" else "0"
            self.start("chief", env)
            if action is None:
                self.wait(lambda: self.events("chief", "done") or self.events("chief", "error"), a.observe)
                return
            ok = self.wait(lambda: any(e["step"] >= a.at for e in self.events("chief", "step")), 180)
            if not ok:
                self.mark("[chief never reached the fault step]")
                return
            self.t_inject = time.time()
            self.act(action, target)
            self.wait(lambda: self.events("chief", "error") or self.events("chief", "done"), a.hold)
            if heal and not (self.events("chief", "error") and heal != "new-chief"):
                self.act(heal, target)
            self.wait(lambda: self.events("chief", "error") or self.events("chief", "done"), a.observe)
        finally:
            self.report()
            for c in self.created:
                try:
                    c.remove(force=True, v=True)
                except Exception:
                    pass
            # a partitioned container may still be removed; then the network
            for _ in range(5):
                try:
                    self.net.remove()
                    break
                except Exception:
                    time.sleep(1)
            try:
                self.volume.remove(force=True)
            except Exception:
                pass

    def report(self):
        t0 = self.t_inject or (self.lines[0][0] if self.lines else time.time())
        with self.lock:
            lines = sorted(self.lines)
        with open(self.out / "all.log", "w") as f:
            for t, n, line in lines:
                f.write(f"{t - t0:+9.2f} {n:9s} {line}\n")
        keep = [
            (t, n, l)
            for t, n, l in lines
            if n in ("chief", "driver")
            or "exited" in l
            or '"kind": "server"' in l
            or "rror" in l
            or "ecover" in l
            or "ailed" in l
        ]
        # Worker "exec" counts per 5 s window after the inject: which worker trains.
        for t, n, line in keep:
            if n == "chief" and '"kind": "step"' in line and t < t0 - 3:
                continue
            print(f"{t - t0:+9.2f} {n:9s} {line[:600]}")
        print("exec lines per worker per 5 s window (window start relative to inject):")
        names = sorted({n for _, n, _ in lines if n.startswith("worker")})
        for n in names:
            counts = {}
            for t, m, line in lines:
                if m == n and "exec" in line:
                    w = int((t - t0) // 5) * 5
                    counts[w] = counts.get(w, 0) + 1
            print(f"  {n}: " + " ".join(f"{w:+d}:{c}" for w, c in sorted(counts.items())))
        print(f"full log: {self.out / 'all.log'}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("case", choices=sorted(CASES))
    p.add_argument("--image", default="tfchaos/worker:tf2.20")
    p.add_argument("--ps", type=int, default=1)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--at", type=int, default=200, help="inject once the chief reports this step")
    p.add_argument("--hold", type=float, default=20, help="seconds before the heal")
    p.add_argument("--observe", type=float, default=60, help="seconds after the heal")
    p.add_argument("--steps", type=int, default=1000000)
    p.add_argument("--out", default="/tmp/psprobe")
    p.add_argument("--env", action="append", default=[], help="K=V for every container")
    Run(p.parse_args()).main()


if __name__ == "__main__":
    main()
