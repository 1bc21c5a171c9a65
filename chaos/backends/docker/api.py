"""Thin helpers over the docker SDK: connecting with a clear error, creating
labelled containers with network aliases, stopping with grace, and removing
everything that carries a label."""

from __future__ import annotations

import io
import tarfile
import time
from typing import Any

from docker.errors import APIError, DockerException, ImageNotFound, NotFound

from chaos import PROJECT
from chaos.errors import InfrastructureError
from chaos.images import engine

RUN_CALL_TIMEOUT_S = 60  # the SDK's default, as before


def connect():
    """The engine DOCKER_HOST or the Docker context names, within a bounded wait
    (chaos.images.engine.docker_client); each later call waits up to the SDK's 60 s."""
    return engine.docker_client(timeout=RUN_CALL_TIMEOUT_S)


def require_image(client, image: str) -> None:
    try:
        client.images.get(image)
    except ImageNotFound:
        if image.startswith(f"{PROJECT}/"):
            raise InfrastructureError(
                f"image {image!r} is not built",
                hint="build it with `chaos images build` (see `chaos images status`)",
            ) from None
        # Not one of ours (e.g. --proxy-image): the user provides it.
        raise InfrastructureError(
            f"image {image!r} does not exist in the Docker engine at {engine.engine_address()[0]}",
            hint=f"load or pull it first (`docker load -i FILE`, `docker pull {image}`); `docker images` lists what exists",
        ) from None


def create_container(
    client,
    image: str,
    *,
    name: str,
    labels: dict[str, str],
    network: str,
    aliases: list[str],
    environment: dict[str, str] | None = None,
    volumes: dict[str, str] | None = None,
    readonly_volumes: dict[str, str] | None = None,
    ports: dict[int, tuple] | None = None,
    resources: dict[str, Any] | None = None,
    command: list[str] | None = None,
):
    """Create (not start) a container attached to ``network`` under ``aliases``.

    The low-level API is used because the high-level one cannot set network
    aliases at creation time. ``init=True`` gives the worker a real PID 1, so
    SIGTERM reaches Python as it would outside a container. ``volumes`` are
    mounted ``nocopy``: the run prepares its volume's owner and mode itself
    (chaos.backends.docker.volume_owner), and Docker would give an empty volume the
    image directory's owner and mode again at each mount.
    """
    api = client.api
    binds = {vol: {"bind": path, "mode": "rw,nocopy"} for vol, path in (volumes or {}).items()}
    binds |= {vol: {"bind": path, "mode": "ro,nocopy"} for vol, path in (readonly_volumes or {}).items()}
    host_config = api.create_host_config(
        binds=binds,
        port_bindings=ports or {},
        network_mode=network,
        init=True,
        **(resources or {}),
    )
    created = api.create_container(
        image,
        command=command,
        name=name,
        labels=labels,
        environment=environment or {},
        ports=list(ports or {}),
        host_config=host_config,
        networking_config=api.create_networking_config({network: api.create_endpoint_config(aliases=aliases)}),
    )
    return client.containers.get(created["Id"])


def host_port(container, port: int) -> int:
    container.reload()
    bindings = container.attrs["NetworkSettings"]["Ports"].get(f"{port}/tcp") or []
    for b in bindings:
        if b.get("HostPort"):
            return int(b["HostPort"])
    raise InfrastructureError(
        f"{container.name}: port {port} is not published",
        hint="the container may have exited at once; see `docker logs " + container.name + "`",
    )


def ignore_gone(fn, *args, **kwargs):
    """Call a docker operation on a container that may have exited or gone."""
    try:
        return fn(*args, **kwargs)
    except NotFound:
        return None
    except APIError as exc:
        if exc.status_code in (404, 409):  # gone, or not running
            return None
        raise


def is_running(container) -> bool:
    """Whether a container is running now (False once it is removed)."""
    if container is None:
        return False
    try:
        container.reload()
    except Exception:  # noqa: BLE001 - removed
        return False
    return container.status == "running"


FREEZE_TRIES = 5
FREEZE_RETRY_S = 0.5


def pause(container, tries: int = FREEZE_TRIES, retry_s: float = FREEZE_RETRY_S) -> None:
    """Freeze a container (the cgroup freezer), trying again when the freezer does not
    settle: under load the engine answered ``OCI runtime pause failed: unable to freeze``
    (twice in one CI run, a checkpoint-disk-full scenario and an audit's paused peer), a
    transient state runc gives up on after its own short retries."""
    for attempt in range(1, tries + 1):
        try:
            container.pause()
            return
        except APIError as exc:
            if "unable to freeze" not in str(exc) or attempt == tries:
                raise
            time.sleep(retry_s)


def unpause_if_paused(container) -> None:
    try:
        container.reload()
        if container.attrs["State"].get("Paused"):
            container.unpause()
    except NotFound:
        pass


def stop(container, grace_s: float) -> None:
    """SIGTERM, then SIGKILL after ``grace_s`` (a paused container is thawed first)."""
    unpause_if_paused(container)
    ignore_gone(container.stop, timeout=int(grace_s))


def send_command(container, worker: str, seq: int, command) -> None:
    """A command (chaos.worker.control.WorkerCommand) for the training process in ``container``:
    the control file it reads, written by an exec."""
    from chaos.worker.control import control_file_script, params_of

    result = container.exec_run(control_file_script(seq, command.name, params_of(command)))
    if result.exit_code != 0:
        raise InfrastructureError(
            f"could not send {command.name!r} to {worker}: exit {result.exit_code}: "
            f"{result.output.decode(errors='replace').strip()}",
            hint="the worker must be running (not paused or exited) to take a command",
        )


def memory_usage(container, worker: str) -> int:
    """Bytes the container uses now (its cgroup's usage)."""
    usage = container.stats(stream=False, one_shot=True).get("memory_stats", {}).get("usage")
    if usage is None:  # Docker reports no memory stats for a stopped container
        raise InfrastructureError(
            f"{worker} is not running: its memory use cannot be read",
            hint="fire the fault while the worker trains (an earlier trigger, or longer training)",
        )
    return int(usage)


def count_files(container, path: str, enough: int = 1) -> int | None:
    """Regular files under ``path`` in ``container`` (running or exited), counted
    up to ``enough`` (a checkpoint folder can hold gigabytes: it is streamed and
    left early); None if Docker cannot tell."""
    try:
        stream, _ = container.get_archive(path)
        count = 0
        with tarfile.open(fileobj=_ChunkReader(stream), mode="r|") as archive:
            for member in archive:
                count += member.isfile()
                if count >= enough:
                    break
        return count
    except (DockerException, tarfile.TarError, OSError):
        return None


class _ChunkReader(io.RawIOBase):
    """A file over an iterator of byte chunks, for tarfile's stream mode."""

    def __init__(self, chunks) -> None:
        self._chunks = iter(chunks)
        self._rest = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._rest:
            self._rest = next(self._chunks, b"")
            if not self._rest:
                return 0
        n = min(len(buffer), len(self._rest))
        buffer[:n], self._rest = self._rest[:n], self._rest[n:]
        return n
