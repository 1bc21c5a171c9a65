"""``SwarmBackend``: clusters on the Docker Swarm whose manager DOCKER_HOST or the
current Docker context names (``chaos run --backend swarm``). Images are taken as
they are on the swarm: nothing is built or distributed (the local swarm loads them
at ``chaos swarm up``; a real swarm pulls them from a registry)."""

from __future__ import annotations

from chaos.backends.spec import Deployment
from chaos.backends.swarm.cluster import BACKEND, SwarmCluster, require_image
from chaos.backends.swarm.engines import connect_manager, require_manager
from chaos.eventlog import EventLog


class SwarmBackend:
    name = BACKEND
    builds_images = False
    cluster_type = SwarmCluster  # what it serves: the abilities SwarmCluster implements

    def __init__(self, manager=None) -> None:
        self._manager = manager

    def check(self, proxy_image: str | None = None) -> None:
        manager = self._engine()
        require_manager(manager)
        if proxy_image is not None:
            require_image(manager, proxy_image)

    def cluster(self, spec: Deployment, *, events: EventLog | None = None) -> SwarmCluster:
        return SwarmCluster(spec, events=events, manager=self._engine())

    def image_id(self, image: str) -> str:
        manager = self._engine()
        require_image(manager, image)
        return manager.images.get(image).id

    def _engine(self):
        if self._manager is None:
            self._manager = connect_manager()
        return self._manager
