"""The run's checkpoint volume is made writable for the user the job's image
runs as (chaos.backends.docker.volume_owner), before any worker mounts it, and workers
mount it ``nocopy`` so Docker does not give it the image directory's owner
again. Fakes at the Docker SDK boundary; the helper script on the host."""

from __future__ import annotations

import inspect
import os
import stat
from types import SimpleNamespace

import pytest
from docker.errors import APIError

from chaos import LABEL_RUN
from chaos.backends.docker import api as docker_api
from chaos.backends.docker import volume_owner
from chaos.backends.docker.cluster import DockerCluster
from chaos.backends.docker.volume_owner import MODE, SHARED_MODE, prepare, resolve_user
from chaos.backends.spec import Deployment
from chaos.errors import InfrastructureError
from chaos.workload.launch import Launch

PASSWD = """root:x:0:0:root:/root:/bin/bash
daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin
# a comment
tfchaos:x:1000:1000::/home/tfchaos:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
"""
GROUP = """root:x:0:
staff:x:50:
tfchaos:x:1000:
"""


@pytest.mark.parametrize(
    "user, expected",
    [
        ("", (0, 0)),  # no USER: root
        ("root", (0, 0)),
        ("tfchaos", (1000, 1000)),  # a name: its uid and primary group
        ("1000", (1000, 1000)),  # a listed uid: its primary group
        ("4242", (4242, 0)),  # a uid passwd does not list runs with gid 0, as in Docker
        ("tfchaos:staff", (1000, 50)),
        ("1000:50", (1000, 50)),
        ("4242:4243", (4242, 4243)),
        ("nobody", (65534, 65534)),
    ],
)
def test_the_images_user_resolves_as_docker_resolves_it(user, expected):
    assert resolve_user(user, PASSWD, GROUP) == expected


@pytest.mark.parametrize(
    "user, message",
    [
        ("trainer", "user 'trainer' of the image's USER is not in its /etc/passwd"),
        ("tfchaos:gpu", "group 'gpu' of the image's USER is not in its /etc/group"),
    ],
)
def test_a_user_the_image_does_not_list_is_one_clear_error(user, message):
    with pytest.raises(ValueError, match=message):
        resolve_user(user, PASSWD, GROUP)


@pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root (the helper runs as root)")
def test_prepare_gives_the_volume_root_to_the_user_setgid(tmp_path, monkeypatch):
    root = tmp_path / "backup"
    root.mkdir(mode=0o755)
    monkeypatch.setattr(volume_owner, "_read", lambda path: PASSWD if path.endswith("passwd") else GROUP)
    assert prepare(str(root), "tfchaos") == {"uid": 1000, "gid": 1000, "mode": oct(MODE)}
    st = root.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (1000, 1000, 0o2775)
    # Workers of images with different users: anyone may write, sticky as /tmp.
    assert prepare(str(root), "tfchaos", "shared") == {"uid": 0, "gid": 0, "mode": oct(SHARED_MODE)}
    assert stat.S_IMODE(root.stat().st_mode) == 0o3777


def test_the_helper_script_runs_as_a_standalone_program():
    source = inspect.getsource(volume_owner)
    assert "from chaos" not in source and "import chaos" not in source  # run by python3 -c in the image


# --- the helper container, at the Docker SDK boundary -------------------------------------------


class FakeHelper:
    def __init__(
        self,
        client,
        exit_code=0,
        stdout=b'{"uid": 1000, "gid": 1000, "mode": "0o2775"}\n',
        stderr=b"",
        start_error=None,
    ):
        self.client, self.exit_code, self.stdout, self.stderr, self.start_error = (
            client,
            exit_code,
            stdout,
            stderr,
            start_error,
        )

    def start(self):
        self.client.calls.append("start")
        if self.start_error:
            raise self.start_error

    def wait(self):
        self.client.calls.append("wait")
        return {"StatusCode": self.exit_code}

    def logs(self, stdout=True, stderr=True):
        return self.stdout if stdout else self.stderr

    def remove(self, force=False, v=False):
        self.client.calls.append(("remove", force, v))


class FakeClient:
    def __init__(self, users, **helper):
        self.users = users  # image -> its Config.User
        self.calls: list = []
        self.created: list[dict] = []
        self.helper = helper
        self.images = SimpleNamespace(get=lambda image: SimpleNamespace(attrs={"Config": {"User": self.users[image]}}))
        self.containers = SimpleNamespace(create=self._create)

    def _create(self, image, **kwargs):
        self.created.append({"image": image, **kwargs})
        return FakeHelper(self, **self.helper)


