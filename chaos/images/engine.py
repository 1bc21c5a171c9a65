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
    (if nothing else uses it) so stale 2 GB images do not pile up; one still
    used by a container is remembered and dropped by a later build (drop_replaced)."""
    old = get_image(client, tag)
    repo, t = split_tag(tag)
    client.api.tag(image_id, repo, t)
    if old is not None and old.id != image_id:
        try:
            client.api.remove_image(old.id, noprune=False)
        except Exception:  # a container (a run next door) still uses it
            remove_later([old.id])
        else:
            progress(f"  removed the previous {tag} ({old.short_id.split(':')[-1]})")


def _replaced_file() -> str:
    return os.path.join(wheelhouse.cache_root(), "replaced-images")


def _read_replaced() -> set[str]:
    try:
        with open(_replaced_file(), encoding="ascii") as fh:
            return {line.strip() for line in fh if line.strip()}
    except OSError:
        return set()


def _write_replaced(ids: set[str]) -> None:
    os.makedirs(os.path.dirname(_replaced_file()), exist_ok=True)
    with open(_replaced_file(), "w", encoding="ascii") as fh:
        fh.writelines(f"{i}\n" for i in sorted(ids))


def remove_later(image_ids: list[str]) -> None:
    """Images of ours that are garbage (a build's untagged stages), for drop_replaced."""
    _write_replaced(_read_replaced() | set(image_ids))


def drop_replaced(client) -> None:
    """Remove the images our builds replaced while a container used them, now that
    nothing does; only those (called under build_lock). Never a prune by label: a
    user's ``docker build`` FROM one of ours makes untagged intermediate images that
    inherit our labels, and a CI run's prune removed one mid-build (No such image)."""
    keep = set()
    for image_id in _read_replaced():
        try:
            image = get_image(client, image_id)
        except InfrastructureError:  # the engine could not say: try again next build
            keep.add(image_id)
            continue
        if image is None or image.tags:  # gone, or tagged again by someone: not ours to drop
            continue
        try:
            client.api.remove_image(image_id, noprune=False)
        except Exception:  # still in use
            keep.add(image_id)
    _write_replaced(keep)


@contextlib.contextmanager
def build_lock():
    """Serialise builds between processes on this machine."""
    root = wheelhouse.cache_root()
    os.makedirs(root, exist_ok=True)
    with interrupts.file_lock(os.path.join(root, "images.lock")):  # a stopped run stops waiting
        yield


def stream_build(client, progress: Progress, *, stage_ends: list[str] | None = None, **kwargs) -> str:
    """``docker build`` with the steps shown; the new image's id. ``stage_ends``
    gets the image each earlier stage of a multi-stage build ended with (untagged)."""
    image_id = None
    last_error = None
    last_step_image = None  # the legacy builder prints " ---> ID" after each step
    for chunk in client.api.build(decode=True, rm=True, forcerm=True, pull=False, **kwargs):
        if "error" in chunk:
            last_error = chunk.get("error", "").strip()
        elif "aux" in chunk and isinstance(chunk["aux"], dict) and "ID" in chunk["aux"]:
            image_id = chunk["aux"]["ID"]
        elif "stream" in chunk:
            line = chunk["stream"].strip()
            if line.startswith("---> ") and " " not in line[5:]:
                last_step_image = line[5:]
            if line.startswith("Step "):
                progress(f"  docker build: {line[:110]}")
                if " : FROM " in line and last_step_image and stage_ends is not None:
                    stage_ends.append(last_step_image)  # the stage before this one ended here
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
