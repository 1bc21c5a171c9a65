"""``DockerBackend``: clusters on the one Docker engine the environment names
(DOCKER_HOST, or the local socket)."""

from __future__ import annotations

from chaos.backends.docker import api as docker_api
from chaos.backends.docker.cluster import DockerCluster
from chaos.backends.spec import Deployment
from chaos.eventlog import EventLog


class DockerBackend:
    name = "docker"
    builds_images = True
    cluster_type = DockerCluster  # what it serves: the abilities DockerCluster implements

    def __init__(self, client=None) -> None:
        # None: each cluster connects on its own (its log followers and exit
        # watchers share that client), and image look-ups connect at first use.
        self._client = client
        self._lookups = client

    def check(self, proxy_image: str | None = None) -> None:
        client = self._engine()
        if proxy_image is not None:
            docker_api.require_image(client, proxy_image)

    def cluster(self, spec: Deployment, *, events: EventLog | None = None) -> DockerCluster:
        return DockerCluster(spec, events=events, client=self._client)

    def image_id(self, image: str) -> str:
        return self._engine().images.get(image).id

    def _engine(self):
        if self._lookups is None:
            self._lookups = docker_api.connect()
        return self._lookups
