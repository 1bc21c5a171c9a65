"""The network helper image: the project's Debian base plus iptables, built
offline like the other images.

The Debian packages (``DEBS``, the ones the base lacks) are fetched on the host
by ``apt-get download`` from the machine's own apt sources into
``$TFCHAOS_CACHE/debs/netns-helper`` (once), then installed with ``dpkg -i`` in
a container from the base with the folder sent to the engine as a read-only
volume (chaos.images.send) and no
network, and committed, labelled with a hash of its inputs (the recipe, the
base's id, the packages' names and sizes): rebuilt only when those change.
The base already has python3 and iproute2 (tc, ip, ss).
"""

from __future__ import annotations

import os
import shutil
import subprocess

from chaos.errors import InfrastructureError
from chaos.images import deb_image, engine
from chaos.images.deb_image import DebImage
from chaos.images.engine import Progress

HELPER_IMAGE = "tfchaos/netns-helper:latest"
# iptables (nft backend) and what it needs beyond the base; ethtool to read and
# set the interface's offloads.
DEBS = (
    "iptables",
    "libip4tc2",
    "libip6tc2",
    "libnetfilter-conntrack3",
    "libnfnetlink0",
    "libnftnl11",
    "netbase",
    "libxtables12",
    "libmnl0",
    "ethtool",
)
# Only packages the base does not have are installed (the base may already carry
# libmnl0 and libxtables12 through iproute2).
INSTALL = r"""set -e
cd /tmp/debs
todo=""
for f in *.deb; do
  p=$(dpkg-deb -f "$f" Package)
  dpkg -s "$p" >/dev/null 2>&1 || todo="$todo $f"
done
[ -z "$todo" ] || dpkg -i $todo
iptables -V
ss -V
echo helper ready
"""
CHANGES = ['CMD ["sleep", "infinity"]', "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]


IMAGE = DebImage(
    HELPER_IMAGE,
    "netns-helper",
    "the network helper",
    INSTALL,
    tuple(CHANGES) + ("ENTRYPOINT []",),
    hint="delete {folder} and build again (`chaos images build --only helper`)",
)


def debs_dir() -> str:
    return deb_image.debs_dir(IMAGE.kind)


def ensure_debs(progress: Progress = engine.noop) -> tuple[str, list[str]]:
    """The helper's Debian packages in the cache, fetched with apt when missing."""
    folder = debs_dir()
    have = deb_image.debs_present(folder)
    if _complete(have):
        return folder, have
    if not shutil.which("apt-get"):
        raise InfrastructureError(
            f"the network helper needs Debian packages ({', '.join(DEBS)}) and this machine has no apt-get",
            hint=f"put their bookworm .deb files into {folder}, or build on a Debian host",
        )
    os.makedirs(folder, exist_ok=True)
    progress(f"netns-helper: apt-get download {len(DEBS)} packages")
    proc = subprocess.run(["apt-get", "download", *DEBS], cwd=folder, capture_output=True, text=True)
    if proc.returncode != 0 and os.geteuid() == 0:
        # A fresh machine's apt has no package lists yet: read them once, then again.
        progress("netns-helper: apt-get update")
        subprocess.run(["apt-get", "update", "-qq"], capture_output=True, text=True)
        proc = subprocess.run(["apt-get", "download", *DEBS], cwd=folder, capture_output=True, text=True)
    have = deb_image.debs_present(folder)
    if proc.returncode != 0 or not _complete(have):
        last = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise InfrastructureError(
            f"could not fetch the network helper's Debian packages: {last[0][:200]}",
            hint="run `apt-get update` once (as root), then build again",
        )
    return folder, have


def helper_inputs(base_id: str, folder: str, files: list[str]) -> dict:
    return deb_image.inputs("netns-helper", INSTALL, CHANGES, base_id, folder, files)


def _complete(files: list[str]) -> bool:
    return {deb_image.package_of(f) for f in files} >= set(DEBS)


def wanted_hash(base_id: str) -> tuple[str | None, str]:
    """The inputs hash the helper image should carry on this base (deb_image.wanted_hash)."""
    return deb_image.wanted_hash(base_id, debs_dir(), _complete, helper_inputs)


def ensure_helper_image(client=None, *, force: bool = False, progress: Progress = engine.noop) -> str:
    """Build the helper image when it is missing or stale; its tag."""
    return deb_image.ensure(
        client, IMAGE, lambda base: ensure_debs(progress), helper_inputs, force=force, progress=progress
    )
