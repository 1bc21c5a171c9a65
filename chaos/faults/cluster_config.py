"""Faults in the cluster configuration a worker is created with (TF_CONFIG).

The mistakes engineers make when a job first goes multi-worker, each as the
TF_CONFIG a worker would really be given. They apply when a worker is created
(``applies_at_create``): at ``bring_up`` the workers come up misconfigured;
healing redeploys them with the correct TF_CONFIG.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import ClassVar, Literal

from pydantic import Field

from chaos.backends.abilities import SpareAddresses, WorkerOverrides
from chaos.backends.base import ClusterControl
from chaos.faults.base import WorkersFault, register_fault
from chaos.faults.undo import Undo, clear_overrides
from chaos.worker.settings import WorkerSettings

# A port nobody listens on: the proxy serves one route per worker from the
# base port up, so base + 1000 is never one of them.
WRONG_PORT_OFFSET = 1000


def _host_port(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host, int(port)


def localhost_peers(config: dict, index: int, n: int) -> str:
    # "Worked locally in a toy setup": every address is localhost.
    config["cluster"]["worker"] = [f"localhost:{_host_port(a)[1]}" for a in config["cluster"]["worker"]]
    return json.dumps(config)


def wrong_port(config: dict, index: int, n: int) -> str:
    # The chief's entry names a port nobody listens on (ports "messed up across machines").
    host, port = _host_port(config["cluster"]["worker"][0])
    config["cluster"]["worker"][0] = f"{host}:{port + WRONG_PORT_OFFSET}"
    return json.dumps(config)


def duplicate_index(config: dict, index: int, n: int) -> str:
    # Two workers claim the same task index (a copy-pasted manifest).
    config["task"]["index"] = (index + 1) % n
    return json.dumps(config)


def missing_worker(config: dict, index: int, n: int) -> str:
    # The cluster lists one more worker than is ever started (a replica that never launched).
    host, port = _host_port(config["cluster"]["worker"][-1])
    config["cluster"]["worker"].append(f"{host}:{port + 1}")
    return json.dumps(config)


def malformed(config: dict, index: int, n: int) -> str:
    # Not JSON: a shell-quoting slip cut the closing brace.
    return json.dumps(config)[:-1]


def unreachable_address(config: dict, index: int, n: int, address: str) -> str:
    # The chief's entry is an address nothing answers on (e.g. a bridge address
    # copied from another host): connects time out instead of being refused.
    _, port = _host_port(config["cluster"]["worker"][0])
    config["cluster"]["worker"][0] = f"{address}:{port}"
    return json.dumps(config)


# Mistakes in the TF_CONFIG text (mode -> the text a worker is given).
TEXT_MODES: dict[str, Callable[[dict, int, int], str]] = {
    "localhost_peers": localhost_peers,
    "wrong_port": wrong_port,
    "duplicate_index": duplicate_index,
    "missing_worker": missing_worker,
    "malformed": malformed,
}
# A mistake in the job's code, not its config: TF_CONFIG is set only after the
# strategy was made (the harness enacts it, so it needs the harness's settings).
SET_AFTER_STRATEGY = "set_after_strategy"
UNREACHABLE_ADDRESS = "unreachable_address"
Mode = Literal[
    "localhost_peers",
    "wrong_port",
    "duplicate_index",
    "missing_worker",
    "malformed",
    "set_after_strategy",
    "unreachable_address",
]
# Modes whose text is not JSON: a resolver fed an address list cannot get them.
NOT_JSON_MODES = frozenset({"malformed"})


@register_fault
class TfConfig(WorkersFault):
    """Create workers with a wrong TF_CONFIG: localhost peers, a wrong port, a duplicate task index, a worker that never starts, not JSON, an unreachable address, or set only after the strategy was made."""

    name: ClassVar[str] = "tf_config"
    applies_at_create: ClassVar[bool] = True
    uses_abilities: ClassVar[tuple[type, ...]] = (WorkerOverrides, SpareAddresses)
    mode: Mode = Field(
        description="localhost_peers: every address is localhost; wrong_port: the chief's entry names a port "
        "nobody listens on; duplicate_index: the worker claims the next worker's task index; missing_worker: the "
        "cluster lists one more worker than is started; malformed: not JSON; unreachable_address: the chief's "
        "entry is an address on the run's network that nothing holds; set_after_strategy: the job sets TF_CONFIG "
        "only after making the strategy (needs the built-in harness)"
    )
    workers: list[int] = Field([1], min_length=1, description="the workers given the wrong TF_CONFIG; 0 is the chief")

    def hooks(self) -> frozenset[str]:
        return frozenset({"settings"}) if self.mode == SET_AFTER_STRATEGY else frozenset()

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        undo.add(clear_overrides(self.name, self.workers))  # harmless where nothing was set yet
        if self.mode == SET_AFTER_STRATEGY:
            for w in self.workers:
                # Each its own backup directory, as on separate machines: sharing one,
                # a worker that starts late restores the other's finished solo run
                # (measured once in the suite), and which happens depends on start order.
                own = f"{WorkerSettings.backup_dir}/{cluster.worker_name(w)}"
                cluster.override(
                    w, self.name, settings=WorkerSettings.change(tf_config_after_strategy=True, backup_dir=own)
                )
            return
        address = cluster.unused_address() if self.mode == UNREACHABLE_ADDRESS else None
        for w in self.workers:
            healthy = json.loads(cluster.tf_config(w))
            if address is not None:
                text = unreachable_address(healthy, w, cluster.num_slots, address)
            else:
                text = TEXT_MODES[self.mode](healthy, w, cluster.num_slots)
            cluster.override(w, self.name, cluster_config=text)
