"""Wheelhouses: pinned wheel sets downloaded on the host with ``pip download``
(Python 3.11, manylinux x86_64, or aarch64 for an aarch64 engine) into a cache
outside the repo, installed offline in the image build.

Cache: ``$TFCHAOS_CACHE/wheels/<name>`` (``TFCHAOS_CACHE`` defaults to
``~/.cache/tfchaos``). A lock is a directory with ``requirements.txt`` (every
wheel pinned ``name==version``, installed with dependencies) and optionally
``nodeps.txt`` (installed with ``--no-deps``). Committed locks live in
``docker/``; a TF version without one is resolved once by pip and the result is
locked into ``<wheelhouse>/.lock/``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

from chaos.errors import InfrastructureError

Progress = Callable[[str], None]


# Bookworm has glibc 2.36: accept every manylinux tag up to that (pip does not
# expand manylinux_2_X platforms by itself). aarch64 wheels start at manylinux2014 (2.17).
def platforms(arch: str = "x86_64") -> list[str]:
    if arch == "aarch64":
        return [f"manylinux_2_{m}_aarch64" for m in range(36, 16, -1)] + ["manylinux2014_aarch64"]
    return [f"manylinux_2_{m}_x86_64" for m in range(36, 4, -1)] + [
        "manylinux2014_x86_64",
        "manylinux2010_x86_64",
        "manylinux1_x86_64",
    ]


def pip_target(arch: str = "x86_64") -> list[str]:
    """pip's options for wheels that install in the images' Python 3.11 on ``arch``."""
    return [
        "--only-binary=:all:",
        "--python-version",
        "3.11",
        "--implementation",
        "cp",
        "--abi",
        "cp311",
        "--abi",
        "abi3",
        "--abi",
        "none",
    ] + [arg for p in platforms(arch) for arg in ("--platform", p)]


def cache_root() -> str:
    return os.path.expanduser(os.environ.get("TFCHAOS_CACHE") or "~/.cache/tfchaos")


def wheelhouse_dir(name: str) -> str:
    return os.path.join(cache_root(), "wheels", name)


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_name_version(filename: str) -> tuple[str, str] | None:
    if not filename.endswith(".whl"):
        return None
    parts = filename[:-4].split("-")
    if len(parts) < 5:
        return None
    return normalize(parts[0]), parts[1]


@dataclass(frozen=True)
class Lock:
    """A pinned wheel set: ``requirements`` with deps, ``nodeps`` without."""

    requirements: tuple[str, ...]
    nodeps: tuple[str, ...] = ()

    @property
    def pins(self) -> dict[str, str]:
        out = {}
        for line in self.requirements + self.nodeps:
            m = re.match(r"^([A-Za-z0-9_.\-]+)\s*==\s*([^\s;#]+)$", line)
            if m:
                out[normalize(m.group(1))] = m.group(2)
        return out

    @property
    def fully_pinned(self) -> bool:
        return len(self.pins) == len(self.requirements) + len(self.nodeps)

    def text(self) -> dict[str, str]:
        files = {"requirements.txt": "\n".join(self.requirements) + "\n"}
        if self.nodeps:
            files["nodeps.txt"] = "\n".join(self.nodeps) + "\n"
        return files

    def write(self, directory: str) -> None:
        os.makedirs(directory, exist_ok=True)
        for name in ("requirements.txt", "nodeps.txt"):
            path = os.path.join(directory, name)
            if os.path.exists(path):
                os.unlink(path)
        for name, body in self.text().items():
            with open(os.path.join(directory, name), "w", encoding="utf-8") as fh:
                fh.write(body)


def _req_lines(path: str) -> tuple[str, ...]:
    if not os.path.isfile(path):
        return ()
    out = []
    with open(path, encoding="utf-8") as fh:
        for raw in fh:
            line = raw.split("#", 1)[0].strip()
            if line:
                out.append(line)
    return tuple(out)


def read_lock(directory: str) -> Lock | None:
    reqs = _req_lines(os.path.join(directory, "requirements.txt"))
    if not reqs:
        return None
    return Lock(reqs, _req_lines(os.path.join(directory, "nodeps.txt")))


def wheels_for(directory: str, lock: Lock) -> list[str] | None:
    """The wheel files in ``directory`` that the lock pins, or None if any is missing."""
    if not os.path.isdir(directory):
        return None
    have: dict[tuple[str, str], str] = {}
    for fn in sorted(os.listdir(directory)):
        nv = wheel_name_version(fn)
        if nv:
            have.setdefault(nv, fn)
    out = []
    for name, version in sorted(lock.pins.items()):
        fn = have.get((name, version))
        if fn is None:
            return None
        out.append(fn)
    return out


def wheel_manifest(directory: str, files: list[str]) -> list[tuple[str, int]]:
    """(file name, size) for each wheel: the hashed description of a wheelhouse."""
    return [(fn, os.path.getsize(os.path.join(directory, fn))) for fn in files]


def _pip_download(args: list[str], dest: str, what: str, progress: Progress, arch: str = "x86_64") -> None:
    cmd = (
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--disable-pip-version-check",
            "--progress-bar",
            "off",
            "--dest",
            dest,
        ]
        + pip_target(arch)
        + args
    )
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except OSError as exc:
        raise InfrastructureError(f"cannot run pip: {exc}", hint="install pip for this Python") from None
    tail: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip()
            tail = (tail + [line])[-30:]
            if line.startswith(("Downloading", "Saved")) or "Collecting" in line[:12]:
                progress(f"  pip: {line.strip()}")
        rc = proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if rc == 0:
        return
    text = "\n".join(tail)
    if "No matching distribution found" in text or "Could not find a version" in text:
        missing = re.findall(r"No matching distribution found for (\S+)", text)
        wanted = missing[0] if missing else what
        raise InfrastructureError(
            f"no wheel of {wanted} for Python 3.11 on manylinux {arch} (the engine's architecture)",
            hint=f"pick a version that has one (`pip download --only-binary=:all: --platform "
            f"{platforms(arch)[-1]} --python-version 3.11 --no-deps '{wanted}'` tells), or build on an engine "
            f"of another architecture",
        )
    if re.search(
        r"(Connection|NewConnectionError|Temporary failure|Name or service|Max retries|timed out|ProxyError)", text
    ):
        raise InfrastructureError(
            f"pip download of {what} failed: cannot reach the package index",
            hint=f"check the network/pip configuration, or fill {dest} with the wheels by hand",
        )
    last = next((l for l in reversed(tail) if l.strip()), "no output")
    raise InfrastructureError(
        f"pip download of {what} failed (exit {rc}): {last.strip()}",
        hint=f"run `{' '.join(cmd[:4])} ... {' '.join(args)}` by hand to see the whole output",
    )


def ensure_wheelhouse(
    name: str,
    lock: Lock | None,
    unlocked: Lock | None = None,
    progress: Progress = lambda _m: None,
    arch: str = "x86_64",
) -> tuple[str, Lock, list[str]]:
    """Make sure ``wheelhouse_dir(name)`` holds every wheel of the lock.

    With a committed ``lock``, missing wheels are downloaded exactly (``--no-deps``
    per pinned line). Without one, ``unlocked`` (e.g. ``tensorflow-cpu==2.18.*``) is
    resolved by pip once and the result is locked into ``<wheelhouse>/.lock``.
    Wheels are for ``arch`` (the engine's: pip's platform options). Returns
    (wheelhouse dir, the lock, the lock's wheel files).
    """
    directory = wheelhouse_dir(name)
    generated_dir = os.path.join(directory, ".lock")
    if lock is None:
        lock = read_lock(generated_dir)
    if lock is not None:
        files = wheels_for(directory, lock)
        if files is not None:
            return directory, lock, files
        os.makedirs(directory, exist_ok=True)
        progress(f"downloading wheels for {name} into {directory}")
        args = ["--no-deps"] + list(lock.requirements) + list(lock.nodeps)
        _pip_download(args, directory, name, progress, arch)
        files = wheels_for(directory, lock)
        if files is None:
            raise InfrastructureError(
                f"pip download for {name} finished but {directory} still lacks pinned wheels",
                hint=f"delete {directory} and build again",
            )
        return directory, lock, files
    if unlocked is None:
        raise InfrastructureError(f"no lock and no requirements for wheelhouse {name}")
    os.makedirs(directory, exist_ok=True)
    progress(f"resolving {' '.join(unlocked.requirements + unlocked.nodeps)} into {directory}")
    tmp = directory + ".resolve"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        # Resolve each group into a scratch dir so the lock lists exactly what the
        # groups need (the cache dir may hold other wheels).
        _pip_download(list(unlocked.requirements), tmp, name, progress, arch)
        with_deps = {wheel_name_version(f) for f in os.listdir(tmp)} - {None}
        if unlocked.nodeps:
            _pip_download(["--no-deps"] + list(unlocked.nodeps), tmp, name, progress, arch)
        every = {wheel_name_version(f): f for f in os.listdir(tmp) if wheel_name_version(f)}
        reqs = tuple(f"{n}=={v}" for (n, v) in sorted(with_deps))  # type: ignore[misc]
        nodeps = tuple(f"{n}=={v}" for (n, v) in sorted(set(every) - with_deps))
        for fn in every.values():
            os.replace(os.path.join(tmp, fn), os.path.join(directory, fn))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    lock = Lock(reqs, nodeps)
    lock.write(generated_dir)
    progress(f"locked {len(lock.pins)} wheels for {name} in {generated_dir}")
    files = wheels_for(directory, lock)
    assert files is not None
    return directory, lock, files