def cluster(client, images=("acme/trainer:agent",), checkpoint_dir="/shared/backup"):
    spec = Deployment(
        images=images,
        proxy_image="tfchaos/proxy:latest",
        launch=Launch(checkpoint_dir=checkpoint_dir, harness_settings=False),
    )
    c = DockerCluster(spec, client=client)
    c.volume = SimpleNamespace(name="tfchaos-run-backup")
    return c


def test_a_root_helper_of_the_workers_image_gives_the_volume_to_the_images_user_and_is_removed():
    client = FakeClient({"acme/trainer:agent": "tfchaos"})
    c = cluster(client, images=("acme/trainer:agent",) * 2)
    assert c._prepare_backup_volume() == {"uid": 1000, "gid": 1000, "mode": "0o2775"}
    (helper,) = client.created
    assert helper["image"] == "acme/trainer:agent" and helper["user"] == "0"
    assert helper["entrypoint"][:2] == ["python3", "-c"]
    assert helper["command"] == ["/shared/backup", "tfchaos"]  # a nested path the image lacks
    # Mounted where the workers mount it, with Docker's copy of the image's folder (no nocopy).
    assert helper["volumes"] == {"tfchaos-run-backup": {"bind": "/shared/backup", "mode": "rw"}}
    assert helper["labels"][LABEL_RUN] == c.run_id and helper["labels"]["io.tfchaos.role"] == "helper"
    assert helper["network_disabled"] is True
    assert client.calls == ["start", "wait", ("remove", True, True)]


def test_workers_on_images_with_different_users_share_a_volume_anyone_may_write():
    client = FakeClient({"tfchaos/worker:tf2.20": "tfchaos", "acme/trainer:agent": "1000"})
    c = cluster(client, images=("tfchaos/worker:tf2.20", "acme/trainer:agent"))
    c._prepare_backup_volume()
    assert client.created[0]["command"][-1] == "shared"


@pytest.mark.parametrize(
    "helper, message",
    [
        (
            {
                "exit_code": 2,
                "stdout": b"",
                "stderr": b"ValueError: user 'trainer' of the image's USER is not in its /etc/passwd\n",
            },
            "user 'trainer' of the image's USER is not in its /etc/passwd",
        ),
        (
            {"start_error": APIError("500", explanation='exec: "python3": executable file not found in $PATH')},
            "executable file not found",
        ),
    ],
)
def test_a_helper_that_fails_is_one_infrastructure_error_with_a_hint_and_is_removed(helper, message):
    client = FakeClient({"acme/trainer:agent": "trainer"}, **helper)
    with pytest.raises(InfrastructureError, match=message) as err:
        cluster(client)._prepare_backup_volume()
    assert "could not make checkpoint_dir /shared/backup writable" in err.value.message
    assert "python3" in err.value.hint and "docs/workloads.md" in err.value.hint
    assert client.calls[-1] == ("remove", True, True)


def test_the_volume_is_prepared_before_anything_else_mounts_it(monkeypatch):
    order = []
    client = SimpleNamespace(
        networks=SimpleNamespace(create=lambda *a, **k: order.append("network") or SimpleNamespace(name="net")),
        volumes=SimpleNamespace(create=lambda *a, **k: order.append("volume") or SimpleNamespace(name="vol")),
    )
    monkeypatch.setattr(docker_api, "require_image", lambda client, image: None)

    class Stop(Exception):
        pass

    def proxy(*a, **k):
        order.append("proxy")
        raise Stop

    monkeypatch.setattr(docker_api, "create_container", proxy)
    c = DockerCluster(Deployment(images=("tfchaos/worker:tf2.20",), proxy_image="p"), client=client)
    monkeypatch.setattr(c, "_prepare_backup_volume", lambda: order.append("prepare"))
    with pytest.raises(Stop):
        c.start_infrastructure()
    assert order == ["network", "volume", "prepare", "proxy"]


def test_workers_mount_the_volume_nocopy():
    seen = {}

    class API:
        def create_host_config(self, **kw):
            seen.update(kw)
            return kw

        def create_container(self, image, **kw):
            return {"Id": "c1"}

        def create_networking_config(self, cfg):
            return cfg

        def create_endpoint_config(self, aliases):
            return aliases

    client = SimpleNamespace(api=API(), containers=SimpleNamespace(get=lambda id: id))
    docker_api.create_container(
        client, "img", name="w", labels={}, network="net", aliases=["worker-0"], volumes={"vol": "/shared/backup"}
    )
    assert seen["binds"] == {"vol": {"bind": "/shared/backup", "mode": "rw,nocopy"}}
