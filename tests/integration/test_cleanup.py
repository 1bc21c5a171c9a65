"""Nothing is left running: Ctrl-C tears a run down, and ``chaos clean``
removes what a crashed run (killed with no chance to tear down) left."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from chaos.cluster.docker_api import list_labelled


def leftovers(client):
    return list_labelled(client, any_run=True)

pytestmark = pytest.mark.integration


def start_baseline() -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "chaos", "baseline", "--epochs", "50"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def wait_for_workers(client, proc, timeout=120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any("worker" in name for name in leftovers(client)):
            return
        if proc.poll() is not None:
            pytest.fail(f"baseline exited early: {proc.stdout.read()}")
        time.sleep(0.5)
    proc.kill()
    pytest.fail("no worker container appeared")


def test_ctrl_c_tears_everything_down(images, docker_client):
    proc = start_baseline()
    wait_for_workers(docker_client, proc)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, out
    assert leftovers(docker_client) == []


def test_clean_removes_what_a_crashed_run_left(images, docker_client):
    proc = start_baseline()
    wait_for_workers(docker_client, proc)
    proc.kill()  # SIGKILL: no teardown runs
    proc.communicate(timeout=30)
    assert leftovers(docker_client), "a crashed run should have left its containers"
    result = subprocess.run(
        [sys.executable, "-m", "chaos", "clean"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert leftovers(docker_client) == []
