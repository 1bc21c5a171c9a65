"""The base image every other image is built on.

The configured stock Python 3.11 image (``--base-image``, ``TFCHAOS_BASE_IMAGE``,
default python:3.11-slim-bookworm) when it is present or pullable; otherwise a
Debian bookworm rootfs debootstrapped from the machine's apt mirror and
``docker import``ed as FALLBACK_BASE_TAG.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass

from chaos import LABEL_PROJECT, PROJECT
from chaos.errors import InfrastructureError
from chaos.images import engine, hashing, mirror
from chaos.images.engine import Progress
from chaos.images.plans import LABEL_INPUTS, LABEL_KIND
from chaos.images.versions import this_machine_arch

DEFAULT_BASE_IMAGE = "python:3.11-slim-bookworm"
FALLBACK_BASE_TAG = "tfchaos/base:bookworm-py3.11"

DEBIAN_SUITE = "bookworm"
DEBOOTSTRAP_INCLUDE = ["python3", "python3-venv", "ca-certificates", "procps", "iproute2"]
BASE_CHANGES = [
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "ENV LANG=C.UTF-8",
    'CMD ["python3"]',
]
# Everything that shapes the bootstrapped base (the mirror is only a source).
BASE_RECIPE = {
    "recipe": 1,
    "suite": DEBIAN_SUITE,
    "variant": "minbase",
    "include": DEBOOTSTRAP_INCLUDE,
    "changes": BASE_CHANGES,
    "cleanup": ["var/cache/apt/archives/*.deb", "var/lib/apt/lists/*"],
}


@dataclass
class BaseRef:
    tag: str  # what FROM uses
    id: str
    kind: str  # "stock" or "debootstrap"


def base_recipe_hash() -> str:
    return hashing.inputs_hash(BASE_RECIPE)


def find_base(client, base_image: str | None = None) -> BaseRef | None:
    """The base image to build on, if one is already present (no network)."""
    configured = base_image or os.environ.get("TFCHAOS_BASE_IMAGE") or DEFAULT_BASE_IMAGE
    img = engine.get_image(client, configured)
    if img is not None:
        return BaseRef(configured, img.id, "stock")
    img = engine.get_image(client, FALLBACK_BASE_TAG)
    if img is not None and engine.labels_of(img).get(LABEL_INPUTS) == base_recipe_hash():
        return BaseRef(FALLBACK_BASE_TAG, img.id, "debootstrap")
    return None


def ensure_base(
    client,
    base_image: str | None = None,
    *,
    force: bool = False,
    progress: Progress = engine.noop,
    arch: str | None = None,
) -> BaseRef:
    """The base to build on: the configured stock image if present locally (a
    stock image is never "rebuilt", even with ``force``), else the bootstrapped
    Debian base if current, else a pull of the configured image, else debootstrap."""
    explicit = bool(base_image or os.environ.get("TFCHAOS_BASE_IMAGE"))
    configured = base_image or os.environ.get("TFCHAOS_BASE_IMAGE") or DEFAULT_BASE_IMAGE
    img = engine.get_image(client, configured)
    if img is not None:
        progress(f"base: {configured} (stock image, present locally)")
        return BaseRef(configured, img.id, "stock")
    found = None if force else find_base(client, base_image)
    if found is not None and not explicit:
        progress(f"base: {found.tag} ({found.kind}) up to date")
        return found
    if explicit or found is None and not force:
        # Only try the registry when we have nothing, or the user named an image.
        progress(f"base: pulling {configured}")
        try:
            repo, tag = engine.split_tag(configured)
            client.images.pull(repo, tag=tag)
            img = engine.get_image(client, configured)
            if img is not None:
                return BaseRef(configured, img.id, "stock")
        except Exception as exc:  # no registry here, ever
            msg = str(getattr(exc, "explanation", None) or exc).splitlines()[0][:120]
            progress(f"base: cannot pull {configured} ({msg}); using a Debian {DEBIAN_SUITE} base")
        if found is not None:
            return found
    _refuse_other_arch(arch, configured)
    return bootstrap_base(client, progress=progress)


def _refuse_other_arch(arch: str | None, configured: str) -> None:
    """debootstrap makes this machine's architecture: never a base for an engine of another."""
    here = this_machine_arch()
    if arch is not None and arch != here:
        raise InfrastructureError(
            f"the Docker engine at {engine.engine_address()[0]} is {arch} and has no base image; the Debian base "
            f"bootstrapped here would be {here}",
            hint=f"give the engine a Python 3.11 base of its own architecture (`docker pull {configured}` on it, "
            "or --base-image IMAGE that it holds)",
        )


