"""An image's Python environment on a volume, mounted read-only into every worker.

On an engine whose storage driver is ``fuse-overlayfs`` (rootless Docker, and
this project's CI machines) every file a container reads from its image goes
through a FUSE process on the host. Importing TensorFlow opens thousands of
files: measured here, the host's fuse-overlayfs spent 3.1-3.3 CPU-s per import
next to the 2.1-2.3 CPU-s of the import itself, against 0.8-1.5 s and 1.9-2.0 s
with /opt/venv on a volume (docs/speed.md). The volume holds a copy of the
image's /opt/venv, made by Docker's own copy-on-first-mount. Every worker still
runs its image's own bits, in its own container.

**Keyed by content, not by image.** A volume is named by a fingerprint of the
venv (every entry's path, type, mode, owner, size, mtime and link target; read
once per image id by a throwaway container, ~1 s, and remembered on disk: an
image id names fixed content). The harness's worker image, its deps image and
a user's job built on that deps image (the example job, with or without the
agent layered on, at every rebuild of its code) hold the same venv layer, so
they share one copy. A venv that really changes (a job that pip-installs into
it) gets its own copy.

The volumes are a cache like the images: labelled ``io.tfchaos.role=venv`` with
the fingerprint, never a run's, kept across runs. When one is made, the copies
no existing image holds are removed (each image built on ours is scanned, once
per id), so there are as many copies as distinct venvs among the images; a copy
in use is never removed (the engine refuses). A copy is trusted when this cache
folder saw it filled, else when a scan of it matches (directories' own sizes and
mtimes are left out of the fingerprint: a copy sets them anew). Which images are
served: the harness's, and a user's job image built on one of ours whose Python
is that /opt/venv (``serves``); any other job image runs as it is.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from pathlib import Path

from chaos import LABEL_PROJECT, PROJECT, interrupts
from chaos.backends.docker import api as docker_api
from chaos.images.engine import engine_id

VENV_DIR = "/opt/venv"
LABEL_ROLE = "io.tfchaos.role"
ROLE = "venv"
LABEL_FINGERPRINT = "io.tfchaos.venv"
LABEL_IMAGE = "io.tfchaos.image"  # the image a volume was filled from (for people reading `docker volume inspect`)
STORAGE_DRIVERS = ("fuse-overlayfs",)  # where image reads cost a host process's CPU

# Run by the image's own Python: one line, the number of entries and the fingerprint.
SCAN = r"""
import hashlib, os, stat, sys
root = sys.argv[1]
h = hashlib.sha256()
n = 0
for d, dirs, files in os.walk(root):
    dirs.sort()
    for name in sorted(dirs + files):
        p = os.path.join(d, name)
        st = os.lstat(p)
        link = os.readlink(p) if stat.S_ISLNK(st.st_mode) else ""
        # A directory's size and mtime are the filesystem's (a copy sets them anew); its entries are hashed.
        size, mtime = (0, 0) if stat.S_ISDIR(st.st_mode) else (st.st_size, st.st_mtime_ns)
        h.update(f"{os.path.relpath(p, root)}\0{st.st_mode}\0{st.st_uid}\0{st.st_gid}\0{size}\0{mtime}\0{link}\n".encode())
        n += 1
print(n, h.hexdigest())
"""
_SCANNED = re.compile(r"^(\d+) ([0-9a-f]{64})$")
# Remembered fingerprints are filed under the scan's own hash: a changed scan reads every image anew.
_SCAN_KEY = hashlib.sha256(SCAN.encode()).hexdigest()[:12]


def wanted(client) -> bool:
    """Whether this engine's image reads are costly enough for the copy (``TFCHAOS_VENV_VOLUME=0/1`` decides otherwise)."""
    forced = os.environ.get("TFCHAOS_VENV_VOLUME")
    if forced in ("0", "1"):
        return forced == "1"
    try:
        return client.info().get("Driver") in STORAGE_DRIVERS
    except Exception:  # noqa: BLE001 - cannot tell: the image as it is
        return False


def serves(client, image: str) -> bool:
    """Whether a job's image runs from our /opt/venv: built on one of our images (it
    carries their TF version label) with that venv as its Python."""
    from chaos.images.plans import LABEL_TF

    try:
        config = client.images.get(image).attrs.get("Config") or {}
    except Exception:  # noqa: BLE001 - cannot tell: the image as it is
        return False
    env = dict(e.split("=", 1) for e in config.get("Env") or [] if "=" in e)
    return bool((config.get("Labels") or {}).get(LABEL_TF)) and (
        env.get("VIRTUAL_ENV") == VENV_DIR or env.get("PATH", "").split(":")[0] == f"{VENV_DIR}/bin"
    )


def volume_name(fingerprint: str) -> str:
    return f"{PROJECT}-venv-{fingerprint[:16]}"


def _root() -> Path:
    return Path(os.environ.get("TFCHAOS_CACHE") or os.path.join(Path.home(), ".cache", "tfchaos")) / "venv"


def _hex(image_id: str) -> str:
    return image_id.split(":")[-1]


@contextlib.contextmanager
def _locked(key: str):
    """One process (and thread) at a time per key; the others wait, then find it done."""
    path = _root() / f"{key}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with interrupts.file_lock(str(path)):  # a stopped run stops waiting
        yield


def fingerprint(client, image_id: str) -> str:
    """The fingerprint of ``image_id``'s /opt/venv, scanned once per image id."""
    known = _root() / "ids" / _SCAN_KEY / _hex(image_id)
    with _locked(f"scan-{_hex(image_id)[:16]}"):
        if known.exists():
            return known.read_text().strip()
        digest = _scan(client, image_id)
        known.parent.mkdir(parents=True, exist_ok=True)
        tmp = known.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(digest + "\n")
        tmp.replace(known)
        return digest


