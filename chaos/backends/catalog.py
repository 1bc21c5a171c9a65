"""Which backends exist, by the name ``--backend`` takes, and how many workers each runs.

A backend's class is imported when it is first asked for (as plugins are), so that
``chaos validate --backend`` reads what it serves from its cluster class by type
(chaos.backends.refusals) while nothing below the runner imports a backend's engine
code. Supporting another backend: its package beside ``docker`` and ``swarm``, and
one line here.
"""

from __future__ import annotations

import importlib

from chaos.errors import ScenarioError
from chaos.topology import BACKEND_MAX_WORKERS

DEFAULT_BACKEND = "docker"
# name -> "module:Backend class" (a class of chaos.backends.base.Backend).
_BACKENDS = {
    "docker": "chaos.backends.docker.backend:DockerBackend",
    "swarm": "chaos.backends.swarm.backend:SwarmBackend",
}
BACKENDS = tuple(_BACKENDS)


def check_backend(name: str) -> str:
    """``--backend``: one of BACKENDS."""
    if name not in _BACKENDS:
        raise ScenarioError(
            f"unknown backend {name!r}; valid: {', '.join(BACKENDS)}",
            hint="--backend docker (the default: one Docker host) or --backend swarm (the swarm manager "
            "DOCKER_HOST or the Docker context names; docs/backends.md)",
        )
    return name


def backend_class(name: str) -> type:
    """The Backend class ``name`` names (imported now)."""
    module, _, attr = _BACKENDS[check_backend(name)].partition(":")
    return getattr(importlib.import_module(module), attr)


def cluster_type(name: str) -> type:
    """The class of the clusters backend ``name`` makes: what it serves, by type."""
    return backend_class(name).cluster_type


def too_many_workers(workers: int, backend: str) -> str | None:
    """Why ``backend`` cannot run ``workers`` workers (chaos.topology.BACKEND_MAX_WORKERS), or None."""
    limit = BACKEND_MAX_WORKERS[check_backend(backend)]
    if workers <= limit:
        return None
    return f"cluster.workers: {workers} workers, and the {backend} backend runs at most {limit}"
