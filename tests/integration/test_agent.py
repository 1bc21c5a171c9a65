"""The in-container agent on a user's own jobs: the example project
(examples/keras-mwms: a Keras ``fit`` job with BackupAndRestore that knows
nothing of tfchaos, and a custom loop with the one-line report calls) on two
real TF workers, with the agent layered in as the runner layers it
(chaos.agent.layer: the directory at /opt/tfchaos-agent, first on PYTHONPATH,
CHAOS_AGENT=1; here a bind mount, so no image is made), and without it."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from chaos import LABEL_PROJECT, PROJECT
from chaos.agent import layer
from chaos.backends.docker.cluster import prepare_checkpoint_volume
from chaos.backends.docker.ownership import LABEL_SESSION, session_id
from chaos.events import (
    CheckpointEvent,
    DoneEvent,
    EpochEndEvent,
    ErrorEvent,
    Event,
    LogLine,
    PlanEvent,
    RestoredEvent,
    StartEvent,
    StepEvent,
    parse_line,
)

# Beside the scenarios under --chaos-scenarios (chaos.pytest_plugin): one cluster at a time, judged on events and digests, not on time.
pytestmark = [pytest.mark.integration, pytest.mark.chaos_beside_scenarios]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "keras-mwms"
EXAMPLE_IMAGE = "tfchaos-example/keras-mwms:dev"
PORT = 2222
CHECKPOINT_DIR = "/checkpoints"
EPOCHS, STEPS = 3, 10


def build_example(base: str = "tfchaos/worker-deps:tf2.21", tag: str = EXAMPLE_IMAGE) -> str:
    """Build the example the way its README says (offline, on the deps image)."""
    built = subprocess.run(
        [
            "docker",
            "build",
            "-q",
            "--pull=false",
            "--build-arg",
            f"BASE={base}",
            "--label",
            f"{LABEL_PROJECT}={PROJECT}",
            "--label",
            "io.tfchaos.kind=example",
            "-t",
            tag,
            str(EXAMPLE),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert built.returncode == 0, f"building {tag} failed: {built.stderr[-2000:]}"
    return tag


class UserJobCluster:
    """N workers of a user image on a private network (aliases worker-i),
    TF_CONFIG listing worker-i:PORT, a named volume at the checkpoint dir, and
    the agent bind-mounted at /opt/tfchaos-agent when ``agent`` is true.
    Every object is labelled and removed on exit; the output of each container
    generation is kept (``runs``)."""

    def __init__(
        self,
        client,
        image: str,
        command: list[str],
        workers: int = 2,
        agent: bool = True,
        env: dict[str, str] | None = None,
    ) -> None:
        self.client, self.image, self.command = client, image, command
        self.workers, self.agent, self.env = workers, agent, dict(env or {})
        self.id = uuid.uuid4().hex[:8]
        self.labels = {LABEL_PROJECT: PROJECT, LABEL_SESSION: session_id(), "io.tfchaos.test": "agent"}
        self.containers: dict[int, object] = {}
        self.runs: list[dict] = []  # {"worker", "generation", "stdout", "stderr", "exit_code", "oom"}
        self.generation = 0
        self._network = self._volume = self._agent_dir = None

    def __enter__(self) -> UserJobCluster:
        try:
            self._network = self.client.networks.create(f"tfchaos-agent-{self.id}", labels=self.labels)
            self._volume = self.client.volumes.create(f"tfchaos-agent-{self.id}-ckpt", labels=self.labels)
            # As the runner does: the example image runs as a non-root user and has no /checkpoints.
            prepare_checkpoint_volume(
                self.client,
                self._volume.name,
                [self.image],
                CHECKPOINT_DIR,
                labels=self.labels,
                name=f"tfchaos-agent-{self.id}-volume-owner",
            )
            if self.agent:
                self._agent_dir = Path(tempfile.mkdtemp(prefix="tfchaos-agent-"))
                self._agent_dir.chmod(0o755)
                layer.write_tree(self._agent_dir)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def tf_config(self, index: int) -> str:
        hosts = ", ".join(f'"worker-{i}:{PORT}"' for i in range(self.workers))
        return f'{{"cluster": {{"worker": [{hosts}]}}, "task": {{"type": "worker", "index": {index}}}}}'

    def start(self) -> None:
        api = self.client.api
        self.generation += 1
        for i in range(self.workers):
            env = {"TF_CONFIG": self.tf_config(i), "CHAOS_WORKER_INDEX": str(i)}
            binds = {self._volume.name: {"bind": CHECKPOINT_DIR, "mode": "rw,nocopy"}}
            if self.agent:
                env.update(layer.environment(i, CHECKPOINT_DIR))
                binds[str(self._agent_dir)] = {"bind": layer.AGENT_DIR, "mode": "ro"}
            env.update(self.env)
            created = api.create_container(
                self.image,
                command=self.command,
                name=f"tfchaos-agent-{self.id}-w{i}-g{self.generation}",
                labels=self.labels,
                environment=env,
                host_config=api.create_host_config(binds=binds, network_mode=self._network.name, init=True),
                networking_config=api.create_networking_config(
                    {self._network.name: api.create_endpoint_config(aliases=[f"worker-{i}"])}
                ),
            )
            self.containers[i] = self.client.containers.get(created["Id"])
        for container in self.containers.values():
            container.start()

    def wait(self, timeout: float = 300) -> dict[int, int]:
        """Wait until every worker exited; collect this generation's output."""
        deadline = time.monotonic() + timeout
        codes = {}
        for i, container in self.containers.items():
            remaining = max(1.0, deadline - time.monotonic())
            try:
                codes[i] = container.wait(timeout=remaining)["StatusCode"]
            except Exception as exc:  # timeout: say what each worker printed last
                tails = {j: c.logs(tail=15).decode(errors="replace") for j, c in self.containers.items()}
                raise AssertionError(
                    f"worker-{i} still running after {timeout} s ({exc}); last output: {tails}"
                ) from exc
        self._collect(codes)
        return codes

    def wait_for(self, predicate, timeout: float = 300, poll: float = 0.2) -> list[Event]:
        """Poll the live output until predicate(events of this generation) holds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            events = [
                e
                for i, c in self.containers.items()
                for e in events_of(c.logs(stderr=False).decode(errors="replace"), i)
            ]
            if predicate(events):
                return events
            time.sleep(poll)
        raise AssertionError(f"condition not met within {timeout} s")

    def kill(self, index: int) -> None:
        self.containers[index].kill()

    def _collect(self, codes: dict[int, int]) -> None:
        for i, container in self.containers.items():
            container.reload()
            self.runs.append(
                {
                    "worker": i,
                    "generation": self.generation,
                    "exit_code": codes[i],
                    "oom": container.attrs["State"].get("OOMKilled", False),
                    "stdout": container.logs(stdout=True, stderr=False).decode(errors="replace"),
                    "stderr": container.logs(stdout=False, stderr=True).decode(errors="replace"),
                }
            )
        self._remove_containers()

    def _remove_containers(self) -> None:
        for container in self.containers.values():
            try:
                container.remove(force=True, v=True)
            except Exception:  # noqa: BLE001 - already gone
                pass
        self.containers = {}

    def events(self, generation: int | None = None) -> list[Event]:
        return [
            e
            for run in self.runs
            if generation in (None, run["generation"])
            for e in events_of(run["stdout"], run["worker"])
        ]

    def __exit__(self, *exc) -> None:
        self._remove_containers()
        for obj in (self._network, self._volume):
            if obj is not None:
                try:
                    obj.remove()
                except Exception:  # noqa: BLE001
                    pass
        if self._agent_dir is not None:
            shutil.rmtree(self._agent_dir, ignore_errors=True)


def events_of(stdout: str, worker: int) -> list[Event]:
    out = []
    for line in stdout.splitlines():
        event = parse_line(line, f"worker-{worker}", 0.0)
        if not isinstance(event, LogLine):
            out.append(event)
    return out


def of(events: list[Event], cls, worker: int | None = None) -> list:
    return [e for e in events if isinstance(e, cls) and (worker is None or e.worker == worker)]


def command(script: str, epochs: int = EPOCHS, steps: int = STEPS, *extra: str) -> list[str]:
    return ["python", script, "--epochs", str(epochs), "--steps-per-epoch", str(steps), *extra]


def fit_command(epochs: int = EPOCHS, steps: int = STEPS, *extra: str) -> list[str]:
    return command("train_fit.py", epochs, steps, *extra)


def epoch_losses(run: dict) -> list[str]:
    """The epoch losses Keras prints with verbose=2 (``10/10 - 0s - loss: 0.7483 - ...``)."""
    return re.findall(r" - loss: ([0-9.]+)", run["stdout"])


@pytest.fixture(scope="module")
def example_image(images):
    return build_example()


def test_fit_job_with_the_agent_reports_every_event_on_every_worker(docker_client, example_image):
    with UserJobCluster(docker_client, example_image, fit_command()) as cluster:
        cluster.start()
        codes = cluster.wait()
        events = cluster.events()
    assert codes == {0: 0, 1: 0}, cluster.runs
    total = EPOCHS * STEPS
    for w in (0, 1):
        (start,) = of(events, StartEvent, w)
        assert start.tf_version.startswith("2.21.") and start.keras_version.startswith("2.21.")
        assert start.fingerprint["pkg:tf-keras"] == start.keras_version
        (plan,) = of(events, PlanEvent, w)
        assert (plan.epochs, plan.steps_per_epoch, plan.total_steps) == (EPOCHS, STEPS, total)
        assert (plan.save_every_steps, plan.checkpoint_dir, plan.initial_epoch) == (STEPS, CHECKPOINT_DIR, 0)
        steps = of(events, StepEvent, w)
        # Every step, although fit's default verbose draws a progress bar on the same stdout.
        assert [e.step for e in steps] == list(range(1, total + 1))
        assert [e.epoch for e in steps] == [(s - 1) // STEPS for s in range(1, total + 1)]
        assert all(0 < e.loss < 100 for e in steps)
        assert [e.epoch for e in of(events, EpochEndEvent, w)] == list(range(EPOCHS))
        assert not of(events, RestoredEvent, w)  # a fresh volume: nothing to restore
        assert not of(events, ErrorEvent, w)
    # Every epoch end left a backup (the chief sees each; the chief deletes the
    # last one when fit ends, so worker-1 may miss it).
    assert [(e.step, e.path) for e in of(events, CheckpointEvent, 0)] == [
        (STEPS * k, f"ckpt-{k}") for k in range(1, EPOCHS + 1)
    ]
    assert {e.step for e in of(events, CheckpointEvent, 1)} <= {STEPS * k for k in range(1, EPOCHS + 1)}
    done = of(events, DoneEvent)
    assert len(done) == 2 and len({e.weights_digest for e in done}) == 1
    assert {(e.epoch, e.step) for e in done} == {(EPOCHS - 1, total)}


# Long enough that the kill lands well before the end: 200 steps take about 4 s.
KILL_EPOCHS, KILL_STEPS = 5, 40


@pytest.fixture(scope="module")
def custom_loop_run(docker_client, example_image):
    """The custom loop trained once, untouched: its events for the test of every event, and its
    final digest as the uninterrupted reference of the kill test (one cluster for both)."""
    with UserJobCluster(docker_client, example_image, command("train_custom_loop.py", KILL_EPOCHS, KILL_STEPS)) as c:
        c.start()
        codes = c.wait()
        return codes, c.events(), c.runs


def test_custom_loop_with_the_report_calls_reports_every_event_on_every_worker(custom_loop_run):
    codes, events, runs = custom_loop_run
    assert codes == {0: 0, 1: 0}, runs
    total = KILL_EPOCHS * KILL_STEPS
    for w in (0, 1):
        assert [e.kind for e in events if e.worker == w][:2] == ["start", "plan"]
        (plan,) = of(events, PlanEvent, w)
        assert (plan.epochs, plan.steps_per_epoch, plan.total_steps, plan.save_every_steps) == (
            KILL_EPOCHS,
            KILL_STEPS,
            total,
            KILL_STEPS,
        )
        assert [(e.epoch, e.step) for e in of(events, StepEvent, w)] == [
            ((s - 1) // KILL_STEPS, s) for s in range(1, total + 1)
        ]
        # Each worker saves (the non-chief to a temporary directory it deletes).
        assert [(e.epoch, e.step, e.path) for e in of(events, CheckpointEvent, w)] == [
            (k, KILL_STEPS * k, f"ckpt-{k}") for k in range(1, KILL_EPOCHS + 1)
        ]
        assert not of(events, RestoredEvent, w) and not of(events, ErrorEvent, w)
    done = of(events, DoneEvent)
    assert len(done) == 2 and len({e.weights_digest for e in done}) == 1
    assert {(e.epoch, e.step) for e in done} == {(KILL_EPOCHS - 1, total)}


# The fit job's case is the example suite's fit-job-killed-worker-recovers, run by the
# runner in test_user_jobs (the same facts: worker-1 137, the chief's UnavailableError,
# one checkpoint restored on both, resumed from it, bit-exact against an uninterrupted
# run); its by-hand copy here cost two more clusters.
@pytest.mark.parametrize("script", ["train_custom_loop.py"])
def test_killed_worker_restored_from_checkpoint_ends_with_the_uninterrupted_digest(
    docker_client, example_image, custom_loop_run, script
):
    job = command(script, KILL_EPOCHS, KILL_STEPS)
    codes, events, runs = custom_loop_run  # the same job uninterrupted
    assert codes == {0: 0, 1: 0}, runs
    expected = {e.weights_digest for e in of(events, DoneEvent)}
    assert len(expected) == 1

    with UserJobCluster(docker_client, example_image, job) as cluster:
        cluster.start()
        cluster.wait_for(lambda evs: any(isinstance(e, CheckpointEvent) and e.step >= KILL_STEPS for e in evs))
        cluster.kill(1)
        codes = cluster.wait(120)
        first = cluster.events(1)
        killed_at = max(e.step for e in of(first, StepEvent))
        assert codes == {0: 1, 1: 137}, cluster.runs
        assert killed_at < KILL_EPOCHS * KILL_STEPS, "training finished before the kill"
        (chief_error,) = of(first, ErrorEvent, 0)  # (from fit, then the top level: reported once)
        assert chief_error.error_class == "tensorflow.python.framework.errors_impl.UnavailableError"
        assert not of(first, ErrorEvent, 1)  # SIGKILL: no Python left to say anything

        cluster.start()  # both workers again, on the same checkpoint volume
        assert cluster.wait() == {0: 0, 1: 0}, cluster.runs[-2:]
        second = cluster.events(2)
    restored = of(second, RestoredEvent)
    assert {e.worker for e in restored} == {0, 1}
    assert len({(e.checkpoint, e.epoch, e.step, e.weights_digest) for e in restored}) == 1, restored
    assert KILL_STEPS <= restored[0].step <= killed_at and restored[0].step % KILL_STEPS == 0
    assert restored[0].epoch == restored[0].step // KILL_STEPS
    for w in (0, 1):  # resumed at the next step, not from scratch
        assert min(e.step for e in of(second, StepEvent, w)) == restored[0].step + 1
    assert {e.weights_digest for e in of(second, DoneEvent)} == expected


def test_the_same_job_without_the_agent_prints_no_event_and_trains_the_same(docker_client, example_image):
    command = fit_command(EPOCHS, STEPS, "--verbose", "2")
    outcomes = {}
    for label, agent, env in (
        ("on", True, {}),
        ("layered, CHAOS_AGENT=0", True, {"CHAOS_AGENT": "0"}),
        ("absent", False, {}),
    ):
        with UserJobCluster(docker_client, example_image, command, agent=agent, env=env) as cluster:
            cluster.start()
            assert cluster.wait() == {0: 0, 1: 0}, (label, cluster.runs)
            outcomes[label] = cluster
    assert len(outcomes["on"].events()) > EPOCHS * STEPS
    for label in ("layered, CHAOS_AGENT=0", "absent"):
        cluster = outcomes[label]
        assert cluster.events() == [], label
        for run, with_agent in zip(cluster.runs, outcomes["on"].runs):
            assert "training finished" in run["stdout"]
            assert "tfchaos" not in run["stdout"] + run["stderr"]
            # The same training: Keras's per-epoch losses agree to the digit.
            assert len(epoch_losses(run)) == EPOCHS and epoch_losses(run) == epoch_losses(with_agent), label


def test_fit_job_on_tf215_reports_its_built_in_keras(docker_client):
    from chaos.images import ensure_images

    ensure_images(("2.15",), progress=lambda msg: print(f"[images] {msg}", flush=True))
    image = build_example("tfchaos/worker-deps:tf2.15", "tfchaos-example/keras-mwms:tf2.15")
    with UserJobCluster(docker_client, image, fit_command()) as cluster:
        cluster.start()
        assert cluster.wait() == {0: 0, 1: 0}, cluster.runs
        events = cluster.events()
    for w in (0, 1):
        (start,) = of(events, StartEvent, w)
        assert start.tf_version.startswith("2.15.") and start.keras_version.startswith("2.15.")
        assert "env:TF_USE_LEGACY_KERAS" not in start.fingerprint
        assert [e.step for e in of(events, StepEvent, w)] == list(range(1, EPOCHS * STEPS + 1))
    assert len({e.weights_digest for e in of(events, DoneEvent)}) == 1 and len(of(events, DoneEvent)) == 2


DIGEST_CHECK = """
import numpy as np
from chaos.agent.digest import weights_digest
from chaos.worker.data import weights_digest as harness
cases = [
    [np.arange(6, dtype=np.float32).reshape(2, 3), np.zeros(3, np.float32)],
    [np.arange(6, dtype=np.float32).reshape(2, 3).T],  # not contiguous
    [np.float64(1.5), np.array(2, np.int64)],  # 0-d
    [np.array([], np.float16)],
    [],
]
mine = [weights_digest(c) for c in cases]
assert mine == [harness(c) for c in cases], (mine, [harness(c) for c in cases])
assert len(set(mine)) == len(mine)
print("equal", len(cases))
"""


def test_agent_digest_equals_the_harness_digest_on_real_arrays(docker_client, example_image):
    container = docker_client.containers.create(
        example_image,
        ["python", "-c", DIGEST_CHECK],
        labels={LABEL_PROJECT: PROJECT, LABEL_SESSION: session_id(), "io.tfchaos.test": "agent"},
        volumes={str(ROOT / "chaos"): {"bind": "/opt/src/chaos", "mode": "ro"}},
        environment={"PYTHONPATH": "/opt/src"},
    )
    try:
        container.start()
        code = container.wait(timeout=120)["StatusCode"]
        output = container.logs().decode(errors="replace")
    finally:
        container.remove(force=True, v=True)
    assert (code, output.strip()) == (0, "equal 5"), output
