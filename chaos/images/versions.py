"""TensorFlow version -> what to install (a "wheel spec") and how to tag it.

* TF 2.12 .. 2.15: ``tensorflow-cpu`` only (Keras 2 is built in) and NO
  ``TF_USE_LEGACY_KERAS`` (on 2.15 it makes ``tf.keras`` look for tf_keras).
* TF >= 2.16: ``tensorflow-cpu`` plus ``tf-keras`` of the same minor version,
  installed with ``--no-deps`` (tf-keras depends on the full ``tensorflow`` wheel,
  which would be a second 600 MB copy of TF), and ``TF_USE_LEGACY_KERAS=1``.

Versions with a committed lock (``docker/worker/tf<ver>/``) are pinned exactly;
any other version becomes ``tensorflow-cpu==X.Y.*`` and the downloaded wheelhouse
is locked on first download.

Per engine architecture (asked of the engine, ``docker info``'s Architecture; issue 41):
``tensorflow-cpu`` has wheels for x86-64 only, so an aarch64 engine (Apple silicon's
Docker Desktop, Graviton, arm64 CI runners) gets ``tensorflow``, whose aarch64 wheel
is CPU-only, with its own wheelhouse and lock (``tf<ver>-aarch64``). x86-64 is as before.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from chaos import resources
from chaos.errors import InfrastructureError, ScenarioError

MIN_MINOR = 12  # first TF with Python 3.11 wheels
LEGACY_KERAS_FROM = 16  # first TF whose tf.keras is Keras 3
# The worker image a scenario, a baseline and the test fixtures get unless they name one.
DEFAULT_TF_VERSION = "2.21"

DEFAULT_ARCH = "x86_64"
# What `docker info` (uname -m) or a platform string calls an architecture -> ours.
ARCH_NAMES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}
# The TensorFlow distribution with CPU wheels for Python 3.11 on each.
TF_DISTRIBUTION = {"x86_64": "tensorflow-cpu", "aarch64": "tensorflow"}
TF_DISTRIBUTIONS = frozenset(TF_DISTRIBUTION.values())


def engine_arch(reported: str, engine: str = "the Docker engine") -> str:
    """Ours for the architecture an engine reports (``docker info``), or an error naming it."""
    arch = ARCH_NAMES.get(str(reported).strip().lower())
    if arch is None:
        raise InfrastructureError(
            f"{engine} runs on {reported!r}, and the images are built for x86_64 and aarch64 only",
            hint="point DOCKER_HOST at an x86_64 or aarch64 (arm64) engine: TensorFlow publishes Linux wheels "
            "for those two",
        )
    return arch


def this_machine_arch() -> str:
    """This machine's architecture in our names (what debootstrap and apt fetch here)."""
    import platform  # noqa: PLC0415

    return ARCH_NAMES.get(platform.machine().lower(), platform.machine())


_VERSION_RE = re.compile(r"^(?:tf)?(\d+)\.(\d+)(?:\.(\d+))?$")


@dataclass(frozen=True)
class TFSpec:
    version: str  # as the user names it: "2.20" or "2.18.1"
    major: int
    minor: int
    patch: int | None
    arch: str = DEFAULT_ARCH  # the engine's (engine_arch)

    @property
    def key(self) -> str:
        """In the image tags: one engine holds one architecture's images."""
        return f"tf{self.version}"

    @property
    def wheelhouse_key(self) -> str:
        """The wheelhouse and lock folder: the architecture's own, x86-64's as before."""
        return self.key if self.arch == DEFAULT_ARCH else f"{self.key}-{self.arch}"

    @property
    def distribution(self) -> str:
        return TF_DISTRIBUTION[self.arch]

    @property
    def legacy_keras(self) -> bool:
        return self.minor >= LEGACY_KERAS_FROM

    @property
    def lock_dir(self) -> str | None:
        """The committed lock for this version, if there is one."""
        path = os.path.join(resources.docker_dir(), "worker", self.wheelhouse_key)
        return path if os.path.isfile(os.path.join(path, "requirements.txt")) else None

    def _pin(self) -> str:
        return f"=={self.version}" if self.patch is not None else f"=={self.major}.{self.minor}.*"

    def requirements(self) -> list[str]:
        """Top-level requirements installed with dependencies (unlocked form)."""
        return [f"{self.distribution}{self._pin()}"]

    def nodeps_requirements(self) -> list[str]:
        """Requirements installed with ``--no-deps``."""
        return [f"tf-keras{self._pin()}"] if self.legacy_keras else []

    def env(self) -> dict[str, str]:
        return {"TF_USE_LEGACY_KERAS": "1"} if self.legacy_keras else {}


def parse_tf_version(text: str, arch: str = DEFAULT_ARCH) -> TFSpec:
    """``"2.20"``, ``"2.18.1"`` or ``"tf2.20"`` -> TFSpec (for an engine of ``arch``);
    anything else is an error."""
    raw = str(text).strip()
    m = _VERSION_RE.match(raw)
    if not m:
        raise ScenarioError(
            f"bad TensorFlow version {text!r}: expected MAJOR.MINOR or MAJOR.MINOR.PATCH",
            hint="e.g. --tf 2.20 or --tf 2.18.1",
        )
    major, minor = int(m.group(1)), int(m.group(2))
    patch = int(m.group(3)) if m.group(3) is not None else None
    if major != 2 or minor < MIN_MINOR:
        raise ScenarioError(
            f"TensorFlow {raw.removeprefix('tf')} has no Python 3.11 wheel "
            f"(the images support 2.{MIN_MINOR} and later)",
            hint="pick a 2.x version >= 2.12, e.g. --tf 2.15 or --tf 2.20",
        )
    version = f"{major}.{minor}" + (f".{patch}" if patch is not None else "")
    return TFSpec(version, major, minor, patch, engine_arch(arch))


def buildable_version(value: str) -> str:
    """A validator for scenario fields: ``value`` unchanged, or ValueError saying why no image can be built."""
    try:
        parse_tf_version(value)
    except ScenarioError as exc:
        raise ValueError(f"{exc.message} ({exc.hint})") from None
    return value


def app_tag(tag: str) -> str:
    """``tag`` of an image made from this copy of the code (worker, proxy).

    ``TFCHAOS_IMAGE_VARIANT=x`` appends ``-x``: two source trees on one engine
    (a development worktree beside the main checkout) then never replace each
    other's code images while one of them runs scenarios. The heavy deps images
    hold no project code and are shared.
    """
    variant = os.environ.get("TFCHAOS_IMAGE_VARIANT", "").strip()
    return f"{tag}-{variant}" if variant else tag


def worker_image_tag(tf_version: str) -> str:
    """``"2.20"`` -> ``"tfchaos/worker:tf2.20"``."""
    return app_tag(f"tfchaos/worker:{parse_tf_version(tf_version).key}")


def worker_deps_tag(tf_version: str) -> str:
    return f"tfchaos/worker-deps:{parse_tf_version(tf_version).key}"
