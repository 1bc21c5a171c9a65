"""``chaos images status``: which images exist, are stale or are missing.

The same hashes ``ensure_images`` computes, without building or touching the network.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from chaos.images import engine, wheelhouse
from chaos.images.base import FALLBACK_BASE_TAG, base_recipe_hash, find_base
from chaos.images.plans import (
    DEFAULT_TF_VERSIONS,
    LABEL_INPUTS,
    app_inputs,
    deps_inputs,
    proxy_plans,
    worker_plans,
)
from chaos.images.versions import parse_tf_version


@dataclass
class ImageState:
    name: str
    tag: str
    state: str  # "exists", "stale" or "missing"
    built_at: str = ""
    size: int = 0
    note: str = ""


def _state_of(client, name: str, tag: str, want: str | None, note: str = "") -> ImageState:
    img = engine.get_image(client, tag)
    if img is None:
        return ImageState(name, tag, "missing", note=note)
    created, size = engine.created_of(img), int(img.attrs.get("Size") or 0)
    have = engine.labels_of(img).get(LABEL_INPUTS)
    if want is None:
        return ImageState(name, tag, "stale", created, size, note or "inputs unknown")
    if have != want:
        return ImageState(name, tag, "stale", created, size, note or "inputs changed")
    return ImageState(name, tag, "exists", created, size, note)


def image_status(
    tf_versions: Iterable[str] = DEFAULT_TF_VERSIONS,
    *,
    proxy: bool = True,
    base_image: str | None = None,
    client=None,
    helper: bool = False,
) -> list[ImageState]:
    """What exists, what is stale (inputs changed) and what is missing. No network.
    ``helper``: also the packet faults' network helper (chaos.images.netns_helper)."""
    client = client or engine.docker_client()
    arch = engine.architecture(client)
    specs = [parse_tf_version(v, arch) for v in tf_versions]
    rows: list[ImageState] = []
    base = find_base(client, base_image)
    if base is None:
        rows.append(_state_of(client, "base", FALLBACK_BASE_TAG, base_recipe_hash()))
    elif base.kind == "stock":
        img = engine.get_image(client, base.tag)
        rows.append(
            ImageState(
                "base", base.tag, "exists", engine.created_of(img), int(img.attrs.get("Size") or 0), "stock image"
            )
        )
    else:
        rows.append(_state_of(client, "base", base.tag, base_recipe_hash()))
    pairs = [worker_plans(s) for s in specs] + ([proxy_plans(arch)] if proxy else [])
    for deps, app in pairs:
        if base is None:
            rows.append(_state_of(client, deps.name, deps.tag, None, "base image missing"))
            rows.append(_state_of(client, app.name, app.tag, None, "base image missing"))
            continue
        wheel_dir = wheelhouse.wheelhouse_dir(deps.wheelhouse_name)
        lock = deps.lock or wheelhouse.read_lock(os.path.join(wheel_dir, ".lock"))
        files = wheelhouse.wheels_for(wheel_dir, lock) if lock else None
        if lock is None or files is None:
            note = f"wheels not downloaded (into {wheel_dir})"
            rows.append(_state_of(client, deps.name, deps.tag, None, note))
            rows.append(_state_of(client, app.name, app.tag, None, note))
            continue
        deps.lock = lock
        deps.inputs = deps_inputs(deps, base, lock, wheelhouse.wheel_manifest(wheel_dir, files))
        app.inputs = app_inputs(app)
        rows.append(_state_of(client, deps.name, deps.tag, deps.hash))
        rows.append(_state_of(client, app.name, app.tag, app.hash))
    if helper:
        from chaos.images.netns_helper import HELPER_IMAGE, wanted_hash

        want, note = wanted_hash(base.id) if base is not None else (None, "base image missing")
        rows.append(_state_of(client, "netns-helper", HELPER_IMAGE, want, note))
    return rows
