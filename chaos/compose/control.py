"""The docker-compose cluster as a ``ClusterControl``, so `chaos compose --inject`
drives the very fault classes scenarios use against a cluster someone explores
by hand (README "Explore by hand").

It offers the verbs that act on a running cluster: signals, preemption,
pause, the network (proxy routes through the Toxiproxy client, a worker's
Docker network), resources and commands to the training process. Verbs that
change how workers are *created* (overrides, restarts, TF_CONFIG) or that need
a run's own backup volume belong to the scenario runner: they raise
``UnsupportedVerb`` naming what to do instead.
"""

from __future__ import annotations

import itertools
import time
from typing import Any, Callable

from chaos.backends.docker import api as docker_api
from chaos.backends.docker.container_workers import ContainerVerbs
from chaos.backends.proxy_client import ProxyClient
from chaos.topology import PROXY_API_PORT, STOP_GRACE_S
from chaos.errors import ScenarioError
from chaos.events import Event
from chaos.worker.control import WorkerCommand, control_file_script, params_of

COMPOSE_NETWORK = "com.docker.compose.network"


class UnsupportedVerb(ScenarioError):
    """A fault needs something only a scenario run can do."""


class ComposeControl(ContainerVerbs):
    """Faults against the running compose project's ``worker-i`` containers (signals,
    pause, proxy routes and limits as chaos.backends.docker.container_workers acts on them)."""

    def __init__(self, workers: dict[str, Any], say: Callable[[Event], None],
                 api_host: str = "127.0.0.1", api_port: int = PROXY_API_PORT) -> None:
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
            raise ScenarioError(f"{self.worker_name(index)} did not take the command {command.name!r}: "
                                f"{result.output.decode(errors='replace').strip()[-300:]}",
                                hint="is the worker training? (`chaos compose --watch`)")

    def log_tail(self, index: int) -> list[str]:
        return self.container(index).logs(tail=20).decode(errors="replace").splitlines()

    def record(self, event: Event) -> None:
        self.say(event)

    # --- what only a scenario run can do ---------------------------------------

    def _unsupported(self, verb: str, why: str) -> UnsupportedVerb:
        return UnsupportedVerb(
            f"this fault needs `{verb}` ({why}), which a compose cluster explored by hand does not offer",
            hint="run it as a scenario (`chaos run scenarios/NAME.yaml`), or edit docker-compose.yml and "
            "`docker-compose up -d` for a change in how workers are created",
        )

    def override(self, index: int, owner: str, **changes: Any) -> None:
        raise self._unsupported("override", "it changes how workers are created")

    def clear_override(self, index: int, owner: str) -> None:
        return None  # nothing was overridden here

    def restart(self, indices: list[int], reason: str, grace_s: float = STOP_GRACE_S) -> None:
        raise self._unsupported("restart", "the scenario runner restarts workers; compose restarts a failed one itself")

    def expect_restarts(self, expected: bool) -> None:
        return None  # compose makes no containers ahead

    def netns(self, index: int) -> Any:
        raise self._unsupported("netns", "packet faults need the network helper image a scenario run builds")

    def lose_node(self, index: int) -> str:
        raise self._unsupported("lose_node", "a compose cluster runs on one Docker host, one node")

    def restore_node(self, node: str) -> None:
        raise self._unsupported("restore_node", "a compose cluster runs on one Docker host, one node")

    def drain_node(self, index: int) -> str:
        raise self._unsupported("drain_node", "a compose cluster runs on one Docker host, one node")

    def activate_node(self, node: str) -> None:
        raise self._unsupported("activate_node", "a compose cluster runs on one Docker host, one node")

    def degrade_link(self, a: int, b: int, loss_percent: float) -> Any:
        raise self._unsupported("degrade_link", "a compose cluster runs on one Docker host, one node")

    def restore_link(self, link: Any) -> None:
        raise self._unsupported("restore_link", "a compose cluster runs on one Docker host, one node")

    def tf_config(self, index: int) -> str:
        raise self._unsupported("tf_config", "it rewrites TF_CONFIG, read only when a worker is created")

    def unused_address(self) -> str:
        raise self._unsupported("unused_address", "it rewrites TF_CONFIG, read only when a worker is created")

    def checkpoint_files(self) -> int | None:
        return None

    def _backup(self, *_: Any, **__: Any) -> Any:
        raise self._unsupported("the run's backup volume", "a scenario run owns and sizes it")

    damage_backup = snapshot_backup = fill_backup_volume = clear_backup_fill = _backup

    def backup_device(self) -> str:
        return self._backup()
