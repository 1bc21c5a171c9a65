"""The Docker engine as the image builder uses it: a client, image look-ups,
tags, a build lock between processes, and ``docker build``/``import`` output."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from typing import Any

from chaos import interrupts
from chaos.errors import InfrastructureError
from chaos.images import wheelhouse
from chaos.images.versions import engine_arch

Progress = Callable[[str], None]


def noop(_msg: str) -> None:
    pass


DEFAULT_SOCKET = "unix:///var/run/docker.sock"
# How long connecting to the engine may take (seconds): a DOCKER_HOST that accepts and
# never answers fails within this, not after the operations' own timeout.
CONNECT_TIMEOUT_ENV = "TFCHAOS_ENGINE_TIMEOUT"
CONNECT_TIMEOUT_S = 15.0
OPERATION_TIMEOUT_S = 600
# The oldest engine API every feature here works on: 1.41 (Docker 20.10), the engine the project
# is tested on, and the first with one-shot stats (a worker's memory, read when a memory fault
# judges it) and a platform on container create. An older engine is refused at connect, before
# anything is made, rather than failing midway through a run that then has things to undo.
MIN_API_VERSION = (1, 41)
MIN_ENGINE = "Docker 20.10"


def engine_address(environ: dict[str, str] | None = None) -> tuple[str, str]:
    """(the engine's address, who names it): ``DOCKER_HOST``, else the current Docker
    context's endpoint, else Docker's default socket. The address errors and reports show."""
    environ = os.environ if environ is None else environ
    if environ.get("DOCKER_HOST"):
        return environ["DOCKER_HOST"], "DOCKER_HOST"
    try:
        from docker.context import ContextAPI  # noqa: PLC0415

        context = ContextAPI.get_current_context()
        if context is not None and context.name != "default" and context.Host:
            return context.Host, f"Docker context {context.name}"
    except Exception:  # noqa: BLE001 - no SDK or no context store: the default engine
        pass
    return DEFAULT_SOCKET, "the default socket"


def connect_timeout(environ: dict[str, str] | None = None) -> float:
    environ = os.environ if environ is None else environ
    text = environ.get(CONNECT_TIMEOUT_ENV, "")
    if not text:
        return CONNECT_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value <= 3600:
        raise InfrastructureError(
            f"{CONNECT_TIMEOUT_ENV}={text!r} is not a number of seconds between 0 and 3600",
            hint=f"unset it for the default {CONNECT_TIMEOUT_S:.0f} s, or set e.g. {CONNECT_TIMEOUT_ENV}=30",
        )
    return value


def published_on(address: str | None = None) -> tuple[str, str]:
    """(the host address the engine should publish a port on, the address this
    machine then connects to). A local socket: loopback. ``tcp://HOST`` or
    ``ssh://user@HOST``: the port is on that host, not here; published on HOST when
    it is an IP address (the engine's own, as a ``docker:dind`` service's is),
    else on every address of it."""
    import ipaddress  # noqa: PLC0415
    from urllib.parse import urlsplit  # noqa: PLC0415

    address = address or engine_address()[0]
    if "://" not in address or address.split("://", 1)[0] in ("unix", "npipe", "fd"):
        return "127.0.0.1", "127.0.0.1"
    host = urlsplit(address).hostname
    if not host or host in ("localhost", "127.0.0.1", "::1"):
        return "127.0.0.1", "127.0.0.1"
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return "0.0.0.0", host
    return host, host


def shares_host(client) -> bool:
    """Whether the engine runs on this machine, seeing its files: the engine's host
    name is this machine's. An engine in a container (``docker:dind``, a swarm node),
    on another machine, or one this code reaches from inside a container is not."""
    import socket  # noqa: PLC0415

    try:
        name = client.info().get("Name", "")
    except Exception:  # noqa: BLE001 - cannot tell: assume the safe answer
        return False
    return bool(name) and name == socket.gethostname()


def require_shared_host(client, feature: str, reason: str) -> None:
    """Refuse ``feature`` (before it makes anything) on an engine that does not share
    this machine's filesystem, naming the engine and why the feature needs it."""
    if shares_host(client):
        return
    address, named_by = engine_address()
    raise InfrastructureError(
        f"{feature} needs a Docker engine on this machine, and the engine at {address} ({named_by}) is not: {reason}",
        hint="run it against this machine's own engine (unset DOCKER_HOST), or on the engine's host",
    )


def architecture(client) -> str:
    """The engine's architecture, as the images are built for it (``docker info``; not this machine's)."""
    try:
        reported = client.info().get("Architecture") or ""
    except Exception as exc:  # noqa: BLE001 - docker.errors.APIError, requests errors
        raise InfrastructureError(
            f"the Docker engine at {engine_address()[0]} did not say its architecture "
            f"(docker info): {str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__}",
            hint="check the engine answers `docker info`",
        ) from None
    return engine_arch(reported, f"the Docker engine at {engine_address()[0]}")


def _why(exc: BaseException, wait: float) -> str:
    """What failed, in words, from the SDK's exception and the ones it wraps."""
    import requests  # noqa: PLC0415

    seen: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in seen:
        seen.append(cur)
        cur = cur.__cause__ or cur.__context__
    text = " ".join(str(e) for e in seen)
    if any(isinstance(e, requests.exceptions.ConnectTimeout) for e in seen):
        return f"no connection within {wait:g} s"
    if any(isinstance(e, (requests.exceptions.ReadTimeout, TimeoutError)) for e in seen) or "timed out" in text:
        return f"it accepted the connection but did not answer within {wait:g} s"
    if any(isinstance(e, ConnectionRefusedError) for e in seen) or "Connection refused" in text:
        return "the connection was refused (nothing listens there)"
    if any(isinstance(e, FileNotFoundError) for e in seen) or "No such file or directory" in text:
        return "no socket at that path"
    return str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__


def docker_client(timeout: float = OPERATION_TIMEOUT_S):
    """A connected docker client for the engine ``engine_address`` names, or a one-line
    InfrastructureError naming that address and what failed, within ``connect_timeout()``
    seconds; later calls wait up to ``timeout`` seconds each."""
    try:
        import docker  # noqa: PLC0415
    except ImportError:
        raise InfrastructureError(
            "the Python package 'docker' is not installed", hint="pip install 'docker>=7.1'"
        ) from None
    address, named_by = engine_address()
    wait = connect_timeout()
    try:
        if named_by.startswith("Docker context"):
            client = docker.DockerClient(base_url=address, timeout=wait)
        else:
            client = docker.from_env(timeout=wait)
        client.ping()
    except Exception as exc:  # docker.errors.DockerException, requests errors
        raise InfrastructureError(
            f"cannot reach the Docker engine at {address} ({named_by}): {_why(exc, wait)}",
            hint="start it (e.g. `sudo service docker start`) or point DOCKER_HOST at a running engine "
            f"(`docker -H {address} version` tells); {CONNECT_TIMEOUT_ENV} sets how long to wait",
        ) from None
    require_api_version(client, address, named_by)
    client.api.timeout = timeout
    return client


def api_version_of(text: str) -> tuple[int, ...] | None:
    try:
        return tuple(int(part) for part in str(text).split("."))
    except ValueError:
        return None


def require_api_version(client, address: str, named_by: str) -> None:
    """Refuse an engine older than MIN_API_VERSION, naming it, its version and what needs more.
    The SDK agreed the API version with the engine when it connected (the engine's own: the
    client speaks newer ones), so only a refusal asks the engine for its version's name."""
    api = api_version_of(getattr(client.api, "api_version", ""))
    if api is None or api >= MIN_API_VERSION:
        return
    try:
        reported = client.version()
    except Exception:  # noqa: BLE001 - the message then names the negotiated version alone
        reported = {"ApiVersion": client.api.api_version}
    need = ".".join(map(str, MIN_API_VERSION))
    raise InfrastructureError(
        f"the Docker engine at {address} ({named_by}) is too old: Docker {reported.get('Version', '?')}, "
        f"API {reported.get('ApiVersion')}; tfchaos needs API {need} ({MIN_ENGINE}) or newer "
        "(one-shot container stats for memory faults, a platform on container create)",
        hint=f"upgrade the engine to {MIN_ENGINE} or newer, or point DOCKER_HOST at one "
        f"(`docker -H {address} version` tells its API version)",
    )


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
            remove_later([old.id], client)
        else:
            progress(f"  removed the previous {tag} ({old.short_id.split(':')[-1]})")


def _replaced_file() -> str:
    return os.path.join(wheelhouse.cache_root(), "replaced-images")


def engine_id(client) -> str:
    """The engine's ID (``docker info``): one machine's cache serves several engines
    (DOCKER_HOST), and an image id remembered for one is not another's to drop. '' if unknown."""
    try:
        return str(client.info().get("ID") or "").replace(" ", "")
    except Exception:  # noqa: BLE001 - a fake, or an engine that cannot say
        return ""


def _read_replaced() -> set[tuple[str, str]]:
    """(engine ID or '', image id): a line is ``ENGINE IMAGE``, or ``IMAGE`` (written
    before the engine was recorded: taken as any engine's, as it was then)."""
    try:
        with open(_replaced_file(), encoding="ascii") as fh:
            return {
                tuple(line.split()) if len(line.split()) == 2 else ("", line.strip()) for line in fh if line.strip()
            }
    except OSError:
        return set()


def _write_replaced(entries: set[tuple[str, str]]) -> None:
    os.makedirs(os.path.dirname(_replaced_file()), exist_ok=True)
    with open(_replaced_file(), "w", encoding="ascii") as fh:
        fh.writelines(f"{engine} {i}\n" if engine else f"{i}\n" for engine, i in sorted(entries))


def remove_later(image_ids: list[str], client=None) -> None:
    """Images of ours on ``client``'s engine that are garbage (a build's untagged stages,
    a replaced image still in use), for drop_replaced."""
    engine = engine_id(client) if client is not None else ""
    _write_replaced(_read_replaced() | {(engine, i) for i in image_ids})


def drop_replaced(client) -> None:
    """Remove the images our builds replaced while a container used them, now that
    nothing does; only those, and only this engine's (called under build_lock). Never a
    prune by label: a user's ``docker build`` FROM one of ours makes untagged intermediate
    images that inherit our labels, and a CI run's prune removed one mid-build (No such image)."""
    here = engine_id(client)
    keep = set()
    for engine, image_id in _read_replaced():
        if engine and engine != here:  # another engine's: left for a build there
            keep.add((engine, image_id))
            continue
        try:
            image = get_image(client, image_id)
        except InfrastructureError:  # the engine could not say: try again next build
            keep.add((engine, image_id))
            continue
        if image is None or image.tags:  # gone, or tagged again by someone: not ours to drop
            continue
        try:
            client.api.remove_image(image_id, noprune=False)
        except Exception:  # still in use
            keep.add((engine, image_id))
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
