"""A Docker engine in a container that shares no path with this machine, reached
over TCP on the container's address on a project network (used by
test_remote_engine.py and benchmarks/remote_engine.py).

It is the swarm node image (chaos.images.swarm_node: Debian's dockerd) started
as the swarm's nodes are (chaos.backends.swarm.plan: four capabilities, seccomp
and AppArmor unconfined, /var/lib/docker on a named volume; ``--privileged`` is
refused here), but with no folder of this machine bound in: its engine listens on
``tcp://<its address>:2375`` instead of a socket in a host folder, so every byte
a build or a run needs has to go through the engine's API, as with GitLab's
``docker:dind`` service (``DOCKER_HOST=tcp://docker:2375``). The one bind is
/sys/fs/cgroup, the kernel's cgroup tree (cgroup v1 here: without it the inner
runc cannot make cgroups); no file the framework reads or writes is in it.

TCP, not the socket in a named volume: that socket would be read through the
volume's folder on this machine, a shared path. dockerd 20.10 waits 15 s before it
listens on TCP without TLS; the engine is on a network only this test's
containers join, and gone at the end.

The device node of the disk under its /var/lib/docker is made in the container
(``mknod``, the major:minor its mountinfo gives): GitLab's ``docker:dind`` runs
privileged and sees every host device, and its engine throttles a container's writes
to one (``slow_checkpoint_storage``) by stat-ing the node. Without it the engine
refused every container with the limit (``stat /dev/vda: no such file or directory``);
with it, measured, 200 direct 4 KB writes at 50 IOPS took 3.9 s (0.014 s unthrottled).
The node grants nothing: the container's device cgroup still refuses to open it.
"""

from __future__ import annotations

import contextlib
import io
import time
import uuid
from dataclasses import dataclass

from chaos import LABEL_PROJECT, LABEL_RUN, PROJECT
from chaos.backends.docker.api import _ChunkReader
from chaos.backends.docker.ownership import owner_labels
from chaos.backends.swarm.plan import CGROUP_ROOT, NODE_CAPS, NODE_SECURITY_OPT

PORT = 2375
START_TIMEOUT_S = 120


@dataclass
class Dind:
    host: str  # DOCKER_HOST for it
    name: str  # its container on this machine's engine
    client: object  # a docker.DockerClient of it


@contextlib.contextmanager
def dind_engine(client, node_image: str):
    """A running engine in a container, yielded as a Dind; its container, volume and
    network removed whatever happens."""
    import docker

    run_id = uuid.uuid4().hex[:8]
    prefix = f"{PROJECT}-{run_id}-dind"
    labels = {LABEL_PROJECT: PROJECT, LABEL_RUN: run_id, **owner_labels(), "io.tfchaos.role": "dind"}
    network = volume = container = inner = None
    try:
        network = client.networks.create(prefix, driver="bridge", labels=labels, check_duplicate=True)
        volume = client.volumes.create(f"{prefix}-docker", labels=labels)
        container = client.containers.run(
            node_image,
            command=["dockerd", "--host", f"tcp://0.0.0.0:{PORT}", "--host", "unix:///var/run/docker.sock"],
            name=prefix,
            hostname=prefix,
            labels=labels,
            network=network.name,
            cap_add=list(NODE_CAPS),
            security_opt=list(NODE_SECURITY_OPT),
            volumes={
                volume.name: {"bind": "/var/lib/docker", "mode": "rw"},
                CGROUP_ROOT: {"bind": CGROUP_ROOT, "mode": "rw"},
            },
            detach=True,
        )
        container.reload()
        address = container.attrs["NetworkSettings"]["Networks"][network.name]["IPAddress"]
        host = f"tcp://{address}:{PORT}"
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:  # the SDK asks the engine's API version as it makes the client
                inner = docker.DockerClient(base_url=host, timeout=600)
                inner.ping()
                break
            except Exception:  # noqa: BLE001 - not listening yet
                container.reload()
                if container.status != "running" or time.monotonic() > deadline:
                    tail = container.logs(tail=5).decode(errors="replace")
                    raise RuntimeError(
                        f"the engine in {prefix} did not answer on {host} ({container.status}): {tail}"
                    ) from None
                time.sleep(1)
        _device_node(container)
        yield Dind(host, prefix, inner)
    finally:
        if inner is not None:
            inner.close()
        for obj, remove in (
            (container, lambda c: c.remove(force=True, v=True)),
            (volume, lambda v: v.remove(force=True)),
            (network, lambda n: n.remove()),
        ):
            if obj is not None:
                with contextlib.suppress(Exception):
                    remove(obj)


def _device_node(container) -> None:
    """The node of the block device under the engine's /var/lib/docker, as a privileged dind has it."""
    line = container.exec_run(["sh", "-c", "grep ' /var/lib/docker ' /proc/self/mountinfo"]).output.decode()
    fields = line.split()
    if " - " not in line or len(fields) < 3:
        return  # not on a block device (tmpfs, a bind of its own): no write limit to serve
    major_minor, source = fields[2], line.split(" - ", 1)[1].split()[1]
    major, minor = major_minor.split(":")
    if source.startswith("/dev/"):
        container.exec_run(["sh", "-c", f"[ -e {source} ] || mknod {source} b {major} {minor}"])


def local_base(client):
    """This machine's base image (to move to a dind engine, as a pull would bring it there)."""
    from chaos.images.base import find_base

    base = find_base(client)
    if base is None:
        raise SystemExit("no base image on this machine's engine: run `chaos images build --only base` first")
    return base


def transfer_image(source, target, tag: str) -> tuple[float, int]:
    """``docker save`` of ``tag`` on ``source`` into ``docker load`` on ``target``, streamed;
    (seconds, bytes)."""
    t0 = time.monotonic()
    sent = 0

    def chunks():
        nonlocal sent
        for chunk in source.images.get(tag).save(chunk_size=1 << 20, named=tag):
            sent += len(chunk)
            yield chunk

    target.images.load(chunks())
    return time.monotonic() - t0, sent


def top_layer(client, tag: str) -> dict[str, tuple]:
    """What the image's last layer holds: {path: (type, mode, uid, gid, size, link target)},
    mtimes left out (they differ between any two builds), read from ``docker save``."""
    import json
    import tarfile

    layers: dict[str, dict[str, tuple]] = {}
    manifest = None
    stream = io.BufferedReader(_ChunkReader(client.images.get(tag).save(chunk_size=1 << 20, named=tag)), 1 << 20)
    with tarfile.open(fileobj=stream, mode="r|") as outer:
        for member in outer:
            if member.name.endswith("/layer.tar"):
                with tarfile.open(fileobj=outer.extractfile(member), mode="r|") as layer:
                    # An imported layer keeps its tar's own names ("./etc/..."): one form for both.
                    layers[member.name] = {
                        m.name.removeprefix("./").rstrip("/"): (m.type, m.mode, m.uid, m.gid, m.size, m.linkname)
                        for m in layer
                    }
            elif member.name == "manifest.json":
                manifest = json.load(outer.extractfile(member))
    assert manifest is not None, f"no manifest.json in `docker save {tag}`"
    return layers[manifest[0]["Layers"][-1]]
