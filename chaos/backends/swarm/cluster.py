"""The Swarm backend's cluster: each worker a one-task service placed on a node of
its own, the proxy a service on the run's overlay, checkpoints on the store every
node mounts.

- **Placement** (chaos.backends.swarm.placement): workers round-robin over the
  ready nodes, worker nodes first, by ``node.hostname==`` constraints; the proxy on
  a manager. Each worker's node is said in the run's history (``AddressEvent.node``),
  so the report names it.
- **Network**: an attachable overlay per run (``tfchaos-<run>``, MTU 1400), endpoint
  mode dnsrr; the proxy is ``proxy`` and worker i ``worker-i`` on it, so TF_CONFIG
  and the proxy's routes are the single host's.
- **The proxy's API** is published in host mode on its node; the runner talks to
  it at that node's advertised address.
- **Checkpoints**: a per-run folder of the store every node mounts
  (``/mnt/tfchaos-store/tfchaos-<run>``, made and removed by a one-shot helper task),
  bind-mounted where the worker expects its checkpoint volume.
- **A worker's container** is reached through its node's engine
  (chaos.backends.swarm.engines): kill, pause, signals, stop, its log and its exit,
  read exactly as the Docker backend reads them.
- **Restarts** are the runner's, as on one host (restart policy none): the old
  task's container is stopped (its exit recorded), its service removed, and a
  service of the next generation is made on the same node. With
  ``cluster.recovery.by: orchestrator`` Swarm restarts a worker that exits with a
  failure itself (restart policy on-failure): the task's watcher notices the new
  task, follows its container and records the restart (``await_restarts``).
- What it serves beyond chaos.backends.base.Cluster are the abilities its class lists
  (chaos.backends.abilities); a scenario with a fault needing one it lacks (the
  checkpoint-store faults, for now) is refused before anything starts
  (chaos.backends.refusals).

Everything carries the project label, the run id and the owner, and goes in
``teardown`` (also on failure and Ctrl-C).
"""

from __future__ import annotations

import ipaddress
import os
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import requests

from chaos import LABEL_PROJECT, LABEL_RUN, PROJECT, interrupts
from chaos.backends.abilities import (
    CheckpointListing,
    Freezing,
    NamespacesAhead,
    NodeDrain,
    NodeLinks,
    NodeLoss,
    OrchestratorRestarts,
    PacketNamespaces,
    Partitions,
    ProxyLinks,
    ResourceLimits,
    SpareAddresses,
    UnsupportedVerb,
    WorkerCommands,
    WorkerOverrides,
)
from chaos.backends.docker import api as docker_api
from chaos.backends.docker import limits as docker_limits
from chaos.backends.docker.container_workers import ContainerWorkers
from chaos.backends.docker.logs import LogFollower
from chaos.backends.docker.ownership import owner_labels
from chaos.backends.docker.waits import wait_until
from chaos.backends.overrides import Overrides
from chaos.backends.proxy_client import ProxyClient
from chaos.backends.spec import Deployment
from chaos.backends.swarm import links, specs
from chaos.backends.swarm.engines import STORE_ENV, NodeEngines, connect_manager, require_manager
from chaos.backends.swarm.links import Link
from chaos.backends.swarm.placement import Node, Placement, another_node, moved, place
from chaos.backends.swarm.plan import STORE_IN_NODE
from chaos.backends.swarm.tasks import Task, current, has_container, run_once, wait_next_task, wait_task
from chaos.errors import InfrastructureError
from chaos.eventlog import EventLog
from chaos.events import RUNNER, AddressEvent, ExitEvent, NoticeEvent, RestartEvent, StopEvent
from chaos.topology import PROXY_ALIAS, PROXY_API_PORT, STOP_GRACE_S

BACKEND = "swarm"
# The workers' nodes of this process's runs that are up (run id -> nodes), and the lock they
# are placed under: runs that start together under `chaos run -j N` see each other.
_PLACED: dict[str, tuple[str, ...]] = {}
_PLACING = threading.Lock()
TASK_START_TIMEOUT_S = 120.0  # a node may still be loading an image
PROXY_API_TIMEOUT_S = 30.0
ROUTES_TIMEOUT_S = 60.0
HELPER_TIMEOUT_S = 60.0
ATTACH_WAIT_S = 60.0
NETWORK_REMOVE_S = 30.0
NODE_RESTORE_WAIT_S = 120.0  # teardown waits this long for a lost node coming back


@dataclass
class _Worker:
    """One generation of one worker: its service, and once the task runs, its container on its node."""

    index: int
    generation: int
    service: Any
    node: str
    attached: threading.Event = field(default_factory=threading.Event)
    container: Any = None
    follower: LogFollower | None = None
    watcher: threading.Thread | None = None
    task: Task | None = None  # as last seen
    problem: str = ""  # why no container came (rejected, failed to start)
    replaced: bool = False  # the runner restarts it: the orchestrator's next task is not awaited


