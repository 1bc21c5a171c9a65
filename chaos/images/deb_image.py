"""Images made of the project's Debian base plus Debian packages fetched ahead
into the cache (the packet faults' network helper, the swarm node): the
packages are installed in one build container with no network and the result
committed, rebuilt only when the base or the packages change (input hash)."""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chaos import LABEL_PROJECT, PROJECT
from chaos.errors import InfrastructureError
from chaos.images import engine, hashing, send
from chaos.images.engine import Progress
from chaos.images.plans import LABEL_BUILD_SESSION, LABEL_INPUTS, LABEL_KIND, build_container_labels
from chaos.images.versions import this_machine_arch
from chaos.images.wheelhouse import cache_root

if TYPE_CHECKING:
    from chaos.images.base import BaseRef


@dataclass(frozen=True)
class DebImage:
    tag: str
    kind: str  # the image's io.tfchaos.kind, and its folder of packages in the cache
    what: str  # for messages: "the network helper"
    install: str  # the shell script that installs /tmp/debs/*.deb
    changes: tuple[str, ...]  # docker commit changes (ENTRYPOINT, CMD, ENV)
    hint: str  # what to do when the install fails


def debs_dir(kind: str) -> str:
    return os.path.join(cache_root(), "debs", kind)


def debs_present(folder: str) -> list[str]:
    if not os.path.isdir(folder):
        return []
    return sorted(f for f in os.listdir(folder) if f.endswith(".deb"))


def package_of(filename: str) -> str:
    return filename.split("_", 1)[0]


def inputs(kind: str, install: str, changes, base_id: str, folder: str, files: list[str], **extra) -> dict:
    """What such an image's input hash covers: its recipe, its packages (name and size) and the base."""
    return {
        "kind": kind,
        **extra,
        "install": install,
        "changes": changes,
        "debs": [(f, os.path.getsize(os.path.join(folder, f))) for f in files],
        "base": base_id,
    }


def wanted_hash(
    base_id: str, folder: str, complete: Callable[[list[str]], bool], inputs_of: Callable[[str, str, list[str]], dict]
) -> tuple[str | None, str]:
    """The inputs hash the image should carry on this base, or None with why it
    cannot be told yet (its packages are not fetched). No network."""
    files = debs_present(folder)
    if not complete(files):
        return None, f"Debian packages not fetched (into {folder})"
    return hashing.inputs_hash(inputs_of(base_id, folder, files)), ""


def ensure(
    client,
    image: DebImage,
    debs: Callable[[BaseRef], tuple[str, list[str]]],
    inputs: Callable[[str, str, list[str]], dict],
    *,
    force: bool = False,
    progress: Progress = engine.noop,
) -> str:
    """Build ``image`` when it is missing or stale; its tag. ``debs(base)``: the
    package folder and files; ``inputs(base_id, folder, files)``: what the hash covers."""
    from chaos.images.base import ensure_base

    client = client or engine.docker_client()
    arch, here = engine.architecture(client), this_machine_arch()
    if arch != here:
        raise InfrastructureError(
            f"{image.what} is made of Debian packages that apt fetches on this machine ({here}), and the engine at "
            f"{engine.engine_address()[0]} is {arch}",
            hint=f"build {image.what} on an {arch} machine against that engine (docs/remote-engines.md)",
        )
    with engine.build_lock():
        base = ensure_base(client, progress=progress)
        folder, files = debs(base)
        inputs_hash = hashing.inputs_hash(inputs(base.id, folder, files))
        current = engine.get_image(client, image.tag)
        if not force and current is not None and engine.labels_of(current).get(LABEL_INPUTS) == inputs_hash:
            progress(f"{image.tag}: up to date")
            return image.tag
        t0 = time.monotonic()
        progress(f"{image.tag}: building ({len(files)} Debian packages on {base.tag})")
        image_id = _build(client, image, base.tag, folder, inputs_hash)
        engine.retag(client, image_id, image.tag, progress)
        progress(f"{image.tag}: built in {time.monotonic() - t0:.0f}s")
    return image.tag


def _build(client, image: DebImage, base_tag: str, folder: str, inputs_hash: str) -> str:
    import docker.errors

    container = None
    name = f"tfchaos-build-{image.kind}-{uuid.uuid4().hex[:8]}"
    try:
        # The packages go to the engine as a volume (chaos.images.send), never a bind of this machine's folder.
        with send.read_only_volumes(
            client, base_tag, {"/tmp/debs": folder}, labels=build_container_labels(), prefix=name
        ) as mounts:
            try:
                container = client.containers.create(
                    base_tag,
                    entrypoint=["sh", "-c"],
                    command=[image.install],
                    name=name,
                    labels=build_container_labels(),
                    mounts=mounts,
                    network_disabled=True,
                    user="0",
                )
                container.start()
                status = int(container.wait().get("StatusCode", 1))
                if status != 0:
                    tail = container.logs().decode(errors="replace").strip().splitlines()[-3:]
                    raise InfrastructureError(
                        f"installing {image.what}'s packages failed (exit {status}): {' | '.join(tail)[:300]}",
                        hint=image.hint.format(folder=folder),
                    )
                changes = list(image.changes) + [
                    f"LABEL {LABEL_BUILD_SESSION}=",
                    f"LABEL {LABEL_PROJECT}={PROJECT}",
                    f"LABEL {LABEL_INPUTS}={inputs_hash}",
                    f"LABEL {LABEL_KIND}={image.kind}",
                ]
                return client.api.commit(container.id, changes=changes)["Id"]
            finally:
                if container is not None:  # before its volume goes
                    with contextlib.suppress(Exception):
                        container.remove(force=True, v=True)
    except docker.errors.APIError as exc:
        raise InfrastructureError(f"docker failed while building {image.tag}: {exc.explanation}") from None