def _debootstrap_path() -> str:
    for cand in (shutil.which("debootstrap"), "/usr/sbin/debootstrap"):
        if cand and os.path.exists(cand):
            return cand
    if os.geteuid() == 0 and shutil.which("apt-get"):
        proc = subprocess.run(
            ["apt-get", "install", "-y", "--no-install-recommends", "debootstrap"],
            capture_output=True,
            text=True,
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
        )
        if proc.returncode == 0 and os.path.exists("/usr/sbin/debootstrap"):
            return "/usr/sbin/debootstrap"
        raise InfrastructureError(
            "debootstrap is not installed and `apt-get install debootstrap` failed",
            hint="run `apt-get update && apt-get install -y debootstrap`, or provide a base image with --base-image",
        )
    raise InfrastructureError(
        "debootstrap is not installed (needed to bootstrap the Debian base image)",
        hint="install it as root (`apt-get install -y debootstrap`), or provide a base image with --base-image",
    )


def _unmount_under(path: str) -> None:
    """Lazily unmount anything debootstrap left mounted (proc, sys) under path,
    so removing the tree can never reach into the host."""
    real = os.path.realpath(path)
    try:
        with open("/proc/mounts") as fh:
            points = [line.split()[1] for line in fh]
    except OSError:
        return
    for mp in sorted((p for p in points if p == real or p.startswith(real + "/")), reverse=True):
        subprocess.run(["umount", "-l", mp], capture_output=True)


def _remove_tree(path: str) -> None:
    if os.path.exists(path):
        _unmount_under(path)
        shutil.rmtree(path, ignore_errors=True)


def bootstrap_base(client, *, progress: Progress = engine.noop) -> BaseRef:
    """debootstrap a Debian bookworm rootfs from the machine's apt mirror and
    ``docker import`` it as FALLBACK_BASE_TAG."""
    if os.geteuid() != 0:
        raise InfrastructureError(
            "bootstrapping the Debian base image needs root (debootstrap)",
            hint="run `chaos images build --only base` as root once, or pass --base-image with a local Python 3.11 image",
        )
    debootstrap = _debootstrap_path()
    mirror_url = mirror.resolve_mirror(DEBIAN_SUITE)
    tmp = tempfile.mkdtemp(prefix="tfchaos-base-", dir=os.environ.get("TFCHAOS_TMP"))
    rootfs = os.path.join(tmp, "rootfs")
    t0 = time.monotonic()
    try:
        cmd = [
            debootstrap,
            "--variant=minbase",
            "--include=" + ",".join(DEBOOTSTRAP_INCLUDE),
            DEBIAN_SUITE,
            rootfs,
            mirror_url,
        ]
        progress(f"base: debootstrap {DEBIAN_SUITE} from {mirror_url} (about a minute)")
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        tail: list[str] = []
        seen: set[str] = set()  # one line per phase ("Retrieving", "Unpacking", ...)
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                line = line.rstrip()
                tail = (tail + [line])[-20:]
                if line.startswith("I: "):
                    word = line[3:].split(" ", 1)[0]
                    if word not in seen:
                        seen.add(word)
                        progress(f"  debootstrap: {line[3:][:100]}")
            rc = proc.wait()
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
        if rc != 0:
            last = next((l for l in reversed(tail) if l.startswith(("E:", "W:"))), tail[-1] if tail else "")
            raise InfrastructureError(
                f"debootstrap of Debian {DEBIAN_SUITE} from {mirror_url} failed (exit {rc}): {last.strip()[:200]}",
                hint="check that the mirror in /etc/apt/sources.list(.d) is reachable (`apt-get update`), "
                "or set TFCHAOS_DEBIAN_MIRROR",
            )
        _unmount_under(rootfs)
        for pattern in ("var/cache/apt/archives", "var/lib/apt/lists"):
            d = os.path.join(rootfs, pattern)
            if os.path.isdir(d):
                for fn in os.listdir(d):
                    p = os.path.join(d, fn)
                    if os.path.isfile(p) and (fn.endswith(".deb") or "lists" in pattern) and fn != "lock":
                        os.unlink(p)
        tarball = os.path.join(tmp, "rootfs.tar")
        progress("base: packing the rootfs")
        subprocess.run(["tar", "--numeric-owner", "-C", rootfs, "-cf", tarball, "."], check=True, capture_output=True)
        progress(f"base: docker import as {FALLBACK_BASE_TAG}")
        changes = BASE_CHANGES + [
            f"LABEL {LABEL_PROJECT}={PROJECT}",
            f"LABEL {LABEL_INPUTS}={base_recipe_hash()}",
            f"LABEL {LABEL_KIND}=base",
        ]
        out = client.api.import_image_from_file(tarball, changes=changes)
        image_id = engine.import_result_id(out)
        engine.retag(client, image_id, FALLBACK_BASE_TAG, progress)
        progress(f"base: {FALLBACK_BASE_TAG} built in {time.monotonic() - t0:.0f}s")
        return BaseRef(FALLBACK_BASE_TAG, image_id, "debootstrap")
    except subprocess.CalledProcessError as exc:
        raise InfrastructureError(
            f"packing the Debian rootfs failed: {exc.stderr.decode(errors='replace').strip()[:200]}",
            hint=f"check free space under {os.path.dirname(tmp)} (TFCHAOS_TMP moves it)",
        ) from None
    finally:
        _remove_tree(tmp)
