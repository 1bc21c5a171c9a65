"""Losing a node of the local swarm (``chaos swarm up``) and bringing it back, and
failing the link between two of its nodes.

Its nodes are containers on the host's engine: a node is lost by killing its container
(the node's engine and every task on it die at once, unannounced, as when a machine loses
power) and restored by starting it again (its engine rejoins the swarm with the state its
volume kept; the shared store is mounted anew). Which local swarm: the one whose node-1
socket the manager's endpoint is (``<root>/<name>/node-1/docker.sock``). A real
multi-machine swarm's node cannot be switched off from here: the backend says so.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from chaos.backends.swarm.engines import SOCKET_NAME, connect_engine
from chaos.backends.swarm.plan import LABEL_SWARM, SwarmPlan
from chaos.errors import InfrastructureError, ScenarioError

HOST_ENV = "TFCHAOS_SWARM_HOST"  # the engine the local swarm's node containers run on
DEFAULT_HOST = "unix:///var/run/docker.sock"
_NODE = re.compile(r"node-(\d+)$")


def local_plan(manager_url: str | None) -> SwarmPlan | None:
    """The plan of the local swarm whose node socket ``manager_url`` is, or None."""
    if not manager_url or not manager_url.startswith("unix://"):
        return None
    path = Path(manager_url[len("unix://") :])
    if path.name != SOCKET_NAME or not _NODE.match(path.parent.name):
        return None
    swarm_dir = path.parent.parent
    count = sum(1 for p in swarm_dir.glob("node-*") if _NODE.match(p.name))
    try:
        return SwarmPlan(swarm_dir.name, max(count, 1), str(swarm_dir.parent))
    except ScenarioError:
        return None


LOSING = "switch one of its machines off (node_lost)"


def not_local(manager_url: str | None, doing: str = LOSING) -> InfrastructureError:
    return InfrastructureError(
        f"the swarm at {manager_url or 'the default engine'} is not a local swarm made by `chaos swarm up`: "
        f"this backend cannot {doing}",
        hint="run it on a local swarm (`chaos swarm up`, then DOCKER_HOST as it prints); on real machines "
        "stop a node's engine (`systemctl stop docker`) or drop its VXLAN packets (UDP 4789) by hand there",
    )


class LocalNodeLoss:
    """Kills and restarts the node containers of one local swarm, by host name."""

    def __init__(self, swarm) -> None:
        self.swarm = swarm  # chaos.backends.swarm.nodes.LocalSwarm

    @classmethod
    def of(cls, manager_url: str | None, host=None, doing: str = LOSING) -> LocalNodeLoss:
        from chaos.backends.swarm.nodes import LocalSwarm

        plan = local_plan(manager_url)
        if plan is None:
            raise not_local(manager_url, doing)
        if host is None:
            host = connect_engine(
                os.environ.get(HOST_ENV, DEFAULT_HOST),
                "the engine the local swarm's nodes run on",
                hint=f"set {HOST_ENV} to the engine `chaos swarm up` ran against",
            )
        return cls(LocalSwarm(host, plan))

    def index(self, hostname: str) -> int:
        """The node container's index for a node host name, checked to be this swarm's."""
        plan = self.swarm.plan
        match = _NODE.match(hostname)
        if not match:
            raise InfrastructureError(
                f"swarm node {hostname!r} is not one of swarm {plan.name!r}'s node containers",
                hint="the local swarm's nodes are named node-1, node-2, ...",
            )
        i = int(match.group(1))
        container = self.swarm.host.containers.get(plan.node_container(i))
        if container.labels.get(LABEL_SWARM) != plan.name:  # never touch what no `chaos swarm up` made
            raise InfrastructureError(
                f"{plan.node_container(i)} does not carry {LABEL_SWARM}={plan.name}",
                hint="`chaos swarm status` lists the local swarm's nodes",
            )
        return i

    def kill(self, hostname: str) -> None:
        self.swarm.kill_node(self.index(hostname))

    def restart(self, hostname: str) -> None:
        self.swarm.restart_node(self.index(hostname))

    def run(self, hostname: str, argv: list[str]) -> str:
        """Run ``argv`` in the node container's own namespaces (its network: where the overlay's
        VXLAN packets leave and arrive); its output, or an error naming the node and the command."""
        return self.swarm.node_exec(self.index(hostname), argv)
