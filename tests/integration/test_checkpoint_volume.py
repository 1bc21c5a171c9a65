"""The run's checkpoint volume is writable for the user a job's image runs as,
for any checkpoint_dir, existing in the image or not (issue 27): real Docker.

* containers: workers of non-root images (``USER 1000``, ``USER tfchaos``)
  without the directory, at a nested path, and with a root-owned directory of
  their own that holds a file, write the volume and see each other's files;
* the example's two tutorial jobs (the Keras ``fit`` job and the custom loop),
  from its non-root image that prepares no checkpoint directory, with
  ``checkpoint_dir: /shared/backup``: killed, restarted, recovered from their
  own checkpoints.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from chaos.backends.docker.cluster import DockerCluster
from chaos.backends.spec import Deployment
from chaos.checks.verdict import Status
from chaos.events import ExitEvent
from chaos.runner.run import RunOptions
from chaos.runner.suite import SuiteEntry, run_suite
from chaos.scenario.loader import load_scenario, scenario_from_dict
from chaos.workload.evidence import Evidence
from chaos.workload.launch import Launch

# Beside the scenarios under --chaos-scenarios (chaos.pytest_plugin): judged on files and digests, not on time.
pytestmark = [pytest.mark.integration, pytest.mark.chaos_beside_scenarios]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "keras-mwms"
SUITE = EXAMPLE / "chaos_suite"

# Each worker writes its own file into the volume, waits for its peer's and
# prints how the folder looks from inside: mode, owner, and who wrote what.
WRITE_AND_READ = r"""
import os, sys, time
root, me = sys.argv[1], os.environ["CHAOS_WORKER_INDEX"]
with open(os.path.join(root, f"from-{me}"), "w") as fh:
    fh.write(str(os.getuid()))
os.makedirs(os.path.join(root, f"workertemp_{me}", "deep"), exist_ok=True)
peer = os.path.join(root, f"from-{1 - int(me)}")
for _ in range(100):
    if os.path.exists(peer):
        break
    time.sleep(0.1)
st = os.stat(root)
print(f"uid={os.getuid()} mode={oct(st.st_mode & 0o7777)} owner={st.st_uid}:{st.st_gid} files={sorted(os.listdir(root))}", flush=True)
# Alive until the test says the proxy routes to both: an exited worker's name no longer
# resolves, and the proxy refuses a route to it (a CI rehearsal under load: the bring-up failed).
for _ in range(3000):
    if os.path.exists(os.path.join(root, "routed")):
        break
    time.sleep(0.1)
"""


@pytest.fixture(scope="module")
def user_images(images, docker_client, tmp_path_factory):
    """Non-root images of a user, built FROM the framework's deps image (which runs as root)."""
    base = "tfchaos/worker-deps:tf2.21"
    made = {}
    for name, body in {
        "uid": "USER 1000\n",  # a number, the usual policy line
        "named": "USER tfchaos:tfchaos\n",  # a name, resolved in the image
        "own-dir": "RUN mkdir -p /ckpt && echo seed > /ckpt/seed.txt\nUSER 1000\n",  # root's dir with a file
    }.items():
        folder = tmp_path_factory.mktemp(name)
        (folder / "Dockerfile").write_text(f"FROM {base}\n{body}")
        tag = f"tfchaos-test/nonroot-{name}:{uuid.uuid4().hex[:8]}"
        subprocess.run(
            ["docker", "build", "--pull=false", "-q", "-t", tag, str(folder)],
            check=True,
            capture_output=True,
            timeout=300,
        )
        made[name] = tag
    yield made
    for tag in made.values():
        subprocess.run(["docker", "rmi", tag], capture_output=True, timeout=60)


def run_workers(image: str, proxy: str, checkpoint_dir: str) -> dict[int, tuple[int, list[str]]]:
    """Two workers of ``image`` with the run's volume at ``checkpoint_dir``: exit code and log of each."""
    launch = Launch(
        command=("python3", "-c", WRITE_AND_READ, checkpoint_dir),
        checkpoint_dir=checkpoint_dir,
        harness_settings=False,
        evidence=frozenset({Evidence.ERRORS}),
        description="a probe",
    )
    spec = Deployment(images=(image, image), proxy_image=proxy, launch=launch)
    with DockerCluster(spec) as cluster:
        cluster.start_workers()  # returns once the proxy routes to both
        cluster.container(0).exec_run(["touch", os.path.join(checkpoint_dir, "routed")])
        deadline = time.monotonic() + 300  # a bound, not a figure: a loaded machine is slow
        while time.monotonic() < deadline:
            exits = {e.worker: e.exit_code for e in cluster.events.snapshot() if isinstance(e, ExitEvent)}
            if len(exits) == 2:
                break
            time.sleep(0.2)
        time.sleep(0.5)  # the log followers drain
        return {i: (exits.get(i, -1), cluster.log_tail(i)) for i in range(2)}


@pytest.mark.parametrize(
    "kind, checkpoint_dir, owner",
    [
        ("uid", "/shared/backup", "1000:1000"),  # nested, not in the image: Docker makes it root's
        ("named", "/checkpoints", "1000:1000"),
        ("own-dir", "/ckpt", "1000:1000"),  # in the image, root's 0755: Docker's copy would keep it root's
    ],
)
def test_a_non_root_image_writes_the_checkpoint_volume(images, user_images, kind, checkpoint_dir, owner):
    result = run_workers(user_images[kind], images["proxy"], checkpoint_dir)
    for index, (code, log) in result.items():
        assert code == 0, f"worker-{index} exited {code}:\n" + "\n".join(log)
        (line,) = [line for line in log if line.startswith("uid=")]
        assert f"uid=1000 mode=0o2775 owner={owner}" in line, line
        assert "'from-0', 'from-1'" in line, line  # each sees the other's file
        if kind == "own-dir":
            assert "'seed.txt'" in line, line  # what the image had there is in the volume, as Docker copies it


def example_scenario(file: str, name: str):
    """An example scenario from the example's own non-root image, writing its
    checkpoints to a nested folder the image does not have."""
    data = load_scenario(SUITE / file).to_dict()
    data["name"] = name
    workload = data["cluster"]["workload"]
    workload["build"]["context"] = str(EXAMPLE)
    workload["command"] += ["--checkpoint-dir", "/shared/backup"]
    workload["checkpoint_dir"] = "/shared/backup"
    data["recover"] = [c for c in data["recover"] if "matches_uninterrupted" not in c]  # no reference run here
    return scenario_from_dict(data)


def test_the_examples_tutorial_jobs_recover_from_a_non_root_image_without_a_checkpoint_directory(images):
    dockerfile = (EXAMPLE / "Dockerfile").read_text()
    runs = [line for line in dockerfile.splitlines() if line.startswith("RUN")]
    assert "USER 1000" in dockerfile and not [line for line in runs if "checkpoint" in line], runs  # nothing prepared
    entries = [
        SuiteEntry(example_scenario("fit-job-killed-worker-recovers.yaml", "fit-job-nested-checkpoint-dir"), "<fit>"),
        SuiteEntry(
            example_scenario("custom-loop-killed-chief-recovers.yaml", "custom-loop-nested-checkpoint-dir"), "<loop>"
        ),
    ]
    from chaos.report import terminal_summary

    for report in run_suite(entries, RunOptions(), jobs=2):
        assert report.status is Status.PASS, terminal_summary([report])
