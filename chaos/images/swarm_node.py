"""The swarm node image: the project's Debian base plus Debian's Docker engine
(``docker.io``: dockerd, containerd, runc, tini, iptables) and the shared store's
``sshfs`` and ``openssh-server`` (the store runs from the same image), built offline like
the network helper (chaos.images.netns_helper) and only when a local swarm is
asked for (``chaos swarm up``, the swarm test fixture), never by the default
``chaos images build``: it costs ~70 MB of packages and about half a minute.

The packages are resolved against the base's own dpkg database (``apt-get
--download-only`` with the base's ``/var/lib/dpkg/status``), so exactly what
the base lacks is fetched, from the machine's own apt sources, into
``$TFCHAOS_CACHE/debs/swarm-node`` (once). They are installed with ``dpkg -i``
in a container from the base with that folder sent to the engine as a read-only
volume (chaos.images.send) and no
network, and committed, labelled with a hash of its inputs (the recipe, the
base's id, the packages' names and sizes): rebuilt only when those change.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from chaos.errors import InfrastructureError
from chaos.images import deb_image, engine
from chaos.images.deb_image import DebImage
from chaos.images.engine import Progress
from chaos.images.plans import build_container_labels

NODE_IMAGE = "tfchaos/swarm-node:latest"
KIND = "swarm-node"
# What a node needs beyond the base; their dependencies come along (resolved
# against the base, so a package the base has is not fetched again).
# sshfs (FUSE) and openssh-server: the shared checkpoint store, an SFTP export every
# node mounts (this kernel has no NFS client; docs/backends.md).
WANT = ("docker.io", "iptables", "sshfs", "openssh-server")
INSTALL = r"""set -e
cd /tmp/debs
dpkg -i *.deb >/tmp/dpkg.log 2>&1 || { tail -20 /tmp/dpkg.log; exit 1; }
# the engine runs as PID 1's child of tini; no init system starts it. The store's
# host keys are made when it starts, never baked into the image.
rm -f /tmp/dpkg.log /etc/ssh/ssh_host_*
dockerd --version
sshfs --version | head -1
iptables -V
echo node ready
"""
CHANGES = [
    'ENTRYPOINT ["tini", "--"]',
    'CMD ["dockerd"]',
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
]


IMAGE = DebImage(NODE_IMAGE, KIND, "the swarm node", INSTALL, tuple(CHANGES), hint="delete {folder} and try again")


def debs_dir() -> str:
    return deb_image.debs_dir(KIND)


def _complete(files: list[str]) -> bool:
    return {deb_image.package_of(f) for f in files} >= set(WANT)


def ensure_debs(client, base_tag: str, progress: Progress = engine.noop) -> tuple[str, list[str]]:
    """The node's Debian packages in the cache, fetched with apt when missing:
    ``WANT`` and whatever of their dependencies the base lacks."""
    folder = debs_dir()
    have = deb_image.debs_present(folder)
    if _complete(have):
        return folder, have
    if not shutil.which("apt-get"):
        raise InfrastructureError(
            f"the swarm node image needs Debian packages ({', '.join(WANT)}) and this machine has no apt-get",
            hint=f"put their bookworm .deb files (with their dependencies) into {folder}, or build on a Debian host",
        )
    status = client.containers.run(
        base_tag, ["cat", "/var/lib/dpkg/status"], remove=True, network_disabled=True, labels=build_container_labels()
    )
    os.makedirs(os.path.join(folder, "partial"), exist_ok=True)
    with tempfile.NamedTemporaryFile("wb", prefix="tfchaos-dpkg-status-", delete=False) as fh:
        fh.write(status)
        status_file = fh.name
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    download = [
        "apt-get",
        "-o",
        f"Dir::State::status={status_file}",
        "-o",
        f"Dir::Cache::archives={folder}",
        "-o",
        "Debug::NoLocking=1",
        "--download-only",
        "-y",
        "--no-install-recommends",
        "install",
        *WANT,
    ]
    try:
        progress(f"swarm-node: apt-get --download-only {' '.join(WANT)} (against the base's packages)")
        proc = subprocess.run(download, capture_output=True, text=True, env=env)
        if proc.returncode != 0 and os.geteuid() == 0:
            # A fresh machine has no package lists yet.
            progress("swarm-node: apt-get update, then again")
            subprocess.run(["apt-get", "update", "-qq"], capture_output=True, text=True, env=env)
            proc = subprocess.run(download, capture_output=True, text=True, env=env)
    finally:
        os.unlink(status_file)
    have = deb_image.debs_present(folder)
    if proc.returncode != 0 or not _complete(have):
        last = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise InfrastructureError(
            f"could not fetch the swarm node's Debian packages: {last[0][:200]}",
            hint="run `apt-get update` once (as root), then try again",
        )
    return folder, have


def node_inputs(base_id: str, folder: str, files: list[str]) -> dict:
    return deb_image.inputs(KIND, INSTALL, CHANGES, base_id, folder, files, want=list(WANT))


def wanted_hash(base_id: str) -> tuple[str | None, str]:
    """The inputs hash the node image should carry on this base (deb_image.wanted_hash)."""
    return deb_image.wanted_hash(base_id, debs_dir(), _complete, node_inputs)


def ensure_node_image(client=None, *, force: bool = False, progress: Progress = engine.noop) -> str:
    """Build the node image when it is missing or stale; its tag."""
    client = client or engine.docker_client()
    return deb_image.ensure(
        client, IMAGE, lambda base: ensure_debs(client, base.tag, progress), node_inputs, force=force, progress=progress
    )