class SwarmCluster(
    ContainerWorkers,
    # What a swarm serves beyond chaos.backends.base.Cluster (chaos.backends.abilities): not yet the
    # checkpoint store's faults (they would run a task binding the store) nor standbys made ahead.
    ProxyLinks,
    Partitions,
    PacketNamespaces,
    NamespacesAhead,
    Freezing,
    WorkerCommands,
    ResourceLimits,
    WorkerOverrides,
    SpareAddresses,
    CheckpointListing,
    NodeLoss,
    NodeDrain,
    NodeLinks,
    OrchestratorRestarts,
):
    """Context manager: ``with SwarmCluster(spec) as cluster: cluster.start_workers()``."""

    def __init__(
        self,
        spec: Deployment,
        *,
        events: EventLog | None = None,
        manager=None,
        engines: NodeEngines | None = None,
        store_root: str | None = None,
    ) -> None:
        self.spec = spec
        self.topology = spec.shape
        self.num_slots = spec.num_slots
        self.run_id = uuid.uuid4().hex[:8]
        self.prefix = f"{PROJECT}-{self.run_id}"
        self.events = events or EventLog()
        self.manager = manager or connect_manager()
        self.labels = specs.run_labels(self.run_id, owner_labels())
        self.engines = engines
        self.store_root = (store_root or os.environ.get(STORE_ENV) or STORE_IN_NODE).rstrip("/")
        self.store_dir = f"{self.store_root}/{self.prefix}"
        self.network_name = self.prefix
        self.network = None
        self.placement: Placement | None = None
        self.nodes: dict[str, Node] = {}
        self.proxy_service = None
        self.proxy_container = None
        self.proxy_log: LogFollower | None = None
        self.proxies: ProxyClient | None = None
        self.workers: dict[int, _Worker] = {}
        self.overrides = Overrides(spec)  # per worker, per fault: applied at the next create
        self._store_made = False
        # Nodes this run lost (node_lost) or drained (node_drained), with which: nothing is placed there again.
        self._out_of_use: dict[str, str] = {}
        self._node_loss = None  # how this swarm's nodes are reached (lost, restored, links), made at first use
        self._links: list[Link] = []  # links between nodes this run degraded and has not restored
        self._restoring: list[tuple[str, threading.Thread]] = []  # lost nodes being started again
        self._not_restored: set[str] = set()
        self._command_seq = 0
        self._netns_ready: dict[int, list] = {}  # worker index -> helpers started ahead (netns_ahead)
        self._netns_started: list = []  # every helper this run started, on the workers' nodes
        # Restarts by the orchestrator's restart policy, per worker: noticed, and handed to await_restarts.
        self._orchestrated: dict[int, int] = {}
        self._awaited: dict[int, int] = {}
        self._closing = False
        self._lock = threading.Lock()

    # --- lifecycle -------------------------------------------------------

    def start_infrastructure(self) -> None:
        """Placement, the run's overlay, its store folder and the proxy (routes come with the workers)."""
        if self.spec.backup_volume_mb:  # only checkpoint_disk_full asks it, refused before (CheckpointFill)
            raise UnsupportedVerb(
                f"the {BACKEND} backend cannot give the checkpoint store a size limit (checkpoint_disk_full) yet",
                hint="docs/backends.md lists what each backend serves; run this scenario with --backend docker",
            )
        manager_host = require_manager(self.manager)
        if self.engines is None:
            self.engines = NodeEngines.from_env(manager_host, manager_client=self.manager)
        for image in {*self.spec.images, self.spec.proxy_image}:
            require_image(self.manager, image)
        listed = [Node.of(n.attrs) for n in self.manager.nodes.list()]
        self.nodes = {n.hostname: n for n in listed}
        with _PLACING:  # runs of this process (`-j N`) place one at a time, each seeing the others
            self.placement = place(listed, self.num_slots, busy=self._workers_per_node())
            _PLACED[self.run_id] = self.placement.workers
        self.network = self.manager.networks.create(**specs.overlay(self.network_name, self.labels))
        self._hold_network()
        self._make_store_folder()
        self._start_proxy()

    def _workers_per_node(self) -> dict[str, int]:
        """How many workers of this project's other runs each node holds: the swarm's running
        worker tasks (any process's runs), and the placements this process made for runs whose
        workers are not up yet (runs that start together under `chaos run -j N`), so that runs
        side by side spread over the nodes (placement.place)."""
        per_run: dict[str, list[str]] = {}
        wanted = [f"{LABEL_PROJECT}={PROJECT}", f"{specs.LABEL_ROLE}=worker"]
        for service in self.manager.services.list(filters={"label": wanted}):
            task = current(service)
            host = self._hostname(task.node_id) if task is not None and not task.ended else ""
            run = ((service.attrs.get("Spec") or {}).get("Labels") or {}).get(LABEL_RUN, "")
            if host:
                per_run.setdefault(run, []).append(host)
        for run, hosts in _PLACED.items():
            per_run.setdefault(run, list(hosts))  # placed, its workers not (all) up yet
        counts: dict[str, int] = {}
        for run, hosts in per_run.items():
            if run != self.run_id:
                for host in hosts:
                    counts[host] = counts.get(host, 0) + 1
        return counts

    def _hold_network(self) -> None:
        """A keeper task on every worker's node but the proxy's, so that the node never drops the
        overlay between a worker's generations (specs.keeper_service)."""
        for node in sorted(set(self.placement.workers) - {self.placement.proxy}):
            self.manager.services.create(
                **specs.keeper_service(
                    name=f"{self.prefix}-keeper-{node}",
                    image=self.spec.images[0],
                    network=self.network_name,
                    node=node,
                    labels=self.labels,
                )
            )

    def _make_store_folder(self) -> None:
        run_once(
            self.manager,
            specs.helper_service(
                name=f"{self.prefix}-store-mkdir",
                image=self.spec.images[0],
                code=specs.MAKE_FOLDER,
                args=[f"{specs.STORE_IN_HELPER}/{self.prefix}"],
                store_root=self.store_root,
                labels=self.labels,
                node=self.placement.proxy,
            ),
            timeout=HELPER_TIMEOUT_S,
            what=f"making the run's checkpoint folder {self.store_dir}",
            hint=f"every node must mount the shared store at {self.store_root} ({STORE_ENV} names another "
            "folder); `chaos swarm up` mounts it on the local swarm",
        )
        self._store_made = True

    def _start_proxy(self) -> None:
        node = self.placement.proxy
        self.proxy_service = self.manager.services.create(
            **specs.proxy_service(
                name=f"{self.prefix}-proxy",
                image=self.spec.proxy_image,
                network=self.network_name,
                node=node,
                labels=self.labels,
            )
        )
        task = wait_task(
            self.proxy_service,
            lambda t: t.state == "running" and t.published(PROXY_API_PORT) is not None,
            timeout=TASK_START_TIMEOUT_S,
            what=f"the proxy's task on {node}",
            hint=f"`docker service ps {self.prefix}-proxy --no-trunc` on the manager shows why; the image "
            f"{self.spec.proxy_image} must be on {node}",
        )
        self.proxy_container = self.engines.client(node).containers.get(task.container_id)
        self.proxy_log = LogFollower(self.proxy_container, PROXY_ALIAS, self.events)
        self.proxy_log.start()
        host = self._node_address(node)
        port = task.published(PROXY_API_PORT)
        api = f"http://{host}:{port}"
        wait_until(
            lambda: requests.get(f"{api}/version", timeout=1).ok,
            timeout=PROXY_API_TIMEOUT_S,
            what=f"the proxy API at {api} (published on {node})",
            containers=[self.proxy_container],
            hint="the runner reaches the proxy at its node's advertised address; a firewall between them, "
            "or an image that does not serve the Toxiproxy API on 8474, stops it",
        )
        self.proxies = ProxyClient(host, port)

    def _node_address(self, hostname: str) -> str:
        addr = self.nodes[hostname].addr if hostname in self.nodes else ""
        if addr and addr not in ("0.0.0.0", "127.0.0.1"):
            return addr
        return "127.0.0.1"  # a one-node swarm on this host

    def start_workers(self) -> None:
        for i in range(self.num_slots):
            self._start_worker(i, generation=0)
        wait_until(
            self._populate_routes,
            timeout=ROUTES_TIMEOUT_S,
            what="the proxy to accept routes to the workers",
            containers=[c for c in [self.proxy_container, *(w.container for w in self.workers.values())] if c],
            hint="a worker whose task did not start cannot be routed to: " + self._states(),
        )

    def _populate_routes(self) -> bool:
        existing = set(self.proxies.names())
        missing = [r for r in self.topology.routes() if r.name not in existing]
        self.proxies.populate(missing)
        return set(self.proxies.names()) >= {r.name for r in self.topology.routes()}

    def wait_started(self, timeout: float | None = None) -> None:
        names = {self.worker_name(i) for i in range(self.num_slots)}
        if self.spec.launch.reports_start:
            started = lambda evs: {e.source for e in evs if e.kind == "start"} >= names  # noqa: E731
        else:
            started = lambda evs: all(w.attached.is_set() for w in self.workers.values())  # noqa: E731
        if not self.events.wait_for(started, timeout or self.spec.bring_up_timeout_s):
            raise InfrastructureError(
                "workers did not start in time: " + self._states(),
                hint="a task rejected or failed at once usually means an image missing on its node "
                "(`chaos swarm status` lists each node's images) or a broken image",
            )

    def _states(self) -> str:
        out = []
        for i, w in sorted(self.workers.items()):
            task = current(w.service)
            tail = " | ".join(w.follower.tail[-3:]) if w.follower else ""
            out.append(
                f"{self.worker_name(i)} on {w.node}: {task.describe() if task else 'no task'}"
                + (f" ({w.problem})" if w.problem else "")
                + (f"; last lines: {tail}" if tail else "")
            )
        return "; ".join(out) or "no worker created"

    def teardown(self) -> None:
        """Remove every service, the overlay and the store folder of this run. Never raises;
        Ctrl-C or SIGTERM during it is held back until it is done. What could not be removed
        is recorded as a notice (it reaches the report)."""
        with interrupts.deferred():
            with self._lock:
                self._closing = True
            with _PLACING:
                _PLACED.pop(self.run_id, None)
            left = self._close_netns_helpers()
            for link in list(self._links):  # a heal that never came (the run failed first)
                try:
                    self.restore_link(link)
                except Exception as exc:  # noqa: BLE001 - teardown never raises
                    left.append(f"{link.describe()} ({_first_line(exc)})")
            # The containers first, with SIGKILL (a worker hung in TF ignores SIGTERM, and a
            # service's removal would wait out its stop grace period).
            for w in list(self.workers.values()):
                if w.container is not None:
                    _quietly(docker_api.ignore_gone, w.container.remove, force=True)
            left += self._remove_services()
            left += self._clear_restored_nodes()
            for w in list(self.workers.values()):
                for thread in (w.follower, w.watcher):
                    if thread is not None and thread is not threading.current_thread():
                        thread.join(timeout=2)
            if self._store_made:
                try:
                    self._remove_store_folder()
                except Exception as exc:  # noqa: BLE001 - teardown never raises
                    left.append(f"the store folder {self.store_dir} ({_first_line(exc)})")
            left += self._remove_networks()
            if self.engines is not None:
                self.engines.close()
        if left:
            self.record(
                NoticeEvent(
                    t=time.time(),
                    source=RUNNER,
                    topic="teardown_incomplete",
                    text=f"teardown left {'; '.join(left)} on the swarm (label {LABEL_RUN}={self.run_id})",
                )
            )

    def _remove_services(self) -> list[str]:
        try:
            services = self.manager.services.list(filters={"label": f"{LABEL_RUN}={self.run_id}"})
        except Exception as exc:  # noqa: BLE001
            return [f"its services (cannot list them: {_first_line(exc)})"]
        left = []
        for service in services:
            try:
                service.remove()
            except Exception as exc:  # noqa: BLE001
                if getattr(getattr(exc, "response", None), "status_code", None) != 404:
                    left.append(f"service {service.name} ({_first_line(exc)})")
        return left

    def _remove_store_folder(self) -> None:
        run_once(
            self.manager,
            specs.helper_service(
                name=f"{self.prefix}-store-rm",
                image=self.spec.images[0],
                code=specs.REMOVE_FOLDER,
                args=[f"{specs.STORE_IN_HELPER}/{self.prefix}"],
                store_root=self.store_root,
                labels=self.labels,
                node=self.placement.proxy if self.placement else None,
            ),
            timeout=HELPER_TIMEOUT_S,
            what=f"removing {self.store_dir}",
            hint="",
        )

    def _remove_networks(self) -> list[str]:
        """The overlay goes once no task is attached (the swarm removes tasks' containers in the background)."""
        deadline = time.monotonic() + NETWORK_REMOVE_S
        why = ""
        while True:
            try:
                networks = self.manager.networks.list(filters={"label": f"{LABEL_RUN}={self.run_id}"})
            except Exception as exc:  # noqa: BLE001
                return [f"its network (cannot list: {_first_line(exc)})"]
            if not networks:
                return []
            for network in networks:
                try:
                    network.remove()
                except Exception as exc:  # noqa: BLE001 - still in use: try again
                    why = _first_line(exc)
            if time.monotonic() > deadline:
                return [f"network {n.name} ({why})" for n in networks]
            time.sleep(0.5)

    # --- workers ---------------------------------------------------------

    def _start_worker(self, index: int, generation: int) -> None:
        name = self.worker_name(index)
        node = self.placement.workers[index]
        image, env = self.overrides.environment(index, self.tf_config(index))
        launch = self.spec.launch
        service = self.manager.services.create(
            **specs.worker_service(
                name=f"{self.prefix}-{name}-g{generation}",
                worker=name,
                index=index,
                image=image,
                env=env,
                args=list(launch.command) if launch.command else None,
                network=self.network_name,
                node=node,
                store_dir=self.store_dir,
                checkpoint_dir=launch.checkpoint_dir,
                labels=self.labels,
                limits=self.spec.resources.get(index),
                stop_grace_s=STOP_GRACE_S,
                restart_policy=self._restart_policy(),
            )
        )
        worker = _Worker(index, generation, service, node)
        worker.watcher = threading.Thread(target=self._follow, args=(worker,), name=f"task-{name}", daemon=True)
        self.workers[index] = worker
        worker.watcher.start()

    def _restart_policy(self):
        """The orchestrator's own (cluster.recovery.by: orchestrator), or None: the runner restarts."""
        if self.spec.restarted_by != "orchestrator" or self.spec.max_restarts < 1:
            return None  # (Swarm reads max_attempts 0 as "no limit")
        return specs.orchestrator_restarts(self.spec.max_restarts)

    def _follow(self, worker: _Worker) -> None:
        """Follow the worker's task, and each task the orchestrator's restart policy starts after it."""
        while worker is not None:
            code = self._follow_task(worker)
            worker = self._next_task(worker, code)

    def _next_task(self, old: _Worker, exit_code: int | None) -> _Worker | None:
        """The task Swarm starts after ``old`` exited with a failure (restart policy on-failure), as the
        worker's next generation, its restart recorded; None when none is due or none came."""
        index = old.index
        if (
            self._restart_policy() is None
            or not exit_code
            or old.replaced
            or self._closing
            or self._orchestrated.get(index, 0) >= self.spec.max_restarts
            or old.task is None
        ):
            return None
        name = self.worker_name(index)
        task = wait_next_task(
            old.service, old.task.id, timeout=TASK_START_TIMEOUT_S, stop=lambda: self._closing or old.replaced
        )
        if task is None:
            if not (self._closing or old.replaced):
                self.record(
                    NoticeEvent(
                        t=time.time(),
                        source=RUNNER,
                        topic="task_failed",
                        text=(
                            f"{name} exited {exit_code} on {old.node}, and the orchestrator started no task after it "
                            f"within {TASK_START_TIMEOUT_S:g} s: {_describe(current(old.service))}"
                        ),
                    )
                )
            return None
        node = self._hostname(task.node_id) or old.node
        new = _Worker(index, old.generation + 1, old.service, node, watcher=old.watcher)
        with self._lock:
            if old.replaced or self._closing:
                return None
            self.workers[index] = new
        self.record(
            RestartEvent(
                t=time.time(),
                source=name,
                by="orchestrator",
                reason=(
                    f"{name} exited {exit_code}; Swarm's restart policy (on-failure) started task {task.id[:12]} on "
                    f"{node}" + ("" if node == old.node else f" (was on {old.node})")
                ),
            )
        )
        with self._lock:  # counted once recorded: await_restarts returns after the event is in the history
            self._orchestrated[index] = self._orchestrated.get(index, 0) + 1
        return new

    def _hostname(self, node_id: str) -> str:
        return next((n.hostname for n in self.nodes.values() if n.id and n.id == node_id), "")

    def _follow_task(self, worker: _Worker) -> int | None:
        """Wait for the task's container on its node, then follow its log and record its exit (returned;
        None when it had no container, or its exit was not the engine's to say)."""
        name = self.worker_name(worker.index)
        try:
            task = wait_task(
                worker.service,
                has_container,
                timeout=TASK_START_TIMEOUT_S,
                what=f"{name}'s task on {worker.node}",
                hint="",
                stop=lambda: self._closing,
            )
            worker.task = task
            worker.container = self.engines.client(worker.node).containers.get(task.container_id)
        except Exception as exc:  # noqa: BLE001 - rejected, failed, or teardown: said in wait_started's error
            worker.problem = _first_line(exc)
            worker.attached.set()
            if not self._closing:
                self.record(
                    NoticeEvent(
                        t=time.time(),
                        source=RUNNER,
                        topic="task_failed",
                        text=f"{name} on {worker.node}: {worker.problem}",
                    )
                )
            return None
        follower = LogFollower(worker.container, name, self.events, self.spec.launch.parser(name))
        follower.start()
        worker.follower = follower  # published started: a restart or teardown may join it at once
        worker.attached.set()
        self.record(
            AddressEvent(
                t=time.time(),
                source=RUNNER,
                task=name,
                address=task.addresses.get(self.network_name, ""),
                node=worker.node,
            )
        )
        try:
            result = worker.container.wait()
            worker.container.reload()
            state = worker.container.attrs["State"]
        except Exception:  # noqa: BLE001 - removed during teardown, or its node lost (its exit said there)
            return None
        if self._out_of_use.get(worker.node) == "lost":
            return None
        if state.get("Error") and not self._closing:
            # The engine could not start the container (exit 128, no output): on one host
            # container.start() raises; a task starts in the background, so its error is said here.
            self.record(
                NoticeEvent(
                    t=time.time(),
                    source=RUNNER,
                    topic="task_failed",
                    text=f"{name} on {worker.node}: its container did not start: {state['Error']}",
                )
            )
        code = int(result.get("StatusCode", -1))
        self.events.append(
            ExitEvent(t=time.time(), source=name, exit_code=code, oom_killed=bool(state.get("OOMKilled")))
        )
        return code

    def container(self, index: int):
        """Worker ``index``'s current container (on its node's engine), once its task has one."""
        worker = self.workers[index]
        if not worker.attached.wait(ATTACH_WAIT_S) or worker.container is None:
            raise InfrastructureError(
                f"{self.worker_name(index)} has no container on {worker.node}: {worker.problem or 'not started yet'}",
                hint="fire the fault once the worker trains",
            )
        return worker.container

    def node_of(self, index: int) -> str:
        """The host name of the node worker ``index`` runs on."""
        return self.placement.workers[index]

    # --- the abilities ---------------------------------------------------

    def disconnect(self, index: int) -> None:
        """Cut the task's container off the run's overlay, through its node's engine (measured: the
        engine allows it on an attachable overlay)."""
        container = self.container(index)
        self._node_engine(index).api.disconnect_container_from_network(container.id, self.network_name, force=True)

    def reconnect(self, index: int) -> None:
        """Attach it again under its alias. Measured on the local swarm: the engine attaches it, but
        the alias attached so does not resolve on the other nodes, so the worker is reachable again
        only once restarted (a new task), which the partition scenarios do after the heal."""
        container = self.container(index)
        container.reload()
        if self.network_name not in (container.attrs.get("NetworkSettings") or {}).get("Networks", {}):
            # By name through the low-level API: a node with no other task on the overlay has
            # dropped its copy of it (no longer listed there), and attaches again through the manager.
            self._node_engine(index).api.connect_container_to_network(
                container.id, self.network_name, aliases=[self.worker_name(index)]
            )

    def lose_node(self, index: int) -> str:
        """Kill the node worker ``index`` runs on (the local swarm's node container). The workers
        on it die with it: their exit is recorded here, as no engine is left to report it."""
        node = self._node_beside_the_proxy(index, "losing")
        local = self._local_nodes()
        on_it = sorted(i for i, w in self.workers.items() if w.node == node)
        with self._lock:
            self._out_of_use[node] = "lost"
        local.kill(node)
        t = time.time()
        self.record(
            NoticeEvent(
                t=t,
                source=RUNNER,
                topic="node_lost",
                text=(
                    f"{node} lost (its engine killed): {', '.join(self.worker_name(i) for i in on_it)} killed with it "
                    "(exit 137 recorded at the kill: no engine is left to report it); the run places nothing on it again"
                ),
            )
        )
        for i in on_it:
            self.events.append(ExitEvent(t=t, source=self.worker_name(i), exit_code=137, oom_killed=False))
        return node

    def _close_netns_helpers(self) -> list[str]:
        """Remove every packet-fault helper this run started (each may be gone already): plain
        containers on the workers' nodes, which no service's removal takes with it. What could
        not be removed."""
        left = []
        for helper in self._netns_started:
            try:
                helper.close()
            except Exception as exc:  # noqa: BLE001 - teardown goes on
                left.append(f"network helper {helper.name} ({_first_line(exc)})")
        self._netns_started.clear()
        self._netns_ready.clear()
        return left

    def _local_nodes(self, doing: str | None = None):
        """The local swarm's node containers (chaos.backends.swarm.node_loss), or an error saying
        a real swarm's machines are out of this backend's reach (``doing``: what was asked)."""
        if self._node_loss is None:
            from chaos.backends.swarm.node_loss import LOSING, LocalNodeLoss

            self._node_loss = LocalNodeLoss.of(self.engines.manager if self.engines else None, doing=doing or LOSING)
        return self._node_loss

    def degrade_link(self, a: int, b: int, loss_percent: float) -> Link:
        """Drop ``loss_percent`` of the overlay's packets between the nodes of workers ``a`` and ``b``,
        both ways, in node ``a``'s namespace (chaos.backends.swarm.links): each still reaches every
        other node. Refused when the two share a node."""
        node, peer = self.workers[a].node, self.workers[b].node
        if node == peer:
            raise InfrastructureError(
                f"{self.worker_name(a)} and {self.worker_name(b)} both run on {node}: no link between nodes joins them",
                hint="bring the swarm up with a node per worker besides the proxy's (`chaos swarm up --nodes 3` "
                "for 2 workers)",
            )
        link = Link(node, peer, self.nodes[peer].addr, loss_percent, f"{self.prefix}-link-{uuid.uuid4().hex[:4]}")
        local = self._local_nodes("fail the link between two of its machines (node_link)")
        self._links.append(link)
        for argv in links.apply_commands(link):
            local.run(node, argv)
        self.record(
            NoticeEvent(
                t=time.time(),
                source=RUNNER,
                topic="link_degraded",
                text=(
                    f"{link.describe()}: {self.worker_name(a)} and {self.worker_name(b)} reach each other through it; "
                    "each node still reaches the others"
                ),
            )
        )
        return link

    def restore_link(self, link: Link) -> None:
        """Remove the link's rules (each may be gone already); the notice says how many packets they dropped."""
        if link not in self._links:
            return
        self._links.remove(link)
        local = self._local_nodes()
        try:
            dropped = links.dropped_packets(local.run(link.node, links.COUNT_COMMAND), link.tag)
        except InfrastructureError:
            dropped = {}
        for argv in links.undo_commands(link):
            try:
                local.run(link.node, argv)
            except InfrastructureError:
                pass  # gone already (its node restarted)
        counted = (
            ", ".join(
                f"{n} {'to' if chain == 'OUTPUT' else 'from'} {link.peer}" for chain, n in sorted(dropped.items())
            )
            or "none counted"
        )
        self.record(
            NoticeEvent(
                t=time.time(),
                source=RUNNER,
                topic="link_restored",
                text=f"{link.describe()}, restored; packets dropped on {link.node}: {counted}",
            )
        )

    def _node_beside_the_proxy(self, index: int, doing: str) -> str:
        """Worker ``index``'s node, refused when it also runs the proxy (the run would end with it)."""
        node = self.workers[index].node
        if node == self.placement.proxy:
            raise InfrastructureError(
                f"{self.worker_name(index)} runs on {node}, which also runs the proxy: {doing} it would end the run",
                hint="the proxy runs on a manager and workers go to worker nodes first: bring the swarm up with "
                "more nodes than workers (`chaos swarm up --nodes 3` for 2 workers)",
            )
        return node

    def drain_node(self, index: int) -> str:
        """Drain the node worker ``index`` runs on, as an operator does before maintenance
        (``docker node update --availability drain``): Swarm stops its tasks (SIGTERM, SIGKILL
        after the stop grace) and places nothing there; the next start of the worker goes to
        another node."""
        node = self._node_beside_the_proxy(index, "draining")
        with self._lock:
            self._out_of_use[node] = "drained"
        self._set_availability(node, "drain")
        self.record(
            NoticeEvent(
                t=time.time(),
                source=RUNNER,
                topic="node_drained",
                text=(
                    f"{node} drained: Swarm stops {', '.join(self.worker_name(i) for i, w in sorted(self.workers.items()) if w.node == node)} "
                    "there; the run places nothing on it again"
                ),
            )
        )
        return node

    def activate_node(self, node: str) -> None:
        """Make a drained node active again (``--availability active``)."""
        self._set_availability(node, "active")
        self.record(NoticeEvent(t=time.time(), source=RUNNER, topic="node_active", text=f"{node} active again"))

    def _set_availability(self, hostname: str, availability: str) -> None:
        for n in self.manager.nodes.list():
            if Node.of(n.attrs).hostname == hostname:
                n.update({**n.attrs["Spec"], "Availability": availability})
                return
        raise InfrastructureError(f"the swarm has no node {hostname!r} (`docker node ls` lists them)")

    def restore_node(self, node: str) -> None:
        """Start a lost node again, in the background: its engine takes seconds to rejoin, and the
        run goes on meanwhile, as an orchestrator reschedules without waiting for the node. This
        run still places nothing on it; teardown waits for it and clears what the run left there."""
        thread = threading.Thread(target=self._restore, args=(node,), name=f"restore-{node}", daemon=True)
        self._restoring.append((node, thread))
        thread.start()

    def _restore(self, node: str) -> None:
        try:
            self._node_loss.restart(node)
        except Exception as exc:  # noqa: BLE001 - said in the report; teardown goes on
            self._not_restored.add(node)
            self.record(
                NoticeEvent(
                    t=time.time(),
                    source=RUNNER,
                    topic="node_restore_failed",
                    text=f"{node} did not come back: {_first_line(exc)}",
                )
            )
            return
        self.record(
            NoticeEvent(
                t=time.time(), source=RUNNER, topic="node_restored", text=f"{node} back: its engine rejoined the swarm"
            )
        )

    def _clear_restored_nodes(self) -> list[str]:
        """Wait for the nodes being restored, then remove this run's containers they still hold
        (a lost task's container comes back with its node, exited)."""
        left = []
        for node, thread in self._restoring:
            thread.join(timeout=NODE_RESTORE_WAIT_S)
            if thread.is_alive():
                left.append(f"node {node} (still coming back after {NODE_RESTORE_WAIT_S:.0f} s)")
                continue
            if node in self._not_restored:
                continue  # said as node_restore_failed; nothing of it can be reached
            try:
                client = self.engines.client(node)
                for c in client.containers.list(all=True, filters={"label": f"{LABEL_RUN}={self.run_id}"}):
                    _quietly(docker_api.ignore_gone, c.remove, force=True)
            except Exception as exc:  # noqa: BLE001 - teardown never raises
                left.append(f"containers on node {node} ({_first_line(exc)})")
        return left

    def _move(self, index: int) -> None:
        """Place worker ``index``, whose node was lost or drained, on another node."""
        old = self.placement.workers[index]
        nodes = [Node.of(n.attrs) for n in self.manager.nodes.list()]
        node = another_node(nodes, self.placement, index, self._out_of_use)
        self.placement = moved(self.placement, index, node)
        with _PLACING:
            _PLACED[self.run_id] = self.placement.workers
        self.record(
            NoticeEvent(
                t=time.time(),
                source=RUNNER,
                topic="rescheduled",
                text=f"{self.worker_name(index)} moves from {old} ({self._out_of_use[old]}) to {node}",
            )
        )

    def _node_engine(self, index: int):
        return self.engines.client(self.workers[index].node)

    def _engine(self, index: int):
        return self._node_engine(index)  # a packet fault's helper joins the task on its node

    def _limits(self, index: int) -> dict[str, Any]:
        return docker_limits.at_create(self.spec.resources.get(index))

    def is_running(self, index: int) -> bool:
        worker = self.workers.get(index)
        return worker is not None and docker_api.is_running(worker.container)

    def _require_image(self, image: str) -> None:
        require_image(self.manager, image)

    def restart(self, indices: list[int], reason: str, grace_s: float = STOP_GRACE_S) -> None:
        """Stop each (SIGTERM, ``grace_s``, SIGKILL) with its exit recorded, remove its service,
        and start the next generation on the same node, or on another when its node was lost."""
        for i in indices:
            with self._lock:
                old = self.workers[i]
                old.replaced = True  # its exit is the runner's doing: no orchestrator restart awaited
            lost = self._out_of_use.get(old.node) == "lost"  # nothing is left to stop
            if not lost and old.attached.wait(10) and old.container is not None:
                if old.watcher is not None and old.watcher.is_alive():  # still running: the stop's from here on
                    self.record(StopEvent(t=time.time(), source=self.worker_name(i), reason=reason))
                docker_api.stop(old.container, grace_s=grace_s)
            if old.watcher is not None:
                old.watcher.join(timeout=10)
            if old.follower is not None:
                old.follower.join(timeout=5)
            _quietly(old.service.remove)
        for i in indices:
            if self.workers[i].node in self._out_of_use:
                self._move(i)
            self._start_worker(i, generation=self.workers[i].generation + 1)
            self.record(RestartEvent(t=time.time(), source=self.worker_name(i), reason=reason))

    def await_restarts(self, indices: list[int], reason: str, timeout_s: float = TASK_START_TIMEOUT_S) -> list[int]:
        """The workers Swarm's restart policy started again since the last call (each recorded as a
        restart by the orchestrator when its task's watcher noticed it); a worker whose watcher ended
        without one (it exited 0, its restarts ran out, or no task came) is left out at once."""
        deadline = time.monotonic() + timeout_s
        pending, restarted = set(indices), []
        while pending:
            for i in sorted(pending):
                with self._lock:
                    new = self._orchestrated.get(i, 0) > self._awaited.get(i, 0)
                    if new:
                        self._awaited[i] = self._orchestrated[i]
                    watcher = self.workers[i].watcher
                if new:
                    restarted.append(i)
                    pending.discard(i)
                elif watcher is None or not watcher.is_alive():
                    pending.discard(i)
            if pending and time.monotonic() > deadline:
                break
            if pending:
                time.sleep(0.1)
        return sorted(restarted)

    def unused_address(self) -> str:
        network = self.manager.networks.get(self.network.id)
        subnet = network.attrs["IPAM"]["Config"][0]["Subnet"]
        return str(ipaddress.ip_network(subnet)[-2])


def require_image(manager, image: str) -> None:
    """The image on the manager's engine (the local swarm loads every image into every node)."""
    try:
        manager.images.get(image)
    except Exception:  # noqa: BLE001 - docker.errors.ImageNotFound
        raise InfrastructureError(
            f"image {image!r} is not on the swarm manager's engine",
            hint=f"load it into every node (`chaos swarm up --image {image}` on the local swarm), or push it "
            "to a registry the nodes pull from",
        ) from None


def _describe(task: Task | None) -> str:
    return task.describe() if task else "no task"


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "explanation", None) or exc)
    return (text.splitlines() or [type(exc).__name__])[0][:200]


def _quietly(fn, *args, **kwargs) -> None:
    try:
        fn(*args, **kwargs)
    except Exception:  # noqa: BLE001 - teardown and restarts go on
        pass
