"""Names, ports and TF_CONFIG of a cluster: the one source of truth for the
topology, used by the Docker cluster and by the generated docker-compose.yml.

Worker i's TF_CONFIG entry is ``proxy:P_i``. TF binds its gRPC server to the
port of its own entry on all interfaces, so worker i listens on ``0.0.0.0:P_i``
in its own container, and proxy ``worker-i`` listens on ``P_i`` and forwards to
``worker-i:P_i``: every byte sent *to* worker i crosses that proxy.

With ``direct`` (a scenario's ``cluster.traffic: direct``) the entries are the
workers' own names, ``worker-i:P_i``: the workers talk to each other without the
proxy, over the links between their nodes (the faults on those links need it).

The parameter-server shape (``num_ps > 0``) has more kinds of task than
workers. Every container keeps a *slot* index and the framework's name
``worker-<slot>`` (events, proxy routes and checks speak slots, so nothing
downstream changes); the topology maps slots to TF tasks in one fixed order:
slot 0 is the chief (the coordinator, like MWMS's worker-0), then the TF
workers, then the parameter servers. ``task_name`` is the TF name a scenario's
``task:`` uses (``chief``, ``worker-0``, ``ps-0``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

BASE_PORT = 23600
PROXY_ALIAS = "proxy"
PROXY_API_PORT = 8474
# Every bound of a cluster, in this one place: the scenario format, the faults and the backends
# read them here. A worker is a TF task; a slot is a container (one per task: chief, workers, ps).
MAX_WORKERS = 16  # TF workers a scenario may have (cluster.workers)
MAX_PS = 2  # parameter servers (cluster.ps, with training.strategy: parameter_server)
MAX_SLOTS = 1 + MAX_WORKERS + MAX_PS  # containers at most: a parameter-server cluster's chief, workers, ps
# Workers each backend runs: one Docker host runs what a 2-core, 24 GB machine runs comfortably; a
# swarm spreads them over its nodes (8 on a 3-node swarm on one machine, bit-exact: docs/backends.md).
BACKEND_MAX_WORKERS: dict[str, int] = {"docker": 4, "swarm": MAX_WORKERS}
# Seconds from SIGTERM to SIGKILL when a backend stops a worker to restart it (a worker hung in TF
# ignores SIGTERM: docs/findings.md); a fault's own grace (preempt_worker.grace_s) is its parameter.
STOP_GRACE_S = 3


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
    num_ps: int = 0  # > 0: a ParameterServerStrategy cluster (chief + workers + ps)
    direct: bool = False  # TF_CONFIG names the workers themselves, not the proxy

    def __post_init__(self) -> None:
        if not 1 <= self.num_workers <= MAX_WORKERS:
            raise ValueError(f"workers must be 1..{MAX_WORKERS}, got {self.num_workers}")
        if not 0 <= self.num_ps <= MAX_PS:
            raise ValueError(f"ps must be 0..{MAX_PS}, got {self.num_ps}")

    @property
    def parameter_server(self) -> bool:
        return self.num_ps > 0

    @property
    def num_slots(self) -> int:
        """Containers in the cluster (one per TF task)."""
        return 1 + self.num_workers + self.num_ps if self.parameter_server else self.num_workers

    def task(self, slot: int) -> tuple[str, int]:
        """The TF task (type, index) container ``slot`` runs."""
        if not 0 <= slot < self.num_slots:
            raise ValueError(f"slot must be 0..{self.num_slots - 1}, got {slot}")
        if not self.parameter_server:
            return "worker", slot
        if slot == 0:
            return "chief", 0
        if slot <= self.num_workers:
            return "worker", slot - 1
        return "ps", slot - 1 - self.num_workers

    def task_name(self, slot: int) -> str:
        kind, index = self.task(slot)
        return "chief" if kind == "chief" else f"{kind}-{index}"

    def task_names(self) -> list[str]:
        return [self.task_name(s) for s in range(self.num_slots)]

    def slot_of(self, task_name: str) -> int:
        """The slot of a TF task name; ValueError naming the valid ones."""
        names = self.task_names()
        if task_name not in names:
            raise ValueError(f"{task_name!r} is not a task of this cluster; valid: {', '.join(names)}")
        return names.index(task_name)

    @staticmethod
    def worker_name(index: int) -> str:
        return f"worker-{index}"

    def port(self, index: int) -> int:
        return self.base_port + index

    def tf_config(self, index: int) -> str:
        """TF_CONFIG of container ``index`` (its slot): every task's entry is the proxy (or, direct,
        the task's own container)."""
        cluster: dict[str, list[str]] = {}
        for slot in range(self.num_slots):
            host = self.worker_name(slot) if self.direct else PROXY_ALIAS
            cluster.setdefault(self.task(slot)[0], []).append(f"{host}:{self.port(slot)}")
        kind, task_index = self.task(index)
        return json.dumps({"cluster": cluster, "task": {"type": kind, "index": task_index}}, sort_keys=True)

    def routes(self) -> list[ProxyRoute]:
        """The proxy's links, one per task; none with direct traffic (no byte crosses the proxy,
        and a link nobody uses would only mislead what is said of a hang)."""
        if self.direct:
            return []
        return [
            ProxyRoute(
                name=self.worker_name(i),
                listen=f"0.0.0.0:{self.port(i)}",
                upstream=f"{self.worker_name(i)}:{self.port(i)}",
            )
            for i in range(self.num_slots)
        ]
