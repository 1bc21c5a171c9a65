"""The real images: built (or reused) by ensure_images, offline; no image
declares a VOLUME, and the worker and proxy run as an unprivileged user that
can write where the runner needs it (issue 9).

Run: pytest -m integration tests/integration/test_images.py
A cold machine builds the base (debootstrap, ~1 min) and each worker image
(~1.5 min) first; afterwards every call here is a no-op of about a second.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
import uuid

import pytest

from chaos import LABEL_PROJECT, PROJECT
from chaos.backends.docker.ownership import LABEL_SESSION, session_id
from chaos.images import DEFAULT_TF_VERSIONS, PROXY_IMAGE, ensure_images, image_status, plans, worker_image_tag
from chaos.images.engine import docker_client
from chaos.images.versions import DEFAULT_TF_VERSION, parse_tf_version
from chaos.worker.control import CONTROL_PATH, control_file_script
from chaos.worker.settings import WorkerSettings

pytestmark = pytest.mark.integration

VERSIONS = DEFAULT_TF_VERSIONS
EXPECTED_TF = {"2.21": "2.21.0", "2.20": "2.20.0", "2.18": "2.18.1", "2.15": "2.15.1"}
USER_ID = "1000"
BACKUP_MOUNT = WorkerSettings.backup_dir  # where the run's backup volume is mounted


@pytest.fixture(scope="module")
def client():
    return docker_client()


def _labels_here() -> dict[str, str]:
    return {LABEL_PROJECT: PROJECT, LABEL_SESSION: session_id()}


@pytest.fixture(scope="module")
def built():
    return ensure_images(VERSIONS, progress=lambda m: print(f"[images] {m}", flush=True))


def _labels(client, tag):
    return client.images.get(tag).attrs["Config"]["Labels"]


def test_images_exist_and_are_labelled(built, client):
    assert built["worker:tf2.21"] == worker_image_tag("2.21") == "tfchaos/worker:tf2.21"
    assert built["worker:tf2.15"] == "tfchaos/worker:tf2.15"
    assert built["worker:tf2.18"] == "tfchaos/worker:tf2.18"
    assert built["proxy"] == PROXY_IMAGE
    for tag in built.values():
        labels = _labels(client, tag)
        assert labels.get(LABEL_PROJECT) == "tfchaos", tag
        assert len(labels.get(plans.LABEL_INPUTS, "")) == 64, tag
    for v in VERSIONS:
        assert _labels(client, worker_image_tag(v))[plans.LABEL_TF] == EXPECTED_TF[v]
    assert {r.state for r in image_status(VERSIONS)} == {"exists"}


def test_second_run_builds_nothing(built, client):
    ids = {tag: client.images.get(tag).id for tag in built.values()}
    msgs: list[str] = []
    t0 = time.monotonic()
    assert ensure_images(VERSIONS, progress=msgs.append) == built
    elapsed = time.monotonic() - t0
    assert all("up to date" in m or m.startswith("done") for m in msgs), msgs
    assert {tag: client.images.get(tag).id for tag in built.values()} == ids
    assert elapsed < 15, f"a no-op ensure_images took {elapsed:.1f}s"


@pytest.mark.parametrize("version", VERSIONS)
def test_worker_reports_tf_version(built, version, client):
    tag = worker_image_tag(version)
    code = (
        "import os, tensorflow as tf\n"
        "if os.environ.get('TF_USE_LEGACY_KERAS'):\n    import tf_keras\n"
        "print(tf.__version__)\n"
    )
    out = subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--label",
            f"{LABEL_PROJECT}=tfchaos",
            "--label",
            f"{LABEL_SESSION}={session_id()}",
            "--entrypoint",
            "/opt/venv/bin/python",
            tag,
            "-c",
            code,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == EXPECTED_TF[version]
    env = dict(e.split("=", 1) for e in client.images.get(tag).attrs["Config"]["Env"])
    if parse_tf_version(version).legacy_keras:  # TF >= 2.16
        assert env.get("TF_USE_LEGACY_KERAS") == "1"
    else:
        assert "TF_USE_LEGACY_KERAS" not in env
    assert env["PYTHONUNBUFFERED"] == "1" and env["PYTHONPATH"] == "/opt/tfchaos"
    cfg = client.images.get(tag).attrs["Config"]
    assert cfg["Entrypoint"] == ["/opt/venv/bin/python", "-m", "chaos.worker"]
    assert not cfg.get("Cmd")


def test_proxy_answers_version(built, client):
    name = f"tfchaos-imagetest-proxy-{uuid.uuid4().hex[:8]}"
    container = client.containers.run(
        PROXY_IMAGE, detach=True, name=name, ports={"8474/tcp": None}, labels=_labels_here()
    )
    try:
        deadline = time.monotonic() + 30
        last = None
        while time.monotonic() < deadline:
            container.reload()
            if container.status == "exited":
                pytest.fail(f"proxy exited: {container.logs()[-2000:].decode(errors='replace')}")
            port = (container.ports.get("8474/tcp") or [{}])[0].get("HostPort")
            if port:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/version", timeout=2) as resp:
                        body = resp.read().decode()
                        assert resp.status == 200
                        break
                except OSError as exc:
                    last = exc
            time.sleep(0.3)
        else:
            pytest.fail(f"proxy did not answer GET /version within 30 s: {last}")
        assert body.strip()
        try:
            json.loads(body)
        except ValueError:
            pass  # toxiproxy answers plain text on some versions; any answer will do
    finally:
        container.remove(force=True, v=True)


# --------------------------------------------------------------------------- no stray volumes (issue 9)


def _every_image(built) -> list[str]:
    deps = [plans.worker_plans(parse_tf_version(v))[0].tag for v in VERSIONS] + [plans.PROXY_DEPS_IMAGE]
    return list(built.values()) + deps


def test_no_image_declares_a_volume(built, client):
    declared = {tag: client.images.get(tag).attrs["Config"].get("Volumes") for tag in _every_image(built)}
    assert len(declared) == 2 + 2 * len(VERSIONS) + 1  # base, proxy-deps, proxy, deps + worker per version
    assert {tag: v for tag, v in declared.items() if v} == {}


def _volume_names(client) -> set[str]:
    return {v["Name"] for v in client.api.volumes().get("Volumes") or []}


def _anonymous_volumes_made_by(client, image: str, **create) -> tuple[set[str], list[dict]]:
    """Start a container from ``image``; (the volumes it mounts that did not exist
    before it, its mounts). Only that container's mounts are compared: other
    sessions create and remove volumes on this engine at the same time."""
    before = _volume_names(client)
    container = client.containers.create(
        image,
        name=f"tfchaos-imagetest-vol-{uuid.uuid4().hex[:8]}",
        labels=_labels_here(),
        network_disabled=True,
        **create,
    )
    try:
        container.start()
        container.reload()
        mounts = container.attrs["Mounts"]
        mounted = {m["Name"] for m in mounts if m.get("Type") == "volume"}
        return (_volume_names(client) - before) & mounted, mounts
    finally:
        container.remove(force=True, v=True)


@pytest.mark.parametrize("image", [worker_image_tag(DEFAULT_TF_VERSION), PROXY_IMAGE])
def test_a_container_creates_no_anonymous_volume(built, client, image):
    made, mounts = _anonymous_volumes_made_by(client, image)
    assert made == set() and mounts == []


def test_the_volume_check_sees_an_anonymous_volume(built, client):
    """The check above can fail: a container with an anonymous volume (what the
    old images' VOLUME /tmp/wheels did) is seen, and removed with it."""
    from docker.types import Mount

    made, mounts = _anonymous_volumes_made_by(
        client,
        worker_image_tag(DEFAULT_TF_VERSION),
        entrypoint=["true"],
        mounts=[Mount("/tmp/wheels", None, type="volume")],
    )
    assert len(made) == 1 and [m["Destination"] for m in mounts] == ["/tmp/wheels"]
    assert not made & _volume_names(client)  # remove(v=True) took it


# --------------------------------------------------------------------------- unprivileged user (issue 9)


def _run(client, image: str, script: str, **create) -> tuple[int, str]:
    container = client.containers.create(
        image,
        entrypoint=["sh", "-c", script],
        name=f"tfchaos-imagetest-user-{uuid.uuid4().hex[:8]}",
        labels=_labels_here(),
        network_disabled=True,
        **create,
    )
    try:
        container.start()
        status = container.wait(timeout=120)["StatusCode"]
        return status, container.logs().decode(errors="replace")
    finally:
        container.remove(force=True, v=True)


@pytest.mark.parametrize("image", [worker_image_tag(v) for v in VERSIONS] + [PROXY_IMAGE])
def test_worker_and_proxy_run_as_an_unprivileged_user(built, client, image):
    assert client.images.get(image).attrs["Config"]["User"] == plans.RUN_AS
    status, out = _run(client, image, 'id -u; id -g; echo "$HOME"; touch "$HOME/x" && echo home-writable')
    assert status == 0, out
    assert out.split() == [USER_ID, USER_ID, f"/home/{plans.RUN_AS}", "home-writable"]


@pytest.fixture
def backup_volume(client):
    volume = client.volumes.create(name=f"tfchaos-imagetest-backup-{uuid.uuid4().hex[:8]}", labels=_labels_here())
    yield volume.name
    volume.remove(force=True)


def test_a_new_named_backup_volume_is_writable_by_the_worker(built, client, backup_volume):
    """Docker gives a new, empty named volume the owner of the image's directory it
    is mounted on: /backup is tfchaos's, so each generation of workers can write
    its backups there and read the previous generation's."""
    image = worker_image_tag(DEFAULT_TF_VERSION)
    mount = {backup_volume: {"bind": BACKUP_MOUNT, "mode": "rw"}}
    status, out = _run(client, image, f"stat -c %u {BACKUP_MOUNT} && echo g1 > {BACKUP_MOUNT}/ckpt", volumes=mount)
    assert (status, out.split()) == (0, [USER_ID]), out
    status, out = _run(client, image, f"cat {BACKUP_MOUNT}/ckpt && echo g2 >> {BACKUP_MOUNT}/ckpt", volumes=mount)
    assert (status, out.split()) == (0, ["g1"]), out
    # What the ownership buys: the same volume mounted on a root-owned directory is not writable.
    fresh = client.volumes.create(name=f"{backup_volume}-root", labels=_labels_here())
    try:
        status, out = _run(client, image, "touch /srv/x", volumes={fresh.name: {"bind": "/srv", "mode": "rw"}})
        assert status != 0 and "Permission denied" in out
    finally:
        fresh.remove(force=True)


def test_the_runner_can_send_a_command_to_the_worker(built, client):
    """DockerCluster.command runs control_file_script with `docker exec` as the image's user."""
    container = client.containers.create(
        worker_image_tag(DEFAULT_TF_VERSION),
        entrypoint=["sleep", "60"],
        name=f"tfchaos-imagetest-cmd-{uuid.uuid4().hex[:8]}",
        labels=_labels_here(),
        network_disabled=True,
    )
    try:
        container.start()
        result = container.exec_run(control_file_script(7, "memory_demand", {"demand_mb": 1, "cap_mb": None}))
        assert result.exit_code == 0, result.output.decode(errors="replace")
        written = container.exec_run(["sh", "-c", f"stat -c %u {CONTROL_PATH} && cat {CONTROL_PATH}"])
        owner, body = written.output.decode().split("\n", 1)
        assert owner == USER_ID and json.loads(body)["seq"] == 7
    finally:
        container.remove(force=True, v=True)
