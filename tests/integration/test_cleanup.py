"""Nothing is left running: Ctrl-C tears a run down, and ``chaos clean``
removes what a crashed run (killed with no chance to tear down) left."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from run_scope import new_runs, objects_of, run_ids  # noqa: E402  (conftest puts it on sys.path)


class Leftovers:
    """What runs started after this object was made left behind (other sessions' runs don't count)."""

    def __init__(self, client) -> None:
        self.client = client
        self.before = run_ids(client)

    def runs(self) -> list[str]:
        return new_runs(self.before, run_ids(self.client))

    def __call__(self) -> list[str]:
        return objects_of(self.client, self.runs())

pytestmark = pytest.mark.integration


def start_baseline() -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "chaos", "baseline", "--epochs", "50"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def wait_for_workers(leftovers, proc, timeout=120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any("worker" in name for name in leftovers()):
            return
        if proc.poll() is not None:
            pytest.fail(f"baseline exited early: {proc.stdout.read()}")
        time.sleep(0.5)
    proc.kill()
    pytest.fail("no worker container appeared")


def test_ctrl_c_tears_everything_down(images, docker_client):
    leftovers = Leftovers(docker_client)
    proc = start_baseline()
    wait_for_workers(leftovers, proc)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, out
    assert leftovers() == []


def test_clean_removes_what_a_crashed_run_left(images, docker_client):
    leftovers = Leftovers(docker_client)
    proc = start_baseline()
    wait_for_workers(leftovers, proc)
    proc.kill()  # SIGKILL: no teardown runs
    proc.communicate(timeout=30)
    assert leftovers(), "a crashed run should have left its containers"
    (run,) = leftovers.runs()
    # Only this run: `chaos clean` without --run would also remove other sessions' runs.
    result = subprocess.run(
        [sys.executable, "-m", "chaos", "clean", "--run", run], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert leftovers() == []
