"""Build every image the project needs, offline, labelled with a hash of its
inputs and rebuilt only when the inputs change.

Chain (each arrow = "built on top of"):

    base image  (stock python:3.11-slim-bookworm if present/pullable, else a
      |          Debian bookworm rootfs from the machine's apt mirror, imported
      |          as tfchaos/base:bookworm-py3.11)
      +-> tfchaos/worker-deps:tf<ver>  (/opt/venv with the TF wheelhouse)
      |     +-> tfchaos/worker:tf<ver> (docker/worker/Dockerfile: + worker code)
      +-> tfchaos/proxy-deps:latest    (/opt/venv with aiohttp + uvloop)
            +-> tfchaos/proxy:latest   (docker/proxy/Dockerfile: + proxy code)

"deps" images are made by running docker/venv/install-venv.sh in a container
with the wheelhouse bind-mounted read-only and committing it (one venv layer;
see docs/images.md for why); TFCHAOS_BUILD_METHOD=dockerfile uses
docker/venv/Dockerfile instead. The small code images use ``docker build``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from chaos import LABEL_PROJECT, PROJECT
from chaos.errors import InfrastructureError
from chaos.images import hashing, mirror, versions, wheelhouse
from chaos.images.versions import TFSpec, parse_tf_version, worker_deps_tag, worker_image_tag

Progress = Callable[[str], None]

LABEL_INPUTS = "io.tfchaos.inputs"
LABEL_TF = "io.tfchaos.tf_version"
LABEL_KIND = "io.tfchaos.kind"

REPO_ROOT = os.path.dirname(versions.DOCKER_DIR)
DOCKER_DIR = versions.DOCKER_DIR

DEFAULT_BASE_IMAGE = "python:3.11-slim-bookworm"
FALLBACK_BASE_TAG = "tfchaos/base:bookworm-py3.11"
PROXY_IMAGE = "tfchaos/proxy:latest"
PROXY_DEPS_IMAGE = "tfchaos/proxy-deps:latest"
DEFAULT_TF_VERSIONS = ("2.20", "2.18", "2.15")

WORKER_FILES = ["chaos/__init__.py", "chaos/events.py", "chaos/errors.py", "chaos/worker/**"]
PROXY_FILES = ["chaos/__init__.py", "chaos/errors.py", "chaos/proxy/**"]

VENV_PATH = "/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

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


def _noop(_msg: str) -> None:
    pass


# --------------------------------------------------------------------------- docker


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


def _get_image(client, ref: str):
    import docker.errors  # noqa: PLC0415

    try:
        return client.images.get(ref)
    except docker.errors.ImageNotFound:
        return None
    except docker.errors.APIError as exc:
        raise InfrastructureError(f"docker could not inspect image {ref}: {exc.explanation}") from None


def _labels(image) -> dict[str, str]:
    return (image.attrs.get("Config") or {}).get("Labels") or {} if image is not None else {}


def _split_tag(tag: str) -> tuple[str, str]:
    repo, _, t = tag.rpartition(":")
    if not repo or "/" in t:
        return tag, "latest"
    return repo, t


def _retag(client, image_id: str, tag: str, progress: Progress) -> None:
    """Point ``tag`` at ``image_id`` and drop the image it pointed at before
    (if nothing else uses it) so stale 2 GB images do not pile up."""
    old = _get_image(client, tag)
    repo, t = _split_tag(tag)
    client.api.tag(image_id, repo, t)
    if old is not None and old.id != image_id:
        with contextlib.suppress(Exception):
            client.api.remove_image(old.id, noprune=False)
            progress(f"  removed the previous {tag} ({old.short_id.split(':')[-1]})")


@contextlib.contextmanager
def _build_lock():
    """Serialise builds between processes on this machine."""
    root = wheelhouse.cache_root()
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "images.lock"), "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


# --------------------------------------------------------------------------- base


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
    img = _get_image(client, configured)
    if img is not None:
        return BaseRef(configured, img.id, "stock")
    img = _get_image(client, FALLBACK_BASE_TAG)
    if img is not None and _labels(img).get(LABEL_INPUTS) == base_recipe_hash():
        return BaseRef(FALLBACK_BASE_TAG, img.id, "debootstrap")
    return None


def ensure_base(client, base_image: str | None = None, *, force: bool = False,
                progress: Progress = _noop) -> BaseRef:
    """The base to build on: the configured stock image if present locally (a
    stock image is never "rebuilt", even with ``force``), else the bootstrapped
    Debian base if current, else a pull of the configured image, else debootstrap."""
    explicit = bool(base_image or os.environ.get("TFCHAOS_BASE_IMAGE"))
    configured = base_image or os.environ.get("TFCHAOS_BASE_IMAGE") or DEFAULT_BASE_IMAGE
    img = _get_image(client, configured)
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
            repo, tag = _split_tag(configured)
            client.images.pull(repo, tag=tag)
            img = _get_image(client, configured)
            if img is not None:
                return BaseRef(configured, img.id, "stock")
        except Exception as exc:  # no registry here, ever
            msg = str(getattr(exc, "explanation", None) or exc).splitlines()[0][:120]
            progress(f"base: cannot pull {configured} ({msg}); using a Debian {DEBIAN_SUITE} base")
        if found is not None:
            return found
    return bootstrap_base(client, progress=progress)


def _debootstrap_path() -> str:
    for cand in (shutil.which("debootstrap"), "/usr/sbin/debootstrap"):
        if cand and os.path.exists(cand):
            return cand
    if os.geteuid() == 0 and shutil.which("apt-get"):
        proc = subprocess.run(
            ["apt-get", "install", "-y", "--no-install-recommends", "debootstrap"],
            capture_output=True, text=True, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
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


def bootstrap_base(client, *, progress: Progress = _noop) -> BaseRef:
    """debootstrap a Debian bookworm rootfs from the machine's apt mirror and
    ``docker import`` it as FALLBACK_BASE_TAG."""
    if os.geteuid() != 0:
        raise InfrastructureError(
            "bootstrapping the Debian base image needs root (debootstrap)",
            hint=f"run `chaos images build --only base` as root once, or pass --base-image with a local Python 3.11 image",
        )
    debootstrap = _debootstrap_path()
    mirror_url = mirror.resolve_mirror(DEBIAN_SUITE)
    tmp = tempfile.mkdtemp(prefix="tfchaos-base-", dir=os.environ.get("TFCHAOS_TMP"))
    rootfs = os.path.join(tmp, "rootfs")
    t0 = time.monotonic()
    try:
        cmd = [debootstrap, "--variant=minbase", "--include=" + ",".join(DEBOOTSTRAP_INCLUDE),
               DEBIAN_SUITE, rootfs, mirror_url]
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
        subprocess.run(["tar", "--numeric-owner", "-C", rootfs, "-cf", tarball, "."], check=True,
                       capture_output=True)
        progress(f"base: docker import as {FALLBACK_BASE_TAG}")
        changes = BASE_CHANGES + [f"LABEL {LABEL_PROJECT}={PROJECT}", f"LABEL {LABEL_INPUTS}={base_recipe_hash()}",
                                  f"LABEL {LABEL_KIND}=base"]
        out = client.api.import_image_from_file(tarball, changes=changes)
        image_id = _import_result_id(out)
        _retag(client, image_id, FALLBACK_BASE_TAG, progress)
        progress(f"base: {FALLBACK_BASE_TAG} built in {time.monotonic() - t0:.0f}s")
        return BaseRef(FALLBACK_BASE_TAG, image_id, "debootstrap")
    except subprocess.CalledProcessError as exc:
        raise InfrastructureError(
            f"packing the Debian rootfs failed: {exc.stderr.decode(errors='replace').strip()[:200]}",
            hint=f"check free space under {os.path.dirname(tmp)} (TFCHAOS_TMP moves it)",
        ) from None
    finally:
        _remove_tree(tmp)


def _import_result_id(out: Any) -> str:
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


# --------------------------------------------------------------------------- plans


@dataclass
class ImagePlan:
    """One image: its tag, how to compute its inputs, how to build it."""

    name: str  # "worker:tf2.20", "worker-deps:tf2.20", "proxy", ...
    tag: str
    kind: str  # "deps" or "app"
    inputs: dict[str, Any] = field(default_factory=dict)
    tf: TFSpec | None = None
    # deps
    wheelhouse_name: str = ""
    lock: wheelhouse.Lock | None = None
    unlocked: wheelhouse.Lock | None = None
    env: dict[str, str] = field(default_factory=dict)
    # app
    dockerfile: str = ""
    patterns: list[str] = field(default_factory=list)
    deps: "ImagePlan | None" = None

    @property
    def hash(self) -> str:
        return hashing.inputs_hash(self.inputs)


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def worker_plans(spec: TFSpec) -> tuple[ImagePlan, ImagePlan]:
    lock = wheelhouse.read_lock(spec.lock_dir) if spec.lock_dir else None
    unlocked = wheelhouse.Lock(tuple(spec.requirements()), tuple(spec.nodeps_requirements()))
    deps = ImagePlan(name=f"worker-deps:{spec.key}", tag=worker_deps_tag(spec.version), kind="deps", tf=spec,
                     wheelhouse_name=spec.key, lock=lock, unlocked=unlocked, env=spec.env())
    app = ImagePlan(name=f"worker:{spec.key}", tag=worker_image_tag(spec.version), kind="app", tf=spec,
                    dockerfile=os.path.join(DOCKER_DIR, "worker", "Dockerfile"), patterns=WORKER_FILES, deps=deps)
    return deps, app


def proxy_plans() -> tuple[ImagePlan, ImagePlan]:
    lock = wheelhouse.read_lock(os.path.join(DOCKER_DIR, "proxy"))
    deps = ImagePlan(name="proxy-deps", tag=PROXY_DEPS_IMAGE, kind="deps", wheelhouse_name="proxy", lock=lock)
    app = ImagePlan(name="proxy", tag=PROXY_IMAGE, kind="app",
                    dockerfile=os.path.join(DOCKER_DIR, "proxy", "Dockerfile"), patterns=PROXY_FILES, deps=deps)
    return deps, app


def _deps_inputs(plan: ImagePlan, base: BaseRef, lock: wheelhouse.Lock, manifest) -> dict[str, Any]:
    return {
        "kind": "deps",
        "dockerfile": _read(os.path.join(DOCKER_DIR, "venv", "Dockerfile")),
        "script": _read(os.path.join(DOCKER_DIR, "venv", "install-venv.sh")),
        "lock": lock.text(),
        "wheels": manifest,
        "base": {"ref": base.tag, "id": base.id},
        "env": plan.env,
    }


def _app_inputs(plan: ImagePlan) -> dict[str, Any]:
    assert plan.deps is not None
    files = hashing.collect_files(REPO_ROOT, plan.patterns)
    return {
        "kind": "app",
        "dockerfile": _read(plan.dockerfile),
        "buildargs": {"DEPS_IMAGE": plan.deps.tag},
        "deps": plan.deps.hash,
        "files": hashing.files_digest(REPO_ROOT, files),
        "tf_version": plan.tf.version if plan.tf else None,
    }


def _labels_for(plan: ImagePlan) -> dict[str, str]:
    labels = {LABEL_PROJECT: PROJECT, LABEL_INPUTS: plan.hash, LABEL_KIND: plan.kind}
    if plan.tf is not None:
        labels[LABEL_TF] = _installed_tf_version(plan) or plan.tf.version
    return labels


def _installed_tf_version(plan: ImagePlan) -> str | None:
    dep = plan if plan.kind == "deps" else plan.deps
    if dep is None or dep.lock is None:
        return None
    return dep.lock.pins.get("tensorflow-cpu")


def _up_to_date(client, plan: ImagePlan) -> bool:
    img = _get_image(client, plan.tag)
    return img is not None and _labels(img).get(LABEL_INPUTS) == plan.hash


# --------------------------------------------------------------------------- builds


def _stream_build(client, progress: Progress, **kwargs) -> str:
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


def _build_deps_commit(client, plan: ImagePlan, base: BaseRef, wheel_dir: str, lock_dir: str,
                       progress: Progress) -> str:
    """Run install-venv.sh in a throwaway container with the wheelhouse
    bind-mounted read-only, then commit it (labels/ENV/CMD via ``changes``)."""
    import docker.errors  # noqa: PLC0415

    scratch = tempfile.mkdtemp(prefix="tfchaos-deps-", dir=os.environ.get("TFCHAOS_TMP"))
    container = None
    try:
        shutil.copy(os.path.join(DOCKER_DIR, "venv", "install-venv.sh"), os.path.join(scratch, "install-venv.sh"))
        shutil.copytree(lock_dir, os.path.join(scratch, "lock"))
        os.chmod(scratch, 0o755)
        container = client.containers.create(
            base.tag,
            command=["sh", "/tmp/build/install-venv.sh", "/tmp/wheels", "/tmp/build/lock"],
            name=f"tfchaos-build-{plan.name.replace(':', '-')}-{uuid.uuid4().hex[:8]}",
            labels={LABEL_PROJECT: PROJECT, LABEL_KIND: "build"},
            volumes={wheel_dir: {"bind": "/tmp/wheels", "mode": "ro"}, scratch: {"bind": "/tmp/build", "mode": "ro"}},
            network_disabled=True,
            entrypoint=[],
        )
        container.start()
        tail: list[str] = []
        for raw in container.logs(stream=True, follow=True):
            for line in raw.decode(errors="replace").splitlines():
                tail = (tail + [line])[-15:]
                if line.startswith(("Installing collected", "Successfully installed", "venv ready")):
                    progress(f"  pip: {line[:110]}{'...' if len(line) > 110 else ''}")
        status = container.wait().get("StatusCode", 1)
        if status != 0:
            detail = next((l for l in reversed(tail) if "ERROR" in l or "rror" in l), tail[-1] if tail else "")
            raise InfrastructureError(
                f"installing the {plan.name} wheels into /opt/venv failed (exit {status}): {detail.strip()[:200]}",
                hint=f"the wheelhouse {wheel_dir} may be incomplete or for another platform; delete it and build again",
            )
        progress(f"  committing {plan.tag}")
        changes = [f"ENV PATH={VENV_PATH}", "ENV VIRTUAL_ENV=/opt/venv", 'CMD ["/opt/venv/bin/python"]',
                   "WORKDIR /"]
        changes += [f"ENV {k}={v}" for k, v in sorted(plan.env.items())]
        changes += [f"LABEL {k}={v}" for k, v in _labels_for(plan).items()]
        result = client.api.commit(container.id, changes=changes)
        return result["Id"]
    except docker.errors.APIError as exc:
        raise InfrastructureError(f"docker failed while building {plan.tag}: {exc.explanation}") from None
    finally:
        if container is not None:
            with contextlib.suppress(Exception):
                container.remove(force=True, v=True)
        shutil.rmtree(scratch, ignore_errors=True)


def _build_deps_dockerfile(client, plan: ImagePlan, base: BaseRef, wheel_dir: str, lock_dir: str,
                           files: list[str], progress: Progress) -> str:
    """The same image through docker/venv/Dockerfile (multi-stage) and ``docker build``."""
    ctx = tempfile.mkdtemp(prefix="tfchaos-ctx-", dir=os.environ.get("TFCHAOS_TMP"))
    try:
        os.makedirs(os.path.join(ctx, "wheels"))
        for fn in files:
            src, dst = os.path.join(wheel_dir, fn), os.path.join(ctx, "wheels", fn)
            try:
                os.link(src, dst)
            except OSError:
                shutil.copy(src, dst)
        shutil.copytree(lock_dir, os.path.join(ctx, "lock"))
        shutil.copy(os.path.join(DOCKER_DIR, "venv", "install-venv.sh"), ctx)
        text = _read(os.path.join(DOCKER_DIR, "venv", "Dockerfile"))
        for k, v in sorted(plan.env.items()):
            text += f"ENV {k}={v}\n"
        with open(os.path.join(ctx, "Dockerfile"), "w") as fh:
            fh.write(text)
        return _stream_build(client, progress, path=ctx, buildargs={"BASE_IMAGE": base.tag},
                             labels=_labels_for(plan))
    finally:
        shutil.rmtree(ctx, ignore_errors=True)
        # the untagged "install" stage (base + wheels + venv, ~2 GB) is garbage now
        with contextlib.suppress(Exception):
            client.images.prune(filters={"dangling": True, "label": f"{LABEL_PROJECT}={PROJECT}"})


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined,
    comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        line = pending + line
        pending = ""
        word, _, rest = line.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


# Instructions `docker commit --change` accepts; COPY is done with put_archive.
_COMMIT_CHANGES = {"CMD", "ENTRYPOINT", "ENV", "EXPOSE", "LABEL", "USER", "VOLUME", "WORKDIR"}


def _code_tar(files: list[str], dest: str, src_prefix: str) -> bytes:
    """A tar of REPO_ROOT/<files under src_prefix> placed at <dest> (absolute)."""
    import io  # noqa: PLC0415
    import tarfile  # noqa: PLC0415

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        made: set[str] = set()

        def add_dir(path: str) -> None:
            parts = path.strip("/").split("/")
            for i in range(1, len(parts) + 1):
                d = "/".join(parts[:i])
                if d and d not in made:
                    made.add(d)
                    info = tarfile.TarInfo(d)
                    info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
                    tar.addfile(info)

        add_dir(dest)
        for rel in files:
            if not rel.startswith(src_prefix):
                continue
            target = dest.rstrip("/") + "/" + rel[len(src_prefix):]
            add_dir(os.path.dirname(target))
            with open(os.path.join(REPO_ROOT, rel), "rb") as fh:
                data = fh.read()
            info = tarfile.TarInfo(target.strip("/"))
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _build_app_commit(client, plan: ImagePlan, deps_tag: str, files: list[str], progress: Progress) -> str:
    """Apply the app Dockerfile in one step: create a container from the deps
    image, put the COPY sources in with put_archive, and commit it with the
    Dockerfile's other instructions as ``changes`` (the classic builder spends
    ~12 s per instruction on a 1.8 GB image here)."""
    import docker.errors  # noqa: PLC0415

    changes: list[str] = []
    copies: list[tuple[str, str]] = []
    for word, rest in dockerfile_instructions(_read(plan.dockerfile)):
        if word in ("ARG", "FROM"):
            continue
        if word == "COPY":
            src, dest = rest.split()
            copies.append((src, dest))
        elif word in _COMMIT_CHANGES:
            changes.append(f"{word} {rest}")
        else:
            raise InfrastructureError(f"{plan.dockerfile}: instruction {word} is not supported by the commit builder",
                                      hint="set TFCHAOS_BUILD_METHOD=dockerfile to use docker build")
    if any(c.startswith("ENTRYPOINT ") for c in changes) and not any(c.startswith("CMD ") for c in changes):
        changes.append("CMD []")  # as docker build does: a new ENTRYPOINT drops the inherited CMD
    changes += [f"LABEL {k}={v}" for k, v in _labels_for(plan).items()]
    container = None
    try:
        container = client.containers.create(
            deps_tag, command=["true"], entrypoint=[],
            name=f"tfchaos-build-{plan.name.replace(':', '-')}-{uuid.uuid4().hex[:8]}",
            labels={LABEL_PROJECT: PROJECT, LABEL_KIND: "build"}, network_disabled=True)
        for src, dest in copies:
            n = sum(1 for f in files if f.startswith(src))
            progress(f"  copy {src} -> {dest} ({n} files)")
            container.put_archive("/", _code_tar(files, dest, src))
        progress(f"  committing {plan.tag}")
        return client.api.commit(container.id, changes=changes)["Id"]
    except docker.errors.APIError as exc:
        raise InfrastructureError(f"docker failed while building {plan.tag}: {exc.explanation}") from None
    finally:
        if container is not None:
            with contextlib.suppress(Exception):
                container.remove(force=True, v=True)


def _prepare_deps(plan: ImagePlan, base: BaseRef, progress: Progress) -> tuple[str, str, list[str]]:
    """Fill the wheelhouse and compute the deps hash. Returns (wheel dir, lock dir, wheel files)."""
    wheel_dir, lock, files = wheelhouse.ensure_wheelhouse(plan.wheelhouse_name, plan.lock, plan.unlocked,
                                                          progress=progress)
    plan.lock = lock
    lock_dir = plan.tf.lock_dir if (plan.tf and plan.tf.lock_dir) else (
        os.path.join(DOCKER_DIR, "proxy") if plan.tf is None else os.path.join(wheel_dir, ".lock"))
    plan.inputs = _deps_inputs(plan, base, lock, wheelhouse.wheel_manifest(wheel_dir, files))
    return wheel_dir, lock_dir, files


def _ensure_pair(client, deps: ImagePlan, app: ImagePlan, base: BaseRef, force: bool,
                 progress: Progress) -> str:
    wheel_dir, lock_dir, files = _prepare_deps(deps, base, progress)
    app.inputs = _app_inputs(app)
    if not force and _up_to_date(client, app):
        progress(f"{app.tag}: up to date")
        return app.tag
    t0 = time.monotonic()
    if force or not _up_to_date(client, deps):
        method = os.environ.get("TFCHAOS_BUILD_METHOD", "commit")
        progress(f"{deps.tag}: building ({len(files)} wheels, method {method})")
        if method == "dockerfile":
            image_id = _build_deps_dockerfile(client, deps, base, wheel_dir, lock_dir, files, progress)
        else:
            image_id = _build_deps_commit(client, deps, base, wheel_dir, lock_dir, progress)
        _retag(client, image_id, deps.tag, progress)
        progress(f"{deps.tag}: built in {time.monotonic() - t0:.0f}s")
    else:
        progress(f"{deps.tag}: up to date")
    t1 = time.monotonic()
    method = os.environ.get("TFCHAOS_BUILD_METHOD", "commit")
    progress(f"{app.tag}: building (method {method})")
    files = hashing.collect_files(REPO_ROOT, app.patterns)
    app.inputs = _app_inputs(app)
    if method == "dockerfile":
        ctx = tempfile.mkdtemp(prefix="tfchaos-ctx-", dir=os.environ.get("TFCHAOS_TMP"))
        try:
            shutil.copy(app.dockerfile, os.path.join(ctx, "Dockerfile"))
            os.makedirs(os.path.join(ctx, "chaos"), exist_ok=True)
            for rel in files:
                dst = os.path.join(ctx, rel)
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy(os.path.join(REPO_ROOT, rel), dst)
            image_id = _stream_build(client, progress, path=ctx, buildargs={"DEPS_IMAGE": deps.tag},
                                     labels=_labels_for(app))
        finally:
            shutil.rmtree(ctx, ignore_errors=True)
    else:
        image_id = _build_app_commit(client, app, deps.tag, files, progress)
    _retag(client, image_id, app.tag, progress)
    progress(f"{app.tag}: built in {time.monotonic() - t1:.0f}s")
    return app.tag


def ensure_images(tf_versions: Iterable[str] = DEFAULT_TF_VERSIONS, *, proxy: bool = True,
                  base_image: str | None = None, only: str | None = None, force: bool = False,
                  progress: Progress | None = None) -> dict[str, str]:
    """Build whatever is missing or stale; return {name: tag}.

    Names: ``"base"``, ``"worker:tf2.20"`` (one per TF version), ``"proxy"``.
    ``only`` is ``"base"``, ``"worker"`` or ``"proxy"``. ``force`` rebuilds the
    selected images even when their inputs match.
    """
    progress = progress or _noop
    if only not in (None, "base", "worker", "proxy"):
        raise InfrastructureError(f"unknown image kind {only!r}", hint="use base, worker or proxy")
    specs = [parse_tf_version(v) for v in tf_versions]
    client = docker_client()
    out: dict[str, str] = {}
    t0 = time.monotonic()
    with _build_lock():
        base = ensure_base(client, base_image, force=force and only in (None, "base"), progress=progress)
        out["base"] = base.tag
        if only in (None, "worker"):
            for spec in specs:
                deps, app = worker_plans(spec)
                out[app.name] = _ensure_pair(client, deps, app, base, force, progress)
        if proxy and only in (None, "proxy"):
            deps, app = proxy_plans()
            if not os.path.isfile(os.path.join(REPO_ROOT, "chaos", "proxy", "__main__.py")):
                progress("proxy: note: chaos/proxy/__main__.py does not exist yet; the image will not start "
                         "until it does (it is rebuilt automatically then)")
            out[app.name] = _ensure_pair(client, deps, app, base, force, progress)
        # Images replaced while a container still used them are left untagged;
        # drop those that are free now (prune never touches images in use).
        with contextlib.suppress(Exception):
            client.images.prune(filters={"dangling": True, "label": f"{LABEL_PROJECT}={PROJECT}"})
    progress(f"done in {time.monotonic() - t0:.1f}s")
    return out


# --------------------------------------------------------------------------- status


@dataclass
class ImageState:
    name: str
    tag: str
    state: str  # "exists", "stale" or "missing"
    built_at: str = ""
    size: int = 0
    note: str = ""


def _state_of(client, name: str, tag: str, want: str | None, note: str = "") -> ImageState:
    img = _get_image(client, tag)
    if img is None:
        return ImageState(name, tag, "missing", note=note)
    created = (img.attrs.get("Created") or "")[:19].replace("T", " ")
    size = int(img.attrs.get("Size") or 0)
    have = _labels(img).get(LABEL_INPUTS)
    if want is None:
        return ImageState(name, tag, "stale", created, size, note or "inputs unknown")
    if have != want:
        return ImageState(name, tag, "stale", created, size, note or "inputs changed")
    return ImageState(name, tag, "exists", created, size, note)


def image_status(tf_versions: Iterable[str] = DEFAULT_TF_VERSIONS, *, proxy: bool = True,
                 base_image: str | None = None, client=None) -> list[ImageState]:
    """What exists, what is stale (inputs changed) and what is missing. No network."""
    specs = [parse_tf_version(v) for v in tf_versions]
    client = client or docker_client()
    rows: list[ImageState] = []
    base = find_base(client, base_image)
    if base is None:
        rows.append(_state_of(client, "base", FALLBACK_BASE_TAG, base_recipe_hash()))
    elif base.kind == "stock":
        img = _get_image(client, base.tag)
        rows.append(ImageState("base", base.tag, "exists", (img.attrs.get("Created") or "")[:19].replace("T", " "),
                               int(img.attrs.get("Size") or 0), "stock image"))
    else:
        rows.append(_state_of(client, "base", base.tag, base_recipe_hash()))
    pairs = [worker_plans(s) for s in specs] + ([proxy_plans()] if proxy else [])
    for deps, app in pairs:
        if base is None:
            rows.append(_state_of(client, deps.name, deps.tag, None, "base image missing"))
            rows.append(_state_of(client, app.name, app.tag, None, "base image missing"))
            continue
        lock = deps.lock or wheelhouse.read_lock(os.path.join(wheelhouse.wheelhouse_dir(deps.wheelhouse_name), ".lock"))
        wheel_dir = wheelhouse.wheelhouse_dir(deps.wheelhouse_name)
        files = wheelhouse.wheels_for(wheel_dir, lock) if lock else None
        if lock is None or files is None:
            note = "wheels not downloaded"
            rows.append(_state_of(client, deps.name, deps.tag, None, note))
            rows.append(_state_of(client, app.name, app.tag, None, note))
            continue
        deps.lock = lock
        deps.inputs = _deps_inputs(deps, base, lock, wheelhouse.wheel_manifest(wheel_dir, files))
        app.inputs = _app_inputs(app)
        rows.append(_state_of(client, deps.name, deps.tag, deps.hash))
        rows.append(_state_of(client, app.name, app.tag, app.hash))
    return rows
