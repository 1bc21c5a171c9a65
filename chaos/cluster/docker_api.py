"""Thin helpers over the docker SDK: connecting with a clear error, creating
labelled containers with network aliases, stopping with grace, and removing
everything that carries a label."""

from __future__ import annotations

import time
from typing import Any

import docker
from docker.errors import APIError, DockerException, ImageNotFound, NotFound

from chaos import LABEL_PROJECT, LABEL_RUN, PROJECT
from chaos.errors import InfrastructureError


def connect():
    try:
        client = docker.from_env()
        client.ping()
        return client
    except DockerException as exc:
        raise InfrastructureError(
            f"cannot reach the Docker engine ({exc.__class__.__name__}: {exc})",
            hint="start it (`sudo systemctl start docker`) or point DOCKER_HOST at it",
        ) from None


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
            f"image {image!r} does not exist in the local Docker engine",
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
    ports: dict[int, tuple] | None = None,
    resources: dict[str, Any] | None = None,
    command: list[str] | None = None,
):
    """Create (not start) a container attached to ``network`` under ``aliases``.

    The low-level API is used because the high-level one cannot set network
    aliases at creation time. ``init=True`` gives the worker a real PID 1, so
    SIGTERM reaches Python as it would outside a container.
    """
    api = client.api
    host_config = api.create_host_config(
        binds={vol: {"bind": path, "mode": "rw"} for vol, path in (volumes or {}).items()},
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
        networking_config=api.create_networking_config(
            {network: api.create_endpoint_config(aliases=aliases)}
        ),
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


def list_labelled(client, labels: dict[str, str] | None = None, *, any_run: bool = False) -> list[str]:
    """Names of the containers, networks and volumes carrying ``labels``.

    ``any_run`` narrows to objects that belong to some run (image builds
    label their temporary containers with the project label only).
    """
    wanted = [f"{k}={v}" for k, v in {LABEL_PROJECT: PROJECT, **(labels or {})}.items()]
    if any_run:
        wanted.append(LABEL_RUN)
    filters = {"label": wanted}
    return (
        [f"container {c.name}" for c in client.containers.list(all=True, filters=filters)]
        + [f"network {n.name}" for n in client.networks.list(filters=filters)]
        + [f"volume {v.name}" for v in client.volumes.list(filters=filters)]
    )


def remove_labelled(client, labels: dict[str, str], *, passes: int = 5) -> dict[str, int]:
    """Remove containers, then networks and volumes, carrying all ``labels``.

    Always scoped to the project label too, so nothing of the user's is touched.
    Repeated (up to ``passes``) until nothing is left: a create request from a
    run interrupted (Ctrl-C) or killed mid-call can land in the engine after a
    pass listed the objects.
    """
    counts = {"containers": 0, "networks": 0, "volumes": 0}
    for attempt in range(passes):
        if attempt:
            time.sleep(0.5)
        for kind, n in _remove_once(client, labels).items():
            counts[kind] += n
        if not list_labelled(client, labels):
            break
    return counts


def _remove_once(client, labels: dict[str, str]) -> dict[str, int]:
    filters = {"label": [f"{k}={v}" for k, v in {LABEL_PROJECT: PROJECT, **labels}.items()]}
    counts = {"containers": 0, "networks": 0, "volumes": 0}
    for c in client.containers.list(all=True, filters=filters):
        unpause_if_paused(c)
        ignore_gone(c.remove, force=True, v=True)
        counts["containers"] += 1
    for n in client.networks.list(filters=filters):
        ignore_gone(n.remove)
        counts["networks"] += 1
    for v in client.volumes.list(filters=filters):
        ignore_gone(v.remove, force=True)
        counts["volumes"] += 1
    return counts