def _scan(client, image_id: str, volume: str | None = None) -> str:
    """Run SCAN in a throwaway container of the image: over its own /opt/venv, or
    over ``volume`` mounted there read-only (a copy holds the same entries)."""
    out = client.containers.run(
        image_id,
        entrypoint=[f"{VENV_DIR}/bin/python", "-c", SCAN, VENV_DIR],
        command=[],
        volumes={volume: {"bind": VENV_DIR, "mode": "ro"}} if volume else None,
        user="0",
        network_disabled=True,
        remove=True,
        labels={LABEL_PROJECT: PROJECT, LABEL_ROLE: "helper", LABEL_IMAGE: image_id},
        name=f"{PROJECT}-venv-scan-{_hex(image_id)[:12]}-{os.getpid()}",  # a killed one is left for `chaos clean`
    )
    lines = (out.decode(errors="replace") if isinstance(out, bytes) else str(out)).strip().splitlines()
    match = _SCANNED.match(lines[-1].strip()) if lines else None
    if not match or int(match.group(1)) == 0:
        raise RuntimeError(f"the scan of {VENV_DIR} in image {image_id[:19]} printed {lines[-1:]!r}")
    return match.group(2)


def venv_volume(client, image: str) -> str | None:
    """The name of the volume holding ``image``'s /opt/venv, made and filled if need
    be; None when a copy of that name cannot be trusted nor replaced (the image is
    then run as it is)."""
    image_id = client.images.get(image).id
    digest = fingerprint(client, image_id)
    name = volume_name(digest)
    with _locked(name):
        state = _state(client, name, image_id, digest)
        if state == "filled":
            return name
        if state == "broken":
            docker_api.ignore_gone(lambda: client.volumes.get(name).remove(force=True))
            if _exists(client, name):
                return None  # mounted somewhere: left as it is
        labels = {LABEL_PROJECT: PROJECT, LABEL_ROLE: ROLE, LABEL_FINGERPRINT: digest, LABEL_IMAGE: image_id}
        client.volumes.create(name, labels=labels)
        # Docker copies the image's /opt/venv into an empty volume when a container
        # mounts it; the image's python starting from it proves the copy is whole.
        client.containers.run(
            image_id,
            entrypoint=[f"{VENV_DIR}/bin/python", "-c", "import sys; print(sys.prefix)"],
            command=[],
            volumes={name: {"bind": VENV_DIR, "mode": "rw"}},
            user="0",
            network_disabled=True,
            remove=True,
            labels={LABEL_PROJECT: PROJECT, LABEL_ROLE: "helper", LABEL_IMAGE: image_id},
            name=f"{name}-fill-{os.getpid()}",
        )
        _marker(name, client).write_text("filled\n")
    _prune(client, keep=name)
    return name


def _state(client, name: str, image_id: str, digest: str) -> str:
    """``filled`` (this cache saw it filled, or a scan of it matches), ``missing``, or ``broken``
    (a fill broke off, or another label). A scan settles a copy filled by a process with
    another cache folder, which must not be refilled under a run mounting it."""
    try:
        volume = client.volumes.get(name)
    except Exception:  # noqa: BLE001 - none yet
        _marker(name, client).unlink(missing_ok=True)
        return "missing"
    if (volume.attrs.get("Labels") or {}).get(LABEL_FINGERPRINT) != digest:
        return "broken"
    if _marker(name, client).exists():
        return "filled"
    try:
        whole = _scan(client, image_id, volume=name) == digest
    except Exception:  # noqa: BLE001 - no python in it: broken off early
        whole = False
    if whole:
        _marker(name, client).write_text("filled\n")
    return "filled" if whole else "broken"


def _exists(client, name: str) -> bool:
    try:
        client.volumes.get(name)
    except Exception:  # noqa: BLE001
        return False
    return True


def _marker(name: str, client=None) -> Path:
    """This cache's note that volume ``name`` was seen filled, per engine (one machine's
    cache serves every engine DOCKER_HOST names: another engine's volume of the same name
    may have broken off); an engine that gives no ID shares the one folder of before."""
    key = engine_id(client) if client is not None else ""
    folder = _root() / "engines" / key.replace(":", "") if key else _root()
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{name}.complete"


def _prune(client, keep: str) -> None:
    """Copies of a venv no existing image holds (a rebuilt image's old one, or the
    image-keyed copies of before). Nothing when the images' venvs cannot all be
    read; the engine refuses to remove a copy a container mounts (it stays)."""
    held = _held(client)
    if held is None:
        return
    for volume in client.volumes.list(filters={"label": [f"{LABEL_PROJECT}={PROJECT}", f"{LABEL_ROLE}={ROLE}"]}):
        if volume.name != keep and (volume.attrs.get("Labels") or {}).get(LABEL_FINGERPRINT) not in held:
            docker_api.ignore_gone(volume.remove, force=True)  # 409: in use, it stays
            if not _exists(client, volume.name):
                _marker(volume.name, client).unlink(missing_ok=True)


def _held(client) -> set[str] | None:
    """The venv fingerprints of every image that could be served (built on ours: it
    carries our TF version label); scanned once per image id, so this folder's
    memory need not have seen them. None if one cannot be read."""
    from chaos.images.plans import LABEL_TF

    try:
        return {fingerprint(client, image.id) for image in client.images.list(filters={"label": LABEL_TF})}
    except Exception:  # noqa: BLE001 - cannot tell what is held: remove nothing
        return None
