"""Nothing is left, whatever happens to a run, and runs next door are not disturbed.

* SIGINT or SIGTERM at any point of a run's life (the reference run, bring-up,
  training, the fault window, the restart, teardown itself, twice in a row)
  tears everything down: exit 130, no traceback, nothing of the run left.
* SIGKILL leaves the run behind; ``chaos clean`` (owner gone) removes it.
* Two suites at once on one engine both finish with their normal verdicts,
  and ``chaos clean`` while a run is live leaves that run alone.
* A user's container of an image built on one of ours (it inherits
  ``io.tfchaos.project``) survives ``chaos clean --all`` beside a run.

Each ``chaos`` subprocess gets its own session id, so what it left is found
by label, and the engine is compared before and after for anonymous volumes.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from run_scope import Snapshot, volumes_in_use  # noqa: E402  (conftest puts it on sys.path)

from chaos.backends.docker.engine_objects import list_objects
from chaos.backends.docker.ownership import LABEL_SESSION, SESSION_ENV, Liveness
from chaos.backends.docker.runs import runs_on_engine

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
KILLED = ROOT / "scenarios" / "killed-worker-recovers-from-checkpoint.yaml"
REFUSED = ROOT / "scenarios" / "port-refused-mid-training-fails-fast-then-recovers.yaml"


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Chaos:
    """A ``chaos`` subprocess with its own session; its output read line by line."""

    def __init__(self, *args: str, cache: Path | None = None) -> None:
        self.session = uuid.uuid4().hex[:12]
        env = {**os.environ, SESSION_ENV: self.session, "PYTHONUNBUFFERED": "1"}
        if cache is not None:
            env["TFCHAOS_CACHE"] = str(cache)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "chaos", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            cwd=ROOT,
            # A shell without job control starts background jobs with SIGINT
            # ignored, and Python then never raises KeyboardInterrupt: give the
            # run the Ctrl-C a terminal user has, however the tests were started.
            preexec_fn=_default_sigint,
        )
        self.lines: list[str] = []
        self._queue: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line)
            self._queue.put(line)
        self._queue.put(None)

    def wait_for_line(self, marker: str, timeout: float = 180) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self._queue.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                return False
            if marker in line:
                return True
        return False

    def finish(self, timeout: float = 300) -> tuple[int, str]:
        self.proc.wait(timeout=timeout)
        time.sleep(0.2)  # the reader thread drains the pipe
        return self.proc.returncode, "".join(self.lines)

    def objects(self, client) -> list[str]:
        return [o.describe() for o in list_objects(client, {LABEL_SESSION: self.session})]


def dangling_volumes(client, before: Snapshot) -> list[str]:
    used = volumes_in_use(client)
    return [
        o.describe()
        for o in list_objects(client, kinds=("volume",))
        if ("volume", o.id) not in before.ids and not o.labels and o.id not in used
    ]


# (where to interrupt: the line that marks the moment, extra delay, signals to send)
POINTS = [
    ("reference run", "computing the uninterrupted reference run", 2.0, [signal.SIGINT]),
    ("bring-up", "== bring_up", 0.5, [signal.SIGTERM]),
    ("training", "started (TF", 1.5, [signal.SIGINT]),
    ("fault window", "FAULT kill_worker on worker-1 injected", 0.0, [signal.SIGTERM]),
    ("restart", "restarting worker-0, worker-1", 0.3, [signal.SIGINT]),
    ("teardown, twice", "== teardown", 0.0, [signal.SIGINT, signal.SIGTERM]),
]


@pytest.mark.parametrize("point, marker, delay, signals", POINTS, ids=[p[0] for p in POINTS])
def test_an_interrupt_at_any_point_leaves_nothing_and_no_traceback(
    images, docker_client, tmp_path, point, marker, delay, signals
):
    before = Snapshot.take(docker_client)
    # A fresh reference cache for the reference-run point only: the run computes it there.
    run = Chaos("run", str(KILLED), "-j", "1", cache=tmp_path if point == "reference run" else None)
    assert run.wait_for_line(marker), f"never reached {point!r}:\n{''.join(run.lines)[-3000:]}"
    time.sleep(delay)
    for sig in signals:
        run.proc.send_signal(sig)
        time.sleep(0.3)
    code, out = run.finish(timeout=120)
    assert code == 130, out[-3000:]
    assert "Traceback" not in out, out[-3000:]
    assert "interrupted" in out
    assert run.objects(docker_client) == [], out[-2000:]
    assert dangling_volumes(docker_client, before) == []


def test_sigkill_leaves_the_run_and_chaos_clean_removes_it_as_its_owner_is_gone(images, docker_client):
    run = Chaos("baseline", "--epochs", "50")
    assert run.wait_for_line("started (TF")
    run.proc.kill()  # no teardown runs
    run.finish(timeout=30)
    left = run.objects(docker_client)
    assert left, "a killed run should have left its objects"
    clean = subprocess.run([sys.executable, "-m", "chaos", "clean"], capture_output=True, text=True, timeout=120)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert run.objects(docker_client) == []
    assert "removed" in clean.stdout


def test_two_suites_at_once_and_a_clean_beside_them_give_the_normal_verdicts(images, docker_client, tmp_path):
    before = Snapshot.take(docker_client)
    # One scenario at a time in each suite: two runs of two processes overlap all along,
    # which is what this judges. With -j 2 each (four clusters) beside the other lanes, a
    # restart took 50-66 s to its first step in CI (stop 34) and port-refused's 60 s
    # recovered_within failed: a check the machine's load broke, not the neighbour.
    first = Chaos("run", str(KILLED), str(REFUSED), "-j", "1", "--report-dir", str(tmp_path / "a"))
    second = Chaos("run", str(REFUSED), str(KILLED), "-j", "1", "--report-dir", str(tmp_path / "b"))
    assert first.wait_for_line("started (TF") and second.wait_for_line("started (TF")
    # A `chaos clean` while both are live keeps both (their owners run).
    clean = subprocess.run([sys.executable, "-m", "chaos", "clean"], capture_output=True, text=True, timeout=120)
    assert clean.returncode == 0 and "kept run" in clean.stdout, clean.stdout + clean.stderr
    for run in (first, second):
        code, out = run.finish()
        assert code == 0, out[-4000:]
        assert "2 scenarios: 2 passed" in out
        assert run.objects(docker_client) == []
    assert dangling_volumes(docker_client, before) == []


def test_clean_all_leaves_a_users_container_of_an_image_built_on_ours(images, docker_client, tmp_path):
    """A user's image FROM a framework image inherits io.tfchaos.project; their
    container of it (started by hand, beside a run) is theirs: `chaos clean --all`
    removes the run and never that container."""
    tag = f"tfchaos-test/child-of-ours:{uuid.uuid4().hex[:8]}"
    (tmp_path / "Dockerfile").write_text(f'FROM {images["worker"]}\nENTRYPOINT []\nCMD ["sleep", "300"]\n')
    subprocess.run(
        ["docker", "build", "--pull=false", "-q", "-t", tag, str(tmp_path)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    name = f"userjob-{uuid.uuid4().hex[:8]}"
    try:
        subprocess.run(
            ["docker", "run", "-d", "--name", name, tag, "sleep", "300"], check=True, capture_output=True, timeout=60
        )
        inherited = docker_client.containers.get(name).labels
        assert inherited.get("io.tfchaos.project") == "tfchaos", inherited  # what misled clean before
        run = Chaos("baseline", "--epochs", "50")
        assert run.wait_for_line("started (TF"), "".join(run.lines)[-3000:]
        run.proc.kill()  # no teardown: the run is left for clean
        run.finish(timeout=30)
        assert run.objects(docker_client), "a killed run should have left its objects"
        others = [
            r.describe()
            for r in runs_on_engine(docker_client)
            if r.session != run.session and r.liveness() is not Liveness.GONE
        ]
        if others:  # --all removes live runs too: never another session's on a shared engine
            pytest.skip(
                f"another session's live run is on this engine ({'; '.join(others)}): "
                "`chaos clean --all` would remove it"
            )
        clean = subprocess.run(
            [sys.executable, "-m", "chaos", "clean", "--all"], capture_output=True, text=True, timeout=120
        )
        assert clean.returncode == 0, clean.stdout + clean.stderr
        assert run.objects(docker_client) == [], clean.stdout
        assert docker_client.containers.get(name).status == "running", clean.stdout
        assert name not in clean.stdout and "objects of no run" not in clean.stdout, clean.stdout
    finally:
        subprocess.run(["docker", "rm", "-f", "-v", name], capture_output=True, timeout=60)
        subprocess.run(["docker", "rmi", tag], capture_output=True, timeout=60)
