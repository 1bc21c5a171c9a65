"""What a swarm run creates, as the keyword arguments of the manager's
``services.create`` / ``networks.create``: the per-run overlay, the proxy
service, one service per worker, one-shot helpers on the checkpoint store.

Values only (no engine), so every constraint, network, mount, label and
environment variable is unit-tested.

- Every service runs one task (replicated, 1), restart policy ``none``: the
  runner restarts workers as it does on one host; or, for a worker when the
  scenario says ``cluster.recovery.by: orchestrator``, ``on-failure``: Swarm
  starts a new task when the worker exits with a failure (``orchestrator_restarts``).
- Endpoint mode ``dnsrr``: a service's name and network aliases resolve to its
  task's address (this kernel has no IPVS, so no virtual IPs).
- The proxy's API is published in *host* mode on its node: the runner reaches it
  at that node's address (published ports through the routing mesh need IPVS).
- A worker binds the store's per-run folder at the checkpoint directory it
  would mount its volume at on one host.
"""

from __future__ import annotations

from typing import Any

from docker.types import EndpointSpec, Mount, NetworkAttachmentConfig, Resources, RestartPolicy, ServiceMode

from chaos import LABEL_PROJECT, LABEL_RUN, PROJECT
from chaos.backends.spec import Limits
from chaos.backends.swarm.plan import ENDPOINT_MODE, OVERLAY_MTU
from chaos.topology import PROXY_ALIAS, PROXY_API_PORT, STOP_GRACE_S

LABEL_ROLE = "io.tfchaos.role"
LABEL_WORKER = "io.tfchaos.worker"
LABEL_BACKEND = "io.tfchaos.backend"
STORE_IN_HELPER = "/store"
NANO = 1_000_000_000
# Swarm waits this long after a failed task before it starts the next one (its default, 5 s,
# only adds to the recovery time the scenario measures; the peers have exited by then).
RESTART_DELAY_S = 1.0


def run_labels(run_id: str, owner: dict[str, str]) -> dict[str, str]:
    """What every object of a run carries (the owner: chaos.backends.docker.ownership)."""
    return {LABEL_PROJECT: PROJECT, LABEL_RUN: run_id, LABEL_BACKEND: "swarm", **owner}


def overlay(name: str, labels: dict[str, str]) -> dict[str, Any]:
    """The run's own attachable overlay (its aliases ``proxy``, ``worker-<i>`` are the run's alone)."""
    return {
        "name": name,
        "driver": "overlay",
        "attachable": True,
        "options": {"com.docker.network.driver.mtu": str(OVERLAY_MTU)},
        "labels": labels,
        "check_duplicate": True,
    }


def _common(name: str, labels: dict[str, str], node: str | None) -> dict[str, Any]:
    return {
        "name": name,
        "labels": labels,
        "container_labels": labels,  # the task's container carries them on its node's engine too
        "constraints": [f"node.hostname=={node}"] if node else [],
        "restart_policy": RestartPolicy(condition="none"),
        "mode": ServiceMode("replicated", replicas=1),
    }


def orchestrator_restarts(max_restarts: int) -> RestartPolicy:
    """Swarm restarts a worker's task that exits with a failure, at most ``max_restarts`` times
    (as a pod with restartPolicy OnFailure under a Job's backoffLimit)."""
    return RestartPolicy(condition="on-failure", delay=int(RESTART_DELAY_S * NANO), max_attempts=max_restarts)


def proxy_service(*, name: str, image: str, network: str, node: str, labels: dict[str, str]) -> dict[str, Any]:
    endpoint = EndpointSpec(mode=ENDPOINT_MODE)
    # No published port given: the node picks a free one (the task's PortStatus says which).
    endpoint["Ports"] = [{"Protocol": "tcp", "TargetPort": PROXY_API_PORT, "PublishMode": "host"}]
    return {
        **_common(name, {**labels, LABEL_ROLE: "proxy"}, node),
        "image": image,
        "networks": [NetworkAttachmentConfig(network, aliases=[PROXY_ALIAS])],
        "endpoint_spec": endpoint,
    }


def resources(limits: Limits | None) -> Resources | None:
    """A scenario's CPU and memory limits as a task's (swap is not a swarm resource: memory alone)."""
    if limits is None or (limits.cpus is None and limits.memory_bytes is None):
        return None
    return Resources(
        cpu_limit=int(limits.cpus * NANO) if limits.cpus is not None else None,
        mem_limit=limits.memory_bytes,
    )


def worker_service(
    *,
    name: str,
    worker: str,
    index: int,
    image: str,
    env: dict[str, str],
    args: list[str] | None,
    network: str,
    node: str,
    store_dir: str,
    checkpoint_dir: str,
    labels: dict[str, str],
    limits: Limits | None = None,
    stop_grace_s: float = STOP_GRACE_S,
    restart_policy: RestartPolicy | None = None,
) -> dict[str, Any]:
    """Worker ``index`` (``worker``: its name, also its alias on the overlay) on ``node``;
    ``restart_policy``: the orchestrator's (default: none, the runner restarts it)."""
    out = {
        **_common(name, {**labels, LABEL_ROLE: "worker", LABEL_WORKER: str(index)}, node),
        "image": image,
        "env": [f"{k}={v}" for k, v in sorted(env.items())],
        "networks": [NetworkAttachmentConfig(network, aliases=[worker])],
        "endpoint_spec": EndpointSpec(mode=ENDPOINT_MODE),
        "mounts": [Mount(target=checkpoint_dir, source=store_dir, type="bind")],
        "init": True,  # a real PID 1: SIGTERM reaches Python as on one host
        "stop_grace_period": int(stop_grace_s * NANO),
    }
    if restart_policy is not None:
        out["restart_policy"] = restart_policy
    if args:
        out["args"] = list(args)  # the image's CMD; its entrypoint stays
    limit = resources(limits)
    if limit is not None:
        out["resources"] = limit
    return out


def keeper_service(*, name: str, image: str, network: str, node: str, labels: dict[str, str]) -> dict[str, Any]:
    """A task that only holds the run's overlay on ``node`` for the whole run. Measured: a node
    whose last task on an overlay goes drops its copy of it, and a task scheduled there right
    after (a restarted worker) failed to start with "network ... not found" (exit 128)."""
    return {
        **_common(name, {**labels, LABEL_ROLE: "keeper"}, node),
        "image": image,
        "command": ["sleep", "infinity"],
        "networks": [NetworkAttachmentConfig(network)],
        "endpoint_spec": EndpointSpec(mode=ENDPOINT_MODE),
    }


def helper_service(
    *,
    name: str,
    image: str,
    code: str,
    args: list[str],
    store_root: str,
    labels: dict[str, str],
    node: str | None = None,
) -> dict[str, Any]:
    """A one-shot task as root with the store's root at STORE_IN_HELPER, running ``python3 -c code args``."""
    return {
        **_common(name, {**labels, LABEL_ROLE: "helper"}, node),
        "image": image,
        "command": ["python3", "-c", code, *args],
        "user": "0",
        "mounts": [Mount(target=STORE_IN_HELPER, source=store_root, type="bind")],
    }


MAKE_FOLDER = """
import os, sys
path = sys.argv[1]
os.makedirs(path, exist_ok=True)
os.chmod(path, 0o777)
print("made", path)
"""

REMOVE_FOLDER = """
import shutil, sys
shutil.rmtree(sys.argv[1], ignore_errors=True)
print("removed", sys.argv[1])
"""
