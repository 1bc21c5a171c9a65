"""The worker image's Python environment on a volume, mounted read-only into every worker.

On an engine whose storage driver is ``fuse-overlayfs`` (rootless Docker, and
this project's CI machines) every file a container reads from its image goes
through a FUSE process on the host. Importing TensorFlow opens thousands of
files: measured here, the host's fuse-overlayfs spent 3.1-3.3 CPU-s per import
next to the 2.1-2.3 CPU-s of the import itself, against 0.8-1.5 s and 1.9-2.0 s
with /opt/venv on a volume (docs/speed.md). The volume holds a copy of that
image's /opt/venv, made once per image by Docker's own copy-on-first-mount
and keyed by the image id, so a rebuilt image gets a new one. Every worker
still runs its image's own bits, in its own container.

The volumes are a cache like the images: labelled ``io.tfchaos.role=venv``
with the image id, never a run's, kept across runs; one of an image that no
longer exists is removed when the next is made. Only the built-in harness's
images (ours, with ``/opt/venv``) get one.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from chaos import LABEL_PROJECT, PROJECT, interrupts
from chaos.backends.docker import api as docker_api

VENV_DIR = "/opt/venv"
LABEL_ROLE = "io.tfchaos.role"
ROLE = "venv"
LABEL_IMAGE = "io.tfchaos.image"
STORAGE_DRIVERS = ("fuse-overlayfs",)  # where image reads cost a host process's CPU


def wanted(client) -> bool:
    """Whether this engine's image reads are costly enough for the copy (``TFCHAOS_VENV_VOLUME=0/1`` decides otherwise)."""
    forced = os.environ.get("TFCHAOS_VENV_VOLUME")
    if forced in ("0", "1"):
        return forced == "1"
    try:
        return client.info().get("Driver") in STORAGE_DRIVERS
    except Exception:  # noqa: BLE001 - cannot tell: the image as it is
        return False


def volume_name(image_id: str) -> str:
    return f"{PROJECT}-venv-{image_id.split(':')[-1][:12]}"


def _lock_path(name: str) -> Path:
    root = os.environ.get("TFCHAOS_CACHE") or os.path.join(Path.home(), ".cache", "tfchaos")
    return Path(root) / "venv" / f"{name}.lock"


@contextlib.contextmanager
def _locked(name: str):
    """One process (and thread) fills a given volume; the others wait and use it."""
    path = _lock_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    with interrupts.file_lock(str(path)):  # a stopped run stops waiting
        yield


def venv_volume(client, image: str) -> str:
    """The name of the volume holding ``image``'s /opt/venv, made and filled if need be."""
    image_id = client.images.get(image).id
    name = volume_name(image_id)
    with _locked(name):
        if _complete(client, name, image_id):
            return name
        _remove_stale(client, image_id)
        _marker(name).unlink(missing_ok=True)
        docker_api.ignore_gone(lambda: client.volumes.get(name).remove(force=True))  # half-filled
        labels = {LABEL_PROJECT: PROJECT, LABEL_ROLE: ROLE, LABEL_IMAGE: image_id}
        client.volumes.create(name, labels=labels)
        # Docker copies the image's /opt/venv into an empty volume when a container
        # mounts it; the helper's python starting from it proves the copy is whole.
        client.containers.run(
            image, entrypoint=[f"{VENV_DIR}/bin/python", "-c", "import sys; print(sys.prefix)"], command=[],
            volumes={name: {"bind": VENV_DIR, "mode": "rw"}}, user="0", network_disabled=True, remove=True,
            labels={LABEL_PROJECT: PROJECT, LABEL_ROLE: "helper", LABEL_IMAGE: image_id},
            name=f"{name}-fill",
        )
        _mark_complete(name)
        return name


def _complete(client, name: str, image_id: str) -> bool:
    try:
        volume = client.volumes.get(name)
    except Exception:  # noqa: BLE001 - none yet
        return False
    labels = volume.attrs.get("Labels") or {}
    return labels.get(LABEL_IMAGE) == image_id and _marker(name).exists()


def _marker(name: str) -> Path:
    return _lock_path(name).with_suffix(".complete")


def _mark_complete(name: str) -> None:
    _marker(name).write_text("filled\n")


def _remove_stale(client, image_id: str) -> None:
    """Volumes of images that no longer exist (a rebuilt image's old copy)."""
    for volume in client.volumes.list(filters={"label": [f"{LABEL_PROJECT}={PROJECT}", f"{LABEL_ROLE}={ROLE}"]}):
        other = (volume.attrs.get("Labels") or {}).get(LABEL_IMAGE)
        if other == image_id:
            continue
        try:
            client.images.get(other)
        except Exception:  # noqa: BLE001 - its image is gone
            docker_api.ignore_gone(volume.remove, force=True)
            _marker(volume.name).unlink(missing_ok=True)
