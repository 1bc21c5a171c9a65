"""Names, ports and TF_CONFIG of a cluster: the one source of truth for the
topology, used by the Docker cluster and by the generated docker-compose.yml.

Worker i's TF_CONFIG entry is ``proxy:P_i``. TF binds its gRPC server to the
port of its own entry on all interfaces, so worker i listens on ``0.0.0.0:P_i``
in its own container, and proxy ``worker-i`` listens on ``P_i`` and forwards to
``worker-i:P_i``: every byte sent *to* worker i crosses that proxy.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

BASE_PORT = 23600
PROXY_ALIAS = "proxy"
PROXY_API_PORT = 8474
MAX_WORKERS = 4  # what a 2-core, 24 GB machine runs comfortably


@dataclass(frozen=True)
class ProxyRoute:
    name: str  # the toxiproxy proxy name, "worker-i"
    listen: str
    upstream: str

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "listen": self.listen, "upstream": self.upstream, "enabled": True}


@dataclass(frozen=True)
class Topology:
    num_workers: int = 2
    base_port: int = BASE_PORT

    def __post_init__(self) -> None:
        if not 1 <= self.num_workers <= MAX_WORKERS:
            raise ValueError(f"workers must be 1..{MAX_WORKERS}, got {self.num_workers}")

    @staticmethod
    def worker_name(index: int) -> str:
        return f"worker-{index}"

    def port(self, index: int) -> int:
        return self.base_port + index

    def tf_config(self, index: int) -> str:
        cluster = [f"{PROXY_ALIAS}:{self.port(i)}" for i in range(self.num_workers)]
        return json.dumps(
            {"cluster": {"worker": cluster}, "task": {"type": "worker", "index": index}},
            sort_keys=True,
        )

    def routes(self) -> list[ProxyRoute]:
        return [
            ProxyRoute(
                name=self.worker_name(i),
                listen=f"0.0.0.0:{self.port(i)}",
                upstream=f"{self.worker_name(i)}:{self.port(i)}",
            )
            for i in range(self.num_workers)
        ]
