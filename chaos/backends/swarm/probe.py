"""Whether a task on one swarm node reaches a task on another across the
overlay: a TCP echo server placed on one node and a client placed on another,
both Swarm services (endpoint mode dnsrr) on the overlay network, written in
the image's own ``python3`` (the worker image's, as a TF task would use it).

Used by the swarm integration test and for the figures in docs/backends.md.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from chaos.backends.swarm.plan import ENDPOINT_MODE, OVERLAY_NETWORK

ECHO_PORT = 7000
SERVER = f"""
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", {ECHO_PORT})); s.listen(8)
while True:
    c, _ = s.accept()
    data = c.recv(65536)
    c.sendall(data); c.close()
"""
CLIENT = f"""
import socket, sys, time
host = sys.argv[1]
t0 = time.monotonic(); last = None
while time.monotonic() - t0 < 60:
    try:
        c = socket.create_connection((host, {ECHO_PORT}), timeout=3)
        t1 = time.monotonic(); payload = b"x" * 4000  # > one 1400-byte overlay packet
        c.sendall(payload); got = b""
        while len(got) < len(payload):
            part = c.recv(65536)
            if not part: break
            got += part
        ok = got == payload
        print("echo", "ok" if ok else "short", len(got), "bytes", "rtt_ms", round((time.monotonic() - t1) * 1000, 2),
              "after_s", round(t1 - t0, 2), "from", socket.gethostbyname(socket.gethostname()),
              "to", socket.gethostbyname(host), flush=True)
        sys.exit(0 if ok else 1)
    except OSError as exc:
        last = exc; time.sleep(0.5)
print("unreachable", host, last, flush=True); sys.exit(2)
"""


@dataclass
class Reach:
    ok: bool
    seconds: float  # from creating the services to the client's exit
    server_node: str
    client_node: str
    output: str  # the client's last line


def _task_of(service):
    tasks = service.tasks()
    return tasks[0] if tasks else None


def cross_node_echo(swarm, image: str, server: int = 2, client: int = 3, timeout_s: float = 120.0) -> Reach:
    """Run the echo pair with the server on node ``server`` and the client on node
    ``client``; remove both services whatever happens."""
    manager = swarm.client(1)
    plan = swarm.plan
    tag = uuid.uuid4().hex[:6]
    server_name = f"echo-{tag}"
    common = {"networks": [OVERLAY_NETWORK], "endpoint_spec": None, "labels": plan.labels()}
    from docker.types import EndpointSpec, RestartPolicy

    common["endpoint_spec"] = EndpointSpec(mode=ENDPOINT_MODE)
    services = []
    t0 = time.monotonic()
    try:
        services.append(
            manager.services.create(
                image,
                command=["python3", "-c", SERVER],
                name=server_name,
                constraints=[f"node.hostname=={plan.hostname(server)}"],
                **common,
            )
        )
        services.append(
            manager.services.create(
                image,
                command=["python3", "-c", CLIENT, server_name],
                name=f"probe-{tag}",
                constraints=[f"node.hostname=={plan.hostname(client)}"],
                restart_policy=RestartPolicy(condition="none"),
                **common,
            )
        )
        probe = services[-1]
        deadline = t0 + timeout_s
        state, exit_code = "", None
        while time.monotonic() < deadline:
            task = _task_of(probe)
            if task:
                status = task.get("Status") or {}
                state = status.get("State", "")
                if state in ("complete", "failed", "rejected", "shutdown"):
                    exit_code = (status.get("ContainerStatus") or {}).get("ExitCode")
                    break
            time.sleep(0.5)
        seconds = time.monotonic() - t0
        try:
            logs = b"".join(probe.logs(stdout=True, stderr=True)).decode(errors="replace").strip().splitlines()
        except Exception as exc:  # noqa: BLE001 - the logs are only evidence
            logs = [f"(no logs: {exc})"]
        last = logs[-1] if logs else f"(task {state or 'not started'}, exit {exit_code})"
        return Reach(
            state == "complete" and exit_code == 0, seconds, plan.hostname(server), plan.hostname(client), last
        )
    finally:
        for s in services:
            try:
                s.remove()
            except Exception:  # noqa: BLE001 - gone with the nodes anyway
                pass
