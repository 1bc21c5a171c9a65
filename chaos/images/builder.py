"""Build every image the project needs, offline, labelled with a hash of its
inputs and rebuilt only when the inputs change.

Chain (each arrow = "built on top of"):

    base image  (stock python:3.11-slim-bookworm if present/pullable, else a
      |          Debian bookworm rootfs from the machine's apt mirror, imported
      |          as tfchaos/base:bookworm-py3.11)                      base.py
      +-> tfchaos/worker-deps:tf<ver>  (/opt/venv with the TF wheelhouse, user tfchaos)
      |     +-> tfchaos/worker:tf<ver> (docker/worker/Dockerfile: + worker code)
      +-> tfchaos/proxy-deps:latest    (/opt/venv with aiohttp + uvloop, user tfchaos)
            +-> tfchaos/proxy:latest   (docker/proxy/Dockerfile: + proxy code)

What each image is made of: plans.py. How: commit_build.py (default) or
docker_build.py (``TFCHAOS_BUILD_METHOD=dockerfile``); docs/images.md says why.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable

from chaos import resources
from chaos.errors import InfrastructureError
from chaos.images import commit_build, docker_build, engine, wheelhouse
from chaos.images.base import BaseRef, ensure_base
from chaos.images.engine import Progress
from chaos.images.plans import (
    DEFAULT_TF_VERSIONS,
    LABEL_INPUTS,
    ImagePlan,
    app_files,
    app_inputs,
    deps_inputs,
    deps_lock_dir,
    proxy_plans,
    worker_plans,
)
from chaos.images.versions import parse_tf_version

BUILD_METHODS = ("commit", "dockerfile")


def build_method() -> str:
    method = os.environ.get("TFCHAOS_BUILD_METHOD", "commit")
    if method not in BUILD_METHODS:
        raise InfrastructureError(
            f"TFCHAOS_BUILD_METHOD={method!r} is not a build method",
            hint=f"use one of: {', '.join(BUILD_METHODS)} (or unset it)",
        )
    return method


def up_to_date(client, plan: ImagePlan) -> bool:
    img = engine.get_image(client, plan.tag)
    return img is not None and engine.labels_of(img).get(LABEL_INPUTS) == plan.hash


def _prepare_deps(plan: ImagePlan, base: BaseRef, progress: Progress) -> tuple[str, str, list[str]]:
    """Fill the wheelhouse and compute the deps hash. Returns (wheel dir, lock dir, wheel files)."""
    wheel_dir, lock, files = wheelhouse.ensure_wheelhouse(
        plan.wheelhouse_name, plan.lock, plan.unlocked, progress=progress, arch=plan.arch
    )
    plan.lock = lock
    plan.inputs = deps_inputs(plan, base, lock, wheelhouse.wheel_manifest(wheel_dir, files))
    return wheel_dir, deps_lock_dir(plan, wheel_dir), files


def _ensure_pair(client, deps: ImagePlan, app: ImagePlan, base: BaseRef, force: bool, progress: Progress) -> str:
    method = build_method()
    wheel_dir, lock_dir, wheels = _prepare_deps(deps, base, progress)
    app.inputs = app_inputs(app)
    if not force and up_to_date(client, app):
        progress(f"{app.tag}: up to date")
        return app.tag
    t0 = time.monotonic()
    if force or not up_to_date(client, deps):
        progress(f"{deps.tag}: building ({len(wheels)} wheels, method {method})")
        if method == "dockerfile":
            image_id = docker_build.build_deps(client, deps, base.tag, wheel_dir, lock_dir, wheels, progress)
        else:
            image_id = commit_build.build_deps(client, deps, base.tag, wheel_dir, lock_dir, progress)
        engine.retag(client, image_id, deps.tag, progress)
        progress(f"{deps.tag}: built in {time.monotonic() - t0:.0f}s")
    else:
        progress(f"{deps.tag}: up to date")
    t1 = time.monotonic()
    progress(f"{app.tag}: building (method {method})")
    files = app_files(app)
    app.inputs = app_inputs(app)  # the files as copied now
    builder = docker_build.build_app if method == "dockerfile" else commit_build.build_app
    image_id = builder(client, app, deps.tag, files, progress)
    engine.retag(client, image_id, app.tag, progress)
    progress(f"{app.tag}: built in {time.monotonic() - t1:.0f}s")
    return app.tag


def ensure_images(
    tf_versions: Iterable[str] = DEFAULT_TF_VERSIONS,
    *,
    proxy: bool = True,
    base_image: str | None = None,
    only: str | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> dict[str, str]:
    """Build whatever is missing or stale; return {name: tag}.

    Names: ``"base"``, ``"worker:tf2.20"`` (one per TF version), ``"proxy"``.
    ``only`` is ``"base"``, ``"worker"`` or ``"proxy"``. ``force`` rebuilds the
    selected images even when their inputs match.
    """
    progress = progress or engine.noop
    if only not in (None, "base", "worker", "proxy"):
        raise InfrastructureError(f"unknown image kind {only!r}", hint="use base, worker or proxy")
    [parse_tf_version(v) for v in tf_versions]  # a bad version is named before the engine is asked
    resources.docker_dir()  # a clear error before anything starts if the Dockerfiles are missing
    client = engine.docker_client()
    arch = engine.architecture(client)
    specs = [parse_tf_version(v, arch) for v in tf_versions]
    out: dict[str, str] = {}
    t0 = time.monotonic()
    with engine.build_lock():
        base = ensure_base(client, base_image, force=force and only in (None, "base"), progress=progress, arch=arch)
        out["base"] = base.tag
        if only in (None, "worker"):
            for spec in specs:
                deps, app = worker_plans(spec)
                out[app.name] = _ensure_pair(client, deps, app, base, force, progress)
        if proxy and only in (None, "proxy"):
            deps, app = proxy_plans(arch)
            out[app.name] = _ensure_pair(client, deps, app, base, force, progress)
        engine.drop_replaced(client)  # replaced while a container used them, free now
    progress(f"done in {time.monotonic() - t0:.1f}s")
    return out
