"""Which engines a swarm run talks to: the manager (services, networks, nodes)
and, for what only a node can do to a task's container (kill, pause, signals,
its log and exit), the engine of the node that runs it.

- The manager: ``DOCKER_HOST`` when set, else the current Docker context's
  endpoint (``docker context use NAME``), else Docker's default socket.
- A node's engine, by its swarm host name:
  1. ``TFCHAOS_SWARM_NODES=node-1=unix:///...,gpu-7=ssh://me@gpu-7`` names each
     (a real multi-machine swarm: ssh or TLS endpoints as ``DOCKER_HOST`` takes them);
  2. else, when the manager is a unix socket at ``<folder>/<host name>/docker.sock``, a
     sibling ``<folder>/<node's host name>/docker.sock`` that exists (the local swarm's
     layout, chaos.backends.swarm.plan.docker_host);
  3. the manager's own node is the manager's engine.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from chaos.errors import InfrastructureError, ScenarioError

NODES_ENV = "TFCHAOS_SWARM_NODES"
STORE_ENV = "TFCHAOS_SWARM_STORE"
SOCKET_NAME = "docker.sock"


def manager_url(environ: dict[str, str] | None = None) -> str | None:
    """The manager's endpoint as named by the environment (None: Docker's default)."""
    environ = os.environ if environ is None else environ
    if environ.get("DOCKER_HOST"):
        return environ["DOCKER_HOST"]
    try:
        from docker.context import ContextAPI

        context = ContextAPI.get_current_context()
        if context is not None and context.name != "default" and context.Host:
            return context.Host
    except Exception:  # noqa: BLE001 - no context store: the default engine
        pass
    return None


def parse_nodes(text: str) -> dict[str, str]:
    """``host=url,host=url`` (``TFCHAOS_SWARM_NODES``) as a map; ScenarioError naming a bad entry."""
    out: dict[str, str] = {}
    for entry in (e.strip() for e in text.split(",")):
        if not entry:
            continue
        host, sep, url = entry.partition("=")
        if not sep or not host.strip() or "://" not in url:
            raise ScenarioError(
                f"{NODES_ENV}: entry {entry!r} is not HOSTNAME=URL",
                hint=f"e.g. {NODES_ENV}=node-2=unix:///run/node-2.sock,node-3=ssh://me@node-3 "
                "(the host names `docker node ls` shows)",
            )
        out[host.strip()] = url.strip()
    return out


def sibling_socket(manager: str | None, hostname: str) -> str | None:
    """The local swarm's layout: one folder per node host name, each holding its engine's socket."""
    if not manager or not manager.startswith("unix://"):
        return None
    path = manager[len("unix://") :]
    if os.path.basename(path) != SOCKET_NAME:
        return None
    folder = Path(path).parent.parent  # <folder>/<the manager's host name>/docker.sock
    candidate = folder / hostname / SOCKET_NAME
    return f"unix://{candidate}" if candidate.exists() else None


class NodeEngines:
    """A client per node engine, made at first use and kept for the run."""

    def __init__(
        self,
        manager: str | None,
        manager_host: str,
        explicit: dict[str, str] | None = None,
        connect: Callable[[str], object] | None = None,
        manager_client=None,
    ) -> None:
        self.manager = manager
        self.manager_host = manager_host
        self.explicit = dict(explicit or {})
        self._connect = connect or connect_engine
        self._clients: dict[str, object] = {}
        self._borrowed = manager_client  # the caller's: never closed here
        if manager_client is not None and not self.explicit.get(manager_host):
            self._clients[manager_host] = manager_client
        self._lock = threading.Lock()

    @classmethod
    def from_env(cls, manager_host: str, manager_client=None) -> NodeEngines:
        return cls(
            manager_url(), manager_host, parse_nodes(os.environ.get(NODES_ENV, "")), manager_client=manager_client
        )

    def url(self, hostname: str) -> str:
        if hostname in self.explicit:
            return self.explicit[hostname]
        local = sibling_socket(self.manager, hostname)
        if local:
            return local
        if hostname == self.manager_host:
            return self.manager or "unix:///var/run/docker.sock"
        raise InfrastructureError(
            f"no way to reach the Docker engine of swarm node {hostname!r}, which runs a worker: the swarm "
            "backend kills, pauses and reads a task's container through its node's engine",
            hint=f"name it in {NODES_ENV} (e.g. {NODES_ENV}={hostname}=ssh://user@{hostname}); the local swarm "
            "(`chaos swarm up`) needs nothing when DOCKER_HOST is its node-1 socket",
        )

    def client(self, hostname: str):
        with self._lock:
            if hostname not in self._clients:
                self._clients[hostname] = self._connect(self.url(hostname))
            return self._clients[hostname]

    def close(self) -> None:
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for c in clients:
            if c is self._borrowed:
                continue
            try:
                c.close()
            except Exception:  # noqa: BLE001
                pass


def connect_engine(
    url: str,
    what: str = "the node engine",
    hint: str = f"check {NODES_ENV}, or that the local swarm is up (`chaos swarm status`)",
):
    """A client of the engine at ``url``, answering; else an InfrastructureError naming ``what``."""
    import docker

    try:
        client = docker.DockerClient(base_url=url, timeout=120)
        client.ping()
        return client
    except Exception as exc:  # noqa: BLE001 - docker.errors.DockerException, requests errors
        raise InfrastructureError(
            f"cannot reach {what} at {url} ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})",
            hint=hint,
        ) from None


def connect_manager():
    """The manager's client, or an InfrastructureError saying how to name one."""
    import docker

    url = manager_url()
    try:
        client = docker.DockerClient(base_url=url, timeout=120) if url else docker.from_env(timeout=120)
        client.ping()
    except Exception as exc:  # noqa: BLE001
        raise InfrastructureError(
            f"cannot reach the swarm's manager engine at {url or 'the default socket'} "
            f"({type(exc).__name__}: {str(exc).splitlines()[0][:200]})",
            hint="point DOCKER_HOST (or `docker context use NAME`) at a swarm manager; "
            "`chaos swarm up` makes a local one and prints its DOCKER_HOST",
        ) from None
    return client


def require_manager(client) -> str:
    """The manager's own node host name; InfrastructureError when the engine is no swarm manager."""
    info = client.info()
    swarm = info.get("Swarm") or {}
    if swarm.get("LocalNodeState") != "active" or not swarm.get("ControlAvailable"):
        raise InfrastructureError(
            f"the engine {manager_url() or 'at the default socket'} is not a swarm manager "
            f"(swarm state {swarm.get('LocalNodeState') or 'inactive'})",
            hint="--backend swarm needs DOCKER_HOST (or the Docker context) to name a swarm manager: "
            "`chaos swarm up` makes a local swarm and prints its DOCKER_HOST",
        )
    return info.get("Name", "")
