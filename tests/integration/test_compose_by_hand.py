"""Explore by hand, for real: the generated docker-compose.yml trains, and
`chaos compose --inject` puts a fault on it and takes it off again (docs/explore-by-hand.md). Its own compose project and API port, so a cluster a
person runs next door is not touched."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from chaos.backends.proxy_client import ProxyClient
from chaos.compose.control import ComposeControl
from chaos.compose.files import API_PORT_ENV
from chaos.compose.inject import inject_for, parse_fault, proxy_api
from chaos.compose.watch import compose_containers

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _compose(project: str, port: int, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, API_PORT_ENV: str(port)}
    return subprocess.run(
        ["docker-compose", "-p", project, "-f", str(ROOT / "docker-compose.yml"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def compose_cluster(images, docker_client):
    project, port = f"tfchaos-by-hand-{os.getpid()}", _free_port()
    try:
        up = _compose(project, port, "up", "-d")
        assert up.returncode == 0, up.stderr[-2000:]
        deadline = time.monotonic() + 180
        while True:  # training: worker-1 has reported steps
            workers = compose_containers(docker_client, project)
            logs = workers["worker-1"].logs(tail=5).decode(errors="replace") if "worker-1" in workers else ""
            if '"event":"step"' in logs:
                break
            assert time.monotonic() < deadline, f"the compose cluster did not start training in 180 s: {logs[-1500:]}"
            time.sleep(2)
        yield project, port
    finally:
        down = _compose(project, port, "down", "-v", "--timeout", "2")
        assert down.returncode == 0, down.stderr[-2000:]


def test_an_injected_fault_is_on_while_it_lasts_and_healed_after(compose_cluster, docker_client):
    project, port = compose_cluster
    containers = compose_containers(docker_client, project)
    assert proxy_api(containers["proxy"]) == ("127.0.0.1", port)

    # Through the CLI, as docs/explore-by-hand.md shows it: a toxic on worker-1's route for 4 s.
    proxies = ProxyClient("127.0.0.1", port)
    cli = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "chaos",
            "compose",
            "--project",
            project,
            "--inject",
            "latency: {worker: 1, latency_ms: 50}",
            "--for",
            "4",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen = []
    while cli.poll() is None:
        seen.append(sorted(proxies.proxy("worker-1").toxics()))
        time.sleep(0.3)
    out = cli.stdout.read()
    assert cli.returncode == 0, out
    assert any(seen), f"no toxic on worker-1 while the inject lasted: {seen}; {out}"
    assert proxies.proxy("worker-1").toxics() == {}, "the toxic stayed after the heal"
    assert "FAULT latency on worker-1 injected" in out and "FAULT latency on worker-1 healed" in out

    # A frozen host, stopped by hand (what Ctrl-C does): paused while on, running after.
    workers = {n: c for n, c in containers.items() if n.startswith("worker-")}
    stop = threading.Event()
    said: list[str] = []
    inject = threading.Thread(
        target=inject_for,
        args=(
            parse_fault("pause_worker: {worker: 1}"),
            ComposeControl(workers, lambda e: None, "127.0.0.1", port),
            None,
            said.append,
            stop,
        ),
    )
    inject.start()
    deadline = time.monotonic() + 30
    while not workers["worker-1"].attrs["State"].get("Paused"):
        assert time.monotonic() < deadline, "worker-1 was not paused"
        time.sleep(0.3)
        workers["worker-1"].reload()
    stop.set()
    inject.join(30)
    workers["worker-1"].reload()
    assert (
        workers["worker-1"].attrs["State"]["Status"] == "running" and not workers["worker-1"].attrs["State"]["Paused"]
    )
    assert said[-1] == "FAULT pause_worker on worker-1 healed"
