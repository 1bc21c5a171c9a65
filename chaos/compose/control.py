"""The docker-compose cluster as a ``ClusterControl``, so `chaos compose --inject`
drives the very fault classes scenarios use against a cluster someone explores
by hand (README "Explore by hand").

It has the abilities that act on a running cluster (chaos.backends.abilities):
signals, preemption, pause, the network (proxy routes through the Toxiproxy
client, a worker's Docker network), resources and commands to the training
process. What changes how workers are *created* (overrides, a rewritten TF_CONFIG),
needs a run's own backup volume or helper image, or more than one node belongs
to the scenario runner: a fault that needs one is refused before it acts
(``unsupported_here``), naming what to do instead.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import Any

from chaos.backends.abilities import (
    CheckpointDamage,
    CheckpointFill,
    CheckpointSnapshots,
    Freezing,
    NodeDrain,
    NodeLinks,
    NodeLoss,
    PacketNamespaces,
    Partitions,
    ProxyLinks,
    ResourceLimits,
    SpareAddresses,
    StorageWriteLimits,
    UnsupportedVerb,
    WorkerCommands,
    WorkerOverrides,
    lacking,
    verbs,
)
from chaos.backends.docker import api as docker_api
from chaos.backends.docker.container_workers import ContainerVerbs
from chaos.backends.proxy_client import ProxyClient
from chaos.errors import ScenarioError
from chaos.events import Event
from chaos.topology import PROXY_API_PORT
from chaos.worker.control import WorkerCommand, control_file_script, params_of

COMPOSE_NETWORK = "com.docker.compose.network"
ONE_HOST = "a compose cluster runs on one Docker host, one node"
BACKUP_VOLUME = ("the run's backup volume", "a scenario run owns and sizes it")
# What a fault is told when it needs an ability a compose cluster lacks: (what, why).
NOT_HERE: dict[type, tuple[str, str]] = {
    WorkerOverrides: ("override", "it changes how workers are created"),
    SpareAddresses: ("unused_address", "it rewrites TF_CONFIG, read only when a worker is created"),
    PacketNamespaces: ("netns", "packet faults need the network helper image a scenario run builds"),
    CheckpointDamage: BACKUP_VOLUME,
    CheckpointSnapshots: BACKUP_VOLUME,
    CheckpointFill: BACKUP_VOLUME,
    StorageWriteLimits: BACKUP_VOLUME,
    NodeLoss: ("lose_node", ONE_HOST),
    NodeDrain: ("drain_node", ONE_HOST),
    NodeLinks: ("degrade_link", ONE_HOST),
}


def unsupported_here(fault: Any, cluster: Any) -> UnsupportedVerb | None:
    """Why ``cluster`` cannot serve ``fault`` (the first ability it needs and ``cluster`` lacks), or None."""
    missing = lacking(cluster, getattr(fault, "uses_abilities", ()))
    if not missing:
        return None
    what, why = NOT_HERE.get(missing[0], (", ".join(verbs(missing[0])), "a scenario run has it"))
    return UnsupportedVerb(
        f"this fault needs `{what}` ({why}), which a compose cluster explored by hand does not offer",
        hint="run it as a scenario (`chaos run scenarios/NAME.yaml`), or edit docker-compose.yml and "
        "`docker-compose up -d` for a change in how workers are created",
    )


class ComposeControl(ContainerVerbs, ProxyLinks, Partitions, Freezing, ResourceLimits, WorkerCommands):
    """Faults against the running compose project's ``worker-i`` containers (signals,
    pause, proxy routes and limits as chaos.backends.docker.container_workers acts on them)."""

    def __init__(
        self,
        workers: dict[str, Any],
        say: Callable[[Event], None],
        api_host: str = "127.0.0.1",
        api_port: int = PROXY_API_PORT,
    ) -> None:
        self.workers = workers  # service name ("worker-1") -> container
        self.say = say
        self.proxies = ProxyClient(api_host, api_port)
        self._seq = itertools.count(int(time.time()))  # command files of earlier injects stay distinct
        self._disconnected: dict[int, str] = {}  # worker index -> the network it was taken off

    # --- what a fault may use ------------------------------------------------

    def worker_name(self, index: int) -> str:
        return f"worker-{index}"

    def container(self, index: int):
        name = self.worker_name(index)
        if name not in self.workers:
            raise ScenarioError(
                f"the compose cluster has no {name}; it has {', '.join(sorted(self.workers)) or 'no worker'}",
                hint="is `docker-compose up -d` running? (`--project NAME` picks one of several projects)",
            )
        container = self.workers[name]
        container.reload()
        return container

    def tf_config(self, index: int) -> str:
        """The TF_CONFIG the worker's container was created with (docker-compose.yml's)."""
        env = dict(e.split("=", 1) for e in self.container(index).attrs["Config"].get("Env") or [] if "=" in e)
        if "TF_CONFIG" not in env:
            raise ScenarioError(
                f"{self.worker_name(index)} was created without TF_CONFIG",
                hint="regenerate docker-compose.yml: `chaos compose --write`",
            )
        return env["TF_CONFIG"]

    def preempt(self, index: int, grace_s: float) -> None:
        docker_api.stop(self.container(index), grace_s=grace_s)

    def _network(self, container):
        names = list(container.attrs["NetworkSettings"]["Networks"])
        return container.client.networks.get(names[0]) if names else None

    def disconnect(self, index: int) -> None:
        container = self.container(index)
        network = self._network(container)
        if network is not None:
            self._disconnected[index] = network.name
            network.disconnect(container, force=True)

    def reconnect(self, index: int) -> None:
        name = self._disconnected.pop(index, None)
        if name is not None:
            container = self.container(index)
            container.client.networks.get(name).connect(container, aliases=[self.worker_name(index)])

    def _limits(self, index: int) -> dict[str, Any]:
        return {}  # the generated compose file sets no limits: restoring one lifts it

    def memory_usage(self, index: int) -> int:
        stats = self.container(index).stats(stream=False, one_shot=True)
        return int(stats.get("memory_stats", {}).get("usage") or 0)

    def is_running(self, index: int) -> bool:
        return self.container(index).status == "running"

    def command(self, index: int, command: WorkerCommand) -> None:
        result = self.container(index).exec_run(control_file_script(next(self._seq), command.name, params_of(command)))
        if result.exit_code != 0:
            raise ScenarioError(
                f"{self.worker_name(index)} did not take the command {command.name!r}: "
                f"{result.output.decode(errors='replace').strip()[-300:]}",
                hint="is the worker training? (`chaos compose --watch`)",
            )

    def log_tail(self, index: int) -> list[str]:
        return self.container(index).logs(tail=20).decode(errors="replace").splitlines()

    def record(self, event: Event) -> None:
        self.say(event)
