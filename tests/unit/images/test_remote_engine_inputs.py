"""A build's inputs go to the engine over the API (chaos.images.send), and the run
path reaches the proxy where the engine publishes it (chaos.images.engine.published_on)."""

from __future__ import annotations

import io
import os
import tarfile

import pytest

from chaos.backends.docker.cluster import device_under
from chaos.images import engine, send


def _tree(root):
    os.makedirs(root / "lock" / "deep")
    (root / "a.whl").write_bytes(b"x" * 1500)
    (root / "lock" / "requirements.txt").write_text("tensorflow==2.20.0\n")
    (root / "lock" / "deep" / "empty").write_bytes(b"")
    os.chmod(root / "a.whl", 0o640)
    os.symlink(root / "a.whl", root / "link.whl")
    return root


def test_a_folder_streams_as_a_tar_that_holds_its_files_owned_by_root(tmp_path):
    root = _tree(tmp_path / "in")
    chunks = list(send.tar_chunks(str(root), chunk=512))
    assert max(len(c) for c in chunks) <= 1024  # streamed, not one buffer
    with tarfile.open(fileobj=io.BytesIO(b"".join(chunks))) as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert sorted(members) == ["a.whl", "link.whl", "lock", "lock/deep", "lock/deep/empty", "lock/requirements.txt"]
        assert tar.extractfile("a.whl").read() == b"x" * 1500
        assert tar.extractfile("link.whl").read() == b"x" * 1500  # the link's content: the engine cannot follow it
        assert members["a.whl"].mode == 0o640 and members["lock"].isdir()
        assert {(m.uid, m.gid) for m in members.values()} == {(0, 0)}
    assert send.folder_bytes(str(root)) == 1500 * 2 + len("tensorflow==2.20.0\n")


def test_a_file_that_grows_while_it_is_sent_is_an_error_not_a_torn_archive(tmp_path):
    root = _tree(tmp_path / "in")
    stream = send.tar_chunks(str(root), chunk=100)
    next(stream)  # a.whl's header: its size is taken
    (root / "a.whl").write_bytes(b"x" * 3000)
    with pytest.raises(Exception) as err:
        list(stream)
    assert "changed size while it was sent" in str(err.value)


@pytest.mark.parametrize(
    "address,expected",
    [
        ("unix:///var/run/docker.sock", ("127.0.0.1", "127.0.0.1")),
        ("unix:///root/.cache/tfchaos/swarm/local/node-1/docker.sock", ("127.0.0.1", "127.0.0.1")),
        ("tcp://127.0.0.1:2375", ("127.0.0.1", "127.0.0.1")),
        ("tcp://172.30.0.2:2375", ("172.30.0.2", "172.30.0.2")),  # a dind service's own address
        ("tcp://docker:2375", ("0.0.0.0", "docker")),  # GitLab's docker:dind service by its name
        ("ssh://me@build-7", ("0.0.0.0", "build-7")),
    ],
)
def test_the_proxy_api_is_published_where_this_machine_can_reach_it(address, expected):
    assert engine.published_on(address) == expected


def test_the_engine_address_is_the_one_docker_host_names():
    assert engine.engine_address({"DOCKER_HOST": "tcp://docker:2375"}) == ("tcp://docker:2375", "DOCKER_HOST")


def test_the_backup_device_is_the_source_of_the_mount_at_the_checkpoint_dir():
    mounts = (
        "overlay / overlay rw 0 0\n/dev/vda1 /ckpt ext4 rw,relatime 0 0\n"
        "/dev/vda1 /etc/hosts ext4 rw 0 0\ntmpfs /dev tmpfs rw 0 0\n"
    )
    assert device_under(mounts, "/ckpt") == "/dev/vda1"
    assert device_under("tmpfs /ckpt tmpfs rw 0 0\n", "/ckpt") == "tmpfs"
    assert device_under(mounts, "/other") == ""


class _Engine:
    def __init__(self, name):
        self.name = name

    def info(self):
        return {"Name": self.name}


def test_a_feature_that_needs_the_engines_host_is_refused_naming_the_engine(monkeypatch):
    import socket

    monkeypatch.setenv("DOCKER_HOST", "tcp://172.30.0.2:2375")
    engine.require_shared_host(_Engine(socket.gethostname()), "x", "y")  # this machine's: nothing raised
    with pytest.raises(engine.InfrastructureError) as err:
        engine.require_shared_host(_Engine("dind-1"), "the widget", "it reads a folder of this machine")
    assert err.value.message == (
        "the widget needs a Docker engine on this machine, and the engine at "
        "tcp://172.30.0.2:2375 (DOCKER_HOST) is not: it reads a folder of this machine"
    )
    assert err.value.hint
