"""The Docker engine as the image builder uses it: a client, image look-ups,
tags, a build lock between processes, and ``docker build``/``import`` output."""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any, Callable

from chaos import interrupts
from chaos.errors import InfrastructureError
from chaos.images import wheelhouse

Progress = Callable[[str], None]


def noop(_msg: str) -> None:
    pass


def docker_client():
    """A connected docker client, or a one-line InfrastructureError."""
    try:
        import docker  # noqa: PLC0415
    except ImportError:
        raise InfrastructureError(
            "the Python package 'docker' is not installed", hint="pip install 'docker>=7.1'"
        ) from None
    try:
        client = docker.from_env(timeout=600)
        client.ping()
        return client
    except Exception as exc:  # docker.errors.DockerException, requests errors
        raise InfrastructureError(
            f"cannot reach the Docker engine ({str(exc).splitlines()[0][:160]})",
            hint="start it (e.g. `sudo service docker start`) or point DOCKER_HOST at it",
        ) from None


def get_image(client, ref: str):
    """The image ``ref`` names, or None."""
    import docker.errors  # noqa: PLC0415

    try:
        return client.images.get(ref)
    except docker.errors.ImageNotFound:
        return None
    except docker.errors.APIError as exc:
        raise InfrastructureError(f"docker could not inspect image {ref}: {exc.explanation}") from None


def labels_of(image) -> dict[str, str]:
    return (image.attrs.get("Config") or {}).get("Labels") or {} if image is not None else {}


def created_of(image) -> str:
    return (image.attrs.get("Created") or "")[:19].replace("T", " ")


def split_tag(tag: str) -> tuple[str, str]:
    repo, _, t = tag.rpartition(":")
    if not repo or "/" in t:
        return tag, "latest"
    return repo, t


def retag(client, image_id: str, tag: str, progress: Progress) -> None:
    """Point ``tag`` at ``image_id`` and drop the image it pointed at before
    (if nothing else uses it) so stale 2 GB images do not pile up."""
    old = get_image(client, tag)
    repo, t = split_tag(tag)
    client.api.tag(image_id, repo, t)
    if old is not None and old.id != image_id:
        with contextlib.suppress(Exception):
            client.api.remove_image(old.id, noprune=False)
            progress(f"  removed the previous {tag} ({old.short_id.split(':')[-1]})")


@contextlib.contextmanager
def build_lock():
    """Serialise builds between processes on this machine."""
    root = wheelhouse.cache_root()
    os.makedirs(root, exist_ok=True)
    with interrupts.file_lock(os.path.join(root, "images.lock")):  # a stopped run stops waiting
        yield


def stream_build(client, progress: Progress, **kwargs) -> str:
    """``docker build`` with the steps shown; the new image's id."""
    image_id = None
    last_error = None
    for chunk in client.api.build(decode=True, rm=True, forcerm=True, pull=False, **kwargs):
        if "error" in chunk:
            last_error = chunk.get("error", "").strip()
        elif "aux" in chunk and isinstance(chunk["aux"], dict) and "ID" in chunk["aux"]:
            image_id = chunk["aux"]["ID"]
        elif "stream" in chunk:
            line = chunk["stream"].strip()
            if line.startswith("Step "):
                progress(f"  docker build: {line[:110]}")
            elif line.startswith("Successfully built") and image_id is None:
                image_id = line.split()[-1]
    if last_error or not image_id:
        raise InfrastructureError(
            f"docker build failed: {last_error or 'no image produced'}"[:300],
            hint="fix the cause above and run `chaos images build` again (nothing was tagged)",
        )
    return image_id


def import_result_id(out: Any) -> str:
    """The image id in ``docker import``'s output, or its error."""
    text = out if isinstance(out, str) else json.dumps(out)
    for line in reversed(text.strip().splitlines()):
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if isinstance(doc, dict):
            if doc.get("error"):
                raise InfrastructureError(f"docker import failed: {doc['error']}")
            status = doc.get("status", "")
            if status.startswith("sha256:"):
                return status
    raise InfrastructureError(f"docker import returned no image id: {text[:200]}")


def prune_dangling(client, label: str) -> None:
    """Drop untagged images carrying ``label`` that nothing uses (prune never touches images in use)."""
    with contextlib.suppress(Exception):
        client.images.prune(filters={"dangling": True, "label": label})
