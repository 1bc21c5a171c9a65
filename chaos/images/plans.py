"""What each image is made of: its tag, its inputs (hashed into the
``io.tfchaos.inputs`` label) and where its Dockerfile and code are.

    base -> tfchaos/worker-deps:tf<ver> -> tfchaos/worker:tf<ver>
         -> tfchaos/proxy-deps:latest   -> tfchaos/proxy:latest
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from chaos import LABEL_PROJECT, PROJECT, SESSION_ENV, resources
from chaos.images import hashing, wheelhouse
from chaos.images.versions import (
    DEFAULT_ARCH,
    DEFAULT_TF_VERSION,
    TF_DISTRIBUTIONS,
    TFSpec,
    app_tag,
    worker_deps_tag,
    worker_image_tag,
)

if TYPE_CHECKING:
    from chaos.images.base import BaseRef

LABEL_INPUTS = "io.tfchaos.inputs"
LABEL_TF = "io.tfchaos.tf_version"
LABEL_KIND = "io.tfchaos.kind"
# A build container's session (the test suite's leftover check: a build of ours,
# never another session's). Blanked in the image it commits, so no image claims one.
LABEL_BUILD_SESSION = "io.tfchaos.build-session"


def build_container_labels() -> dict[str, str]:
    return {LABEL_PROJECT: PROJECT, LABEL_KIND: "build", LABEL_BUILD_SESSION: os.environ.get(SESSION_ENV, "")}


def commit_labels(plan: ImagePlan) -> list[str]:
    """The ``docker commit`` changes that label an image built in a build container."""
    return [f"LABEL {LABEL_BUILD_SESSION}="] + [f"LABEL {k}={v}" for k, v in labels_for(plan).items()]


PROXY_IMAGE = app_tag("tfchaos/proxy:latest")
PROXY_DEPS_IMAGE = "tfchaos/proxy-deps:latest"
# What CI builds: the default; 2.18, which version-skew-tf218 runs beside it; 2.15, the
# last with Keras 2 built in (the tf215 skew scenario, the example built on it). Any
# other version (2.20: its lock is committed) is built on demand with --tf.
DEFAULT_TF_VERSIONS = (DEFAULT_TF_VERSION, "2.18", "2.15")

# Paths relative to resources.package_root() (the checkout, or site-packages).
WORKER_FILES = ["chaos/__init__.py", "chaos/events.py", "chaos/errors.py", "chaos/worker/**"]
PROXY_FILES = ["chaos/__init__.py", "chaos/errors.py", "chaos/proxy/**"]

# The unprivileged user the worker and proxy run as (USER in their Dockerfiles);
# docker/venv/add-user.sh creates it in every deps image.
RUN_AS = "tfchaos"

# How the deps container is set up by the commit builder (part of the deps hash).
# The wheelhouse and the scripts are read-only mounts through HostConfig.Mounts:
# the SDK's ``volumes=`` also writes Config.Volumes, which ``docker commit``
# keeps, so every image used to declare VOLUME /tmp/wheels and /tmp/build and
# each container from them made two anonymous volumes (issue 9).
# Since issue 41 they are named volumes filled over the API (chaos.images.send),
# not binds of this machine's folders, so a remote engine can build; the image is
# the same (the same empty mount points, nothing else: test_remote_engine.py
# compares the layers), so "mounted_via" keeps its old words and every deps
# image its hash: an image built either way is up to date.
DEPS_CONTAINER = {
    "mounts": {"/tmp/wheels": "wheelhouse", "/tmp/build": "scripts and lock"},
    "mounted_via": "HostConfig.Mounts, read-only binds",
    "steps": ["sh /tmp/build/add-user.sh", "sh /tmp/build/install-venv.sh /tmp/wheels /tmp/build/lock"],
}


@dataclass
class ImagePlan:
    """One image: its tag, how to compute its inputs, how to build it."""

    name: str  # "worker:tf2.20", "worker-deps:tf2.20", "proxy", ...
    tag: str
    kind: str  # "deps" or "app"
    inputs: dict[str, Any] = field(default_factory=dict)
    tf: TFSpec | None = None
    arch: str = DEFAULT_ARCH  # the engine's: which wheels the deps image installs
    # deps
    wheelhouse_name: str = ""
    lock: wheelhouse.Lock | None = None
    unlocked: wheelhouse.Lock | None = None
    env: dict[str, str] = field(default_factory=dict)
    # app
    dockerfile: str = ""
    patterns: list[str] = field(default_factory=list)
    deps: ImagePlan | None = None

    @property
    def hash(self) -> str:
        return hashing.inputs_hash(self.inputs)


def read_text(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def docker_file(*parts: str) -> str:
    """A path under the shipped docker/ folder."""
    return str(resources.docker_dir().joinpath(*parts))


def worker_plans(spec: TFSpec) -> tuple[ImagePlan, ImagePlan]:
    lock = wheelhouse.read_lock(spec.lock_dir) if spec.lock_dir else None
    unlocked = wheelhouse.Lock(tuple(spec.requirements()), tuple(spec.nodeps_requirements()))
    deps = ImagePlan(
        name=f"worker-deps:{spec.key}",
        tag=worker_deps_tag(spec.version),
        kind="deps",
        tf=spec,
        arch=spec.arch,
        wheelhouse_name=spec.wheelhouse_key,
        lock=lock,
        unlocked=unlocked,
        env=spec.env(),
    )
    app = ImagePlan(
        name=f"worker:{spec.key}",
        tag=worker_image_tag(spec.version),
        kind="app",
        tf=spec,
        arch=spec.arch,
        dockerfile=docker_file("worker", "Dockerfile"),
        patterns=WORKER_FILES,
        deps=deps,
    )
    return deps, app


def proxy_plans(arch: str = DEFAULT_ARCH) -> tuple[ImagePlan, ImagePlan]:
    """The committed lock (its pins have wheels for both architectures), in a wheelhouse per architecture."""
    lock = wheelhouse.read_lock(docker_file("proxy"))
    deps = ImagePlan(
        name="proxy-deps",
        tag=PROXY_DEPS_IMAGE,
        kind="deps",
        arch=arch,
        wheelhouse_name="proxy" if arch == DEFAULT_ARCH else f"proxy-{arch}",
        lock=lock,
    )
    app = ImagePlan(
        name="proxy",
        tag=PROXY_IMAGE,
        kind="app",
        arch=arch,
        dockerfile=docker_file("proxy", "Dockerfile"),
        patterns=PROXY_FILES,
        deps=deps,
    )
    return deps, app


def deps_inputs(plan: ImagePlan, base: BaseRef, lock: wheelhouse.Lock, manifest) -> dict[str, Any]:
    return {
        "kind": "deps",
        "dockerfile": read_text(docker_file("venv", "Dockerfile")),
        "script": read_text(docker_file("venv", "install-venv.sh")),
        "user_script": read_text(docker_file("venv", "add-user.sh")),
        "container": DEPS_CONTAINER,
        "lock": lock.text(),
        "wheels": manifest,
        "base": {"ref": base.tag, "id": base.id},
        "env": plan.env,
    }


def app_files(plan: ImagePlan) -> list[str]:
    """The code the image copies, relative to resources.package_root()."""
    return hashing.collect_files(str(resources.package_root()), plan.patterns)


def app_inputs(plan: ImagePlan) -> dict[str, Any]:
    assert plan.deps is not None
    return {
        "kind": "app",
        "dockerfile": read_text(plan.dockerfile),
        "buildargs": {"DEPS_IMAGE": plan.deps.tag},
        "deps": plan.deps.hash,
        "files": hashing.files_digest(str(resources.package_root()), app_files(plan)),
        "tf_version": plan.tf.version if plan.tf else None,
    }


def installed_tf_version(plan: ImagePlan) -> str | None:
    dep = plan if plan.kind == "deps" else plan.deps
    if dep is None or dep.lock is None:
        return None
    return next((dep.lock.pins[d] for d in sorted(TF_DISTRIBUTIONS) if d in dep.lock.pins), None)


def labels_for(plan: ImagePlan) -> dict[str, str]:
    labels = {LABEL_PROJECT: PROJECT, LABEL_INPUTS: plan.hash, LABEL_KIND: plan.kind}
    if plan.tf is not None:
        labels[LABEL_TF] = installed_tf_version(plan) or plan.tf.version
    return labels


def deps_lock_dir(plan: ImagePlan, wheel_dir: str) -> str:
    """The lock folder installed into the deps image: the committed one, or the one
    generated in the wheelhouse for a TF version without a committed lock."""
    if plan.tf is None:
        return docker_file("proxy")
    return plan.tf.lock_dir or os.path.join(wheel_dir, ".lock")
