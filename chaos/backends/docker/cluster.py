"""The single-host Docker backend's cluster: TF worker containers behind the proxy, on a private network.

Everything created carries the project label and this run's id, and is torn
down in ``__exit__`` (also on failure and Ctrl-C); ``chaos clean`` removes what
a crashed run left. A restarted worker is a *new* container (generation g+1)
with the same config and network alias, the way an orchestrator replaces a pod;
its predecessor's exit is recorded first.
"""

from __future__ import annotations

import inspect
import ipaddress
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import requests
from docker.errors import APIError, ContainerError

from chaos import LABEL_PROJECT, LABEL_RUN, PROJECT, interrupts
from chaos.backends import backup_files
from chaos.backends.abilities import (
    CheckpointDamage,
    CheckpointFill,
    CheckpointListing,
    CheckpointSnapshots,
    Freezing,
    NamespacesAhead,
    PacketNamespaces,
    Partitions,
    ProxyLinks,
    ResourceLimits,
    RestartsAhead,
    SpareAddresses,
    StorageWriteLimits,
    WorkerCommands,
    WorkerOverrides,
)
from chaos.backends.backup_files import BackupDamage, BackupFile
from chaos.backends.docker import api as docker_api
from chaos.backends.docker import limits as docker_limits
from chaos.backends.docker import venv_cache, volume_owner
from chaos.backends.docker.container_workers import ContainerWorkers
from chaos.backends.docker.engine_objects import Removal
from chaos.backends.docker.logs import LogFollower
from chaos.backends.docker.ownership import owner_labels
from chaos.backends.docker.runs import remove_run
from chaos.backends.docker.standby import ACTIVE_CPU_SHARES, GO_SIGNAL_NAME, Recipe, go_archive
from chaos.backends.docker.waits import container_report, wait_until
from chaos.backends.overrides import Overrides, WorkerOverride
from chaos.backends.proxy_client import ProxyClient
from chaos.backends.spec import Deployment, WriteLimit
from chaos.errors import InfrastructureError
from chaos.eventlog import EventLog
from chaos.events import RUNNER, AddressEvent, ExitEvent, NoticeEvent, RestartEvent, StopEvent
from chaos.images.engine import engine_address, published_on
from chaos.topology import PROXY_ALIAS, PROXY_API_PORT
from chaos.worker.control import CONTROL_DIR
from chaos.worker.settings import WorkerSettings

STOP_GRACE_S = 3  # a worker hung in TF ignores SIGTERM (FINDINGS.md): then SIGKILL


@dataclass
class _Standby:
    container: Any
    recipe: Recipe
    generation: int


@dataclass
class _Worker:
    index: int
    generation: int
    container: Any
    follower: LogFollower
    watcher: threading.Thread | None = None
    # The exit is recorded once, by the watcher or by the restart that replaces the container.
    exit_lock: threading.Lock = field(default_factory=threading.Lock)
    exit_recorded: bool = False


class DockerCluster(
    ContainerWorkers,
    # What one Docker host serves beyond chaos.backends.base.Cluster (chaos.backends.abilities):
    # no nodes to lose or link, and no orchestrator's restart policy (the runner restarts).
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
    CheckpointDamage,
    CheckpointSnapshots,
    CheckpointFill,
    StorageWriteLimits,
    RestartsAhead,
):
    """Context manager: ``with DockerCluster(spec) as cluster: cluster.start_workers()``."""

    def __init__(self, spec: Deployment, *, events: EventLog | None = None, client=None) -> None:
        self.spec = spec
        self.topology = spec.shape
        self.num_slots = spec.num_slots
        self.run_id = uuid.uuid4().hex[:8]
        self.prefix = f"{PROJECT}-{self.run_id}"
        self.events = events or EventLog()
        self.client = client or docker_api.connect()
        # The owner lets `chaos clean` tell this live run from a crashed one.
        self.labels = {LABEL_PROJECT: PROJECT, LABEL_RUN: self.run_id, **owner_labels()}
        self.network = None
        self.volume = None
        self.proxy_container = None
        self.proxy_log: LogFollower | None = None
        self.proxies: ProxyClient | None = None
        self.workers: dict[int, _Worker] = {}
        # Per worker index, per owner (a fault's name): applied at the next create.
        self.overrides = Overrides(spec)
        self._command_seq = 0
        self._lock = threading.Lock()
        # Per worker index: its next container, made ahead (spec.standby).
        self.standbys: dict[int, _Standby] = {}
        self._standby_makers: list[threading.Thread] = []
        self._closing = False
        self._restarts_expected = True
        self._venv_wanted = venv_cache.wanted(self.client)
        self._venvs: dict[str, str | None] = {}  # image -> its venv volume (None: run as it is)
        self._venv_lock = threading.Lock()
        self._netns_ready: dict[int, list] = {}  # worker index -> helpers started ahead (netns_ahead)
        self._netns_started: list = []  # every helper this run started (they carry its labels)
        self._write_limits_ok: set[str] = set()  # devices the engine was seen to throttle (_check_write_limit)

    # --- lifecycle -------------------------------------------------------

    def start_infrastructure(self) -> None:
        """Network, shared backup volume and the proxy (routes come with the workers)."""
        for image in {*self.spec.images, self.spec.proxy_image}:
            docker_api.require_image(self.client, image)
        self.network = self.client.networks.create(
            self.prefix, driver="bridge", labels=self.labels, check_duplicate=True
        )
        self.volume = self._create_backup_volume()
        self._prepare_backup_volume()
        self.proxy_container = docker_api.create_container(
            self.client,
            self.spec.proxy_image,
            name=f"{self.prefix}-proxy",
            labels={**self.labels, "io.tfchaos.role": "proxy"},
            network=self.network.name,
            aliases=[PROXY_ALIAS],
            # On the engine's host: loopback for a local engine, the address DOCKER_HOST names otherwise.
            ports={PROXY_API_PORT: (published_on()[0], None)},
        )
        self.proxy_container.start()
        # The proxy's own log (routes created, upstreams it could not reach) goes
        # into the run's history and the report folder beside the workers' logs.
        self.proxy_log = LogFollower(self.proxy_container, PROXY_ALIAS, self.events)
        self.proxy_log.start()
        port = docker_api.host_port(self.proxy_container, PROXY_API_PORT)
        api_host = published_on()[1]
        api = f"http://{api_host}:{port}"
        wait_until(
            lambda: requests.get(f"{api}/version", timeout=1).ok,
            timeout=20,
            what=f"the proxy API at {api}",
            containers=[self.proxy_container],
            hint=(
                "check the proxy image with `chaos images status`; its log is above"
                if self.spec.proxy_image.startswith(f"{PROJECT}/")
                else f"{self.spec.proxy_image} must serve the Toxiproxy API on 0.0.0.0:{PROXY_API_PORT}; its log is above"
            ),
        )
        self.proxies = ProxyClient(api_host, port)
        for image in {*self.spec.images, *self.spec.image_map.values()}:
            self._venv_volumes(image)  # a first fill takes ~20 s: now, not in a measured restart
        self._make_standbys(list(range(self.num_slots)))  # generation 0, importing while the run prepares

    def _create_backup_volume(self):
        if not self.spec.backup_volume_mb:
            return self.client.volumes.create(f"{self.prefix}-backup", labels=self.labels)
        # A size-limited volume: tmpfs. Docker mounts a tmpfs volume afresh
        # whenever no container holds it (its files gone, measured), and every
        # worker is stopped at a restart: a keeper container holds it for the run.
        volume = self.client.volumes.create(
            f"{self.prefix}-backup",
            labels=self.labels,
            driver="local",
            driver_opts={"type": "tmpfs", "device": "tmpfs", "o": f"size={self.spec.backup_volume_mb}m"},
        )
        self.client.containers.run(
            self.spec.images[0],
            entrypoint=["sleep", "infinity"],
            command=[],
            volumes={volume.name: {"bind": "/backup-keeper", "mode": "rw"}},
            labels={**self.labels, "io.tfchaos.role": "helper"},
            name=f"{self.prefix}-backup-keeper",
            network_disabled=True,
            detach=True,
        )
        return volume

    def _prepare_backup_volume(self) -> dict[str, Any]:
        return prepare_checkpoint_volume(
            self.client,
            self.volume.name,
            self.spec.images,
            self.spec.launch.checkpoint_dir,
            labels={**self.labels, "io.tfchaos.role": "helper"},
            name=f"{self.prefix}-volume-owner",
        )

    def start_workers(self) -> None:
        """Start every worker, then route the proxy to them.

        Routes are created once the workers' names resolve on the network (the
        proxy rejects an unresolvable upstream). TF needs seconds to import
        before it contacts a peer, so a fault injected right after this call
        (``at: bring_up``) is in place before any training traffic.
        """
        for i in range(self.num_slots):
            self._start_worker(i, generation=0)
        self._make_standbys(list(range(self.num_slots)))
        wait_until(
            self._populate_routes,
            timeout=20,
            what="the proxy to accept routes to the workers",
            containers=[self.proxy_container] + [w.container for w in self.workers.values()],
            hint="a worker that exits at once cannot be routed to; see its log above",
        )

    def _populate_routes(self) -> bool:
        existing = set(self.proxies.names())
        missing = [r for r in self.topology.routes() if r.name not in existing]
        self.proxies.populate(missing)
        # Done only when the proxy lists every route (a client that answered
        # without creating one must not pass for a cluster whose port is closed).
        return set(self.proxies.names()) >= {r.name for r in self.topology.routes()}

    def wait_started(self, timeout: float | None = None) -> None:
        """Wait until every worker printed its ``start`` event (TF imported);
        for a workload that sends none, until every container runs or ran."""
        names = {self.worker_name(i) for i in range(self.num_slots)}
        if self.spec.launch.reports_start:

            def started(evs):
                return {e.source for e in evs if e.kind == "start"} >= names
        else:

            def started(evs):
                return all(self._has_run(i) for i in range(self.num_slots))

        if not self.events.wait_for(started, timeout or self.spec.bring_up_timeout_s):
            raise InfrastructureError(
                "workers did not start in time\n"
                + "\n".join(container_report(w.container) for w in self.workers.values()),
                hint="a worker that exits at once usually means a broken image: "
                "run `chaos images build` and check the log above",
            )

    def _has_run(self, index: int) -> bool:
        container = self.workers[index].container
        try:
            container.reload()
        except Exception:  # noqa: BLE001 - gone: it ran
            return True
        return container.status in ("running", "exited", "dead", "paused")

    def teardown(self) -> Removal:
        """Remove everything labelled with this run. Safe to call twice; never
        raises. Ctrl-C or SIGTERM during it is held back until it is done.

        What could not be removed is recorded as a notice (it reaches the
        report) and left for ``chaos clean``.
        """
        with interrupts.deferred():
            with self._lock:
                self._closing = True  # no standby is made from here on
            for maker in self._standby_makers:
                maker.join()
            removal = remove_run(self.client, self.run_id)
            for w in self.workers.values():
                w.follower.join(timeout=2)
                w.watcher.join(timeout=2)
        if not removal.complete:
            left = "; ".join(f"{o.describe()} ({why})" for o, why in removal.left)
            self.record(
                NoticeEvent(
                    t=time.time(),
                    source=RUNNER,
                    topic="teardown_incomplete",
                    text=f"teardown left {left}; `chaos clean --run {self.run_id}` removes it",
                )
            )
        return removal

    # --- ClusterControl and the abilities ------------------------------

    def container(self, index: int):
        return self.workers[index].container

    def disconnect(self, index: int) -> None:
        self.network.disconnect(self.container(index), force=True)

    def reconnect(self, index: int) -> None:
        container = self.container(index)
        container.reload()
        if self.network.name not in container.attrs["NetworkSettings"]["Networks"]:
            self.network.connect(container, aliases=[self.worker_name(index)])

    def _engine(self, index: int):
        return self.client

    def is_running(self, index: int) -> bool:
        return docker_api.is_running(self.container(index))

    def _require_image(self, image: str) -> None:
        docker_api.require_image(self.client, image)

    def limit_writes(self, index: int, owner: str, limit: WriteLimit) -> None:
        """Docker sets a device's write limits only when it creates a container: from the next (re)start on."""
        self._check_write_limit(limit.device)
        self.overrides.set(index, owner, WorkerOverride(write_limit=limit))

    def _check_write_limit(self, device: str) -> None:
        """Whether the engine can throttle writes to ``device``, asked of it with a helper that has
        the limit, before any worker is created with it: an engine in a container (Docker in
        Docker, a swarm node) has no node of its host's disks and refuses every container with
        ``stat /dev/vda: no such file or directory``, which would otherwise break the run at the
        workers' restart. Asked once per run and device."""
        if device in self._write_limits_ok:
            return
        try:
            self.client.containers.run(
                self.spec.images[0],
                entrypoint=["true"],
                command=[],
                labels={**self.labels, "io.tfchaos.role": "helper"},
                name=f"{self.prefix}-blkio-{uuid.uuid4().hex[:6]}",
                network_disabled=True,
                device_write_bps=[{"Path": device, "Rate": 1 << 40}],
                remove=True,
            )
        except (ContainerError, APIError) as exc:
            explanation = getattr(exc, "explanation", None) or str(exc)
            raise InfrastructureError(
                f"the Docker engine at {engine_address()[0]} cannot limit writes to {device} "
                f"(slow_checkpoint_storage): {explanation}",
                hint="an engine in a container (Docker in Docker, a CI service, a swarm node) has no device "
                "node of its host's disks: run this fault on an engine that runs on the host itself, or give "
                "the fault a device: the engine has",
            ) from None
        self._write_limits_ok.add(device)

    def worker_config(self, index: int) -> tuple[str, WorkerSettings, dict[str, str]]:
        """The image, settings and extra environment worker ``index`` is created with."""
        return self.overrides.worker_config(index)

    def _limits(self, index: int) -> dict[str, Any]:
        """The container limits worker ``index`` is created with (the spec's, then the faults')."""
        limits = docker_limits.at_create(self.spec.resources.get(index))
        for write_limit in self.overrides.write_limits(index):
            limits.update(docker_limits.writes(write_limit))
        return limits

    def backup_device(self) -> str:
        # The device under the volume as the engine's kernel mounts it, read in a short-lived
        # helper on the engine (not this machine's mount table: the engine may be elsewhere).
        root = self.spec.launch.checkpoint_dir
        try:
            out = self.client.containers.run(
                self.spec.images[0],
                entrypoint=["python3", "-c", "print(open('/proc/self/mounts').read())"],
                command=[],
                volumes={self.volume.name: {"bind": root, "mode": "ro,nocopy"}},
                labels={**self.labels, "io.tfchaos.role": "helper"},
                name=f"{self.prefix}-mounts-{uuid.uuid4().hex[:6]}",
                network_disabled=True,
                remove=True,
                stdout=True,
                stderr=False,
            )
        except (ContainerError, APIError) as exc:
            raise InfrastructureError(
                f"could not read which device holds the backup volume on the engine: {exc}",
                hint="give the fault's device, e.g. device: /dev/vda (see `df` of Docker's "
                "data root on the engine's host)",
            ) from None
        device = device_under(out.decode(errors="replace"), root)
        if not device.startswith("/dev/"):
            raise InfrastructureError(
                f"cannot tell which block device holds the backup volume (mounted at {root} from "
                f"{device or 'nothing'}, on the engine at {engine_address()[0]})",
                hint="give the fault's device, e.g. device: /dev/vda (see `df` of Docker's data root on the engine's host)",
            )
        return device

    def cluster_config(self, index: int) -> str:
        """The TF_CONFIG text worker ``index`` is created with (a fault's, or the healthy one)."""
        return self.overrides.cluster_config(index, self.tf_config(index))

    def unused_address(self) -> str:
        """An address on the run's own network that no container holds (Docker
        hands out addresses from the bottom of the subnet; this is the top)."""
        self.network.reload()
        subnet = self.network.attrs["IPAM"]["Config"][0]["Subnet"]
        return str(ipaddress.ip_network(subnet)[-2])

    def restart(self, indices: list[int], reason: str, grace_s: float = STOP_GRACE_S) -> None:
        for i in indices:
            old = self.workers[i]
            if old.watcher.is_alive():  # still running: what it does from here on is this stop's
                self.record(StopEvent(t=time.time(), source=self.worker_name(i), reason=reason))
            docker_api.stop(old.container, grace_s=grace_s)
            old.watcher.join(timeout=10)
            if old.watcher.is_alive():
                # Its exit is this generation's: recorded now, before the new one starts (a watcher
                # slower than the join, on a loaded engine, recorded it in the next generation, whose
                # runner then saw its new workers as failed).
                try:
                    result = old.container.wait(timeout=30)
                except Exception:  # noqa: BLE001 - gone or unanswered: the watcher may still say it
                    result = None
                if result is not None:
                    self._record_exit(old, result)
            old.follower.join(timeout=5)
            docker_api.ignore_gone(old.container.remove, force=True, v=True)  # v: its anonymous volumes
        for i in indices:
            self._start_worker(i, generation=self.workers[i].generation + 1)
            self.record(RestartEvent(t=time.time(), source=self.worker_name(i), reason=reason))
        self._make_standbys(indices)

    def damage_backup(self, file: BackupFile, mode: BackupDamage) -> dict[str, Any]:
        return self._on_backup_volume(
            ["damage", file, mode],
            "fire corrupt_checkpoint after the first backup (e.g. at: {epoch: 2} with save_freq: epoch)",
        )

    def snapshot_backup(self, name: str) -> str:
        done = self._on_backup_volume(
            ["snapshot", name],
            "fire stale_checkpoint after the first backup (e.g. at: {epoch: 1} with save_freq: epoch)",
        )
        return done["path"]

    def fill_backup_volume(self, leave_bytes: int) -> dict[str, Any]:
        return self._on_backup_volume(["fill", str(leave_bytes)], "checkpoint_disk_full needs the backup volume")

    def clear_backup_fill(self) -> dict[str, Any]:
        return self._on_backup_volume(["clear"], "checkpoint_disk_full needs the backup volume")

    def _on_backup_volume(self, args: list[str], hint: str) -> dict[str, Any]:
        """Run ``chaos.backends.backup_files`` on the backup volume; its JSON answer."""
        # A short-lived helper on the volume, not an exec: the workers may
        # have exited (a restart is due) and need not have a shell.
        root = self.spec.launch.checkpoint_dir
        try:
            out = self.client.containers.run(
                self.spec.images[0],
                entrypoint=["python3", "-c", inspect.getsource(backup_files)],
                command=[args[0], root, *args[1:]],
                # nocopy: an empty volume would take the image directory's owner and mode.
                volumes={self.volume.name: {"bind": root, "mode": "rw,nocopy"}},
                labels={**self.labels, "io.tfchaos.role": "helper"},
                name=f"{self.prefix}-backup-{uuid.uuid4().hex[:6]}",
                network_disabled=True,
                remove=True,
                stdout=True,
                stderr=False,
            )
        except ContainerError as exc:
            why = (exc.stderr or b"").decode(errors="replace").strip()
            raise InfrastructureError(
                f"could not {args[0]} the backups under {root}: {why or exc}", hint=hint
            ) from None
        return json.loads(out.decode().strip().splitlines()[-1])

    # --- internals -------------------------------------------------------

    def _recipe(self, index: int) -> Recipe:
        """What worker ``index``'s next container is created with."""
        image, env = self.overrides.environment(index, self.tf_config(index))
        launch = self.spec.launch
        return Recipe.of(image, env, self._limits(index), list(launch.command) if launch.command else None)

    def _create(self, index: int, generation: int, recipe: Recipe, *, standby: bool):
        name = self.worker_name(index)
        role = "standby" if standby else "worker"
        return docker_api.create_container(
            self.client,
            recipe.image,
            name=f"{self.prefix}-{name}-g{generation}",
            labels={**self.labels, "io.tfchaos.role": role, "io.tfchaos.worker": str(index)},
            network=self.network.name,
            # A standby is made on the network (so it can join it at its go) under no alias,
            # and taken off it before it starts (_make_standby_containers).
            aliases=[] if standby else [name],
            environment=recipe.standby_env() if standby else {**dict(recipe.early_env), **dict(recipe.late_env)},
            volumes={self.volume.name: self.spec.launch.checkpoint_dir},
            readonly_volumes=self._venv_volumes(recipe.image),
            resources=recipe.standby_resources() if standby else recipe.resources,
            command=list(recipe.command) if recipe.command else None,
        )

    def _venv_volumes(self, image: str) -> dict[str, str]:
        """The image's /opt/venv as a read-only volume, where image reads are costly
        (chaos.backends.docker.venv_cache): the harness's images, and a job's built on ours."""
        if not self._venv_wanted:
            return {}
        with self._venv_lock:  # one fill per image; the standby makers ask from their own thread
            if image not in self._venvs:
                served = self.spec.launch.harness_settings or venv_cache.serves(self.client, image)
                self._venvs[image] = venv_cache.venv_volume(self.client, image) if served else None
        name = self._venvs[image]
        return {name: venv_cache.VENV_DIR} if name else {}

    def _start_worker(self, index: int, generation: int) -> None:
        name = self.worker_name(index)
        recipe = self._recipe(index)
        container = self._take_standby(index, generation, recipe)
        if container is None:
            container = self._create(index, generation, recipe, standby=False)
            container.start()
        follower = LogFollower(container, name, self.events, self.spec.launch.parser(name))
        worker = _Worker(index, generation, container, follower, None)
        worker.watcher = threading.Thread(target=self._watch_exit, args=(worker,), name=f"exit-{name}", daemon=True)
        follower.start()
        worker.watcher.start()
        self.workers[index] = worker
        self._record_address(container, name)

    # --- standbys (chaos.backends.docker.standby) ----------------------------------

    def expect_restarts(self, expected: bool) -> None:
        """Whether to make standbys after the next (re)start; the ones made already still serve it."""
        self._restarts_expected = expected

    def _drop_standbys(self) -> None:
        """No restart to come: the idle standbys go (they would only import TensorFlow for nothing)."""
        with self._lock:
            idle, self.standbys = list(self.standbys.values()), {}
        for standby in idle:
            docker_api.ignore_gone(standby.container.remove, force=True, v=True)

    def _make_standbys(self, indices: list[int]) -> None:
        """Make each worker's next container in the background (teardown waits for it)."""
        if not self._restarts_expected:
            self._drop_standbys()
            return
        if not self.spec.standby or not self.spec.launch.harness_settings:
            return  # a user's job has no standby mode
        due = {i: (self.workers[i].generation + 1 if i in self.workers else 0, self._recipe(i)) for i in indices}
        maker = threading.Thread(target=self._make_standby_containers, args=(due,), name="standbys", daemon=True)
        with self._lock:
            if self._closing:
                return
            self._standby_makers.append(maker)
        maker.start()

    def _make_standby_containers(self, due: dict[int, tuple[int, Recipe]]) -> None:
        for index, (generation, recipe) in due.items():
            with self._lock:
                if self._closing or index in self.standbys:
                    continue
                try:
                    container = self._create(index, generation, recipe, standby=True)
                    # Started off the network, joined only at its go: an address held now could
                    # be one a partitioned worker just freed (Docker hands out the lowest free
                    # address and derives the MAC from it), and the standby would answer the
                    # packets still sent to that worker with resets, which the proxy passes on
                    # as a closed connection instead of the partition's silence (docs/findings.md, 2026-12-08).
                    self.network.disconnect(container)
                    container.start()
                except Exception:  # noqa: BLE001 - no standby: the worker is made fresh when due
                    continue  # (one created but not started is the teardown's, by its label)
                self.standbys[index] = _Standby(container, recipe, generation)

    def _take_standby(self, index: int, generation: int, recipe: Recipe):
        """The standby of worker ``index``, told to go, if it is the container due; else None (and it is removed)."""
        for maker in list(self._standby_makers):
            maker.join()
        with self._lock:
            standby = self.standbys.pop(index, None)
        if standby is None:
            return None
        container = standby.container
        try:
            container.reload()
            usable = (
                standby.generation == generation and standby.recipe.serves(recipe) and container.status == "running"
            )
            if usable:
                name = self.worker_name(index)
                # Reachable as the worker first (it waited off the network), then full CPU weight, then go.
                self.network.connect(container, aliases=[name])
                container.update(cpu_shares=recipe.resources.get("cpu_shares", ACTIVE_CPU_SHARES))
                container.put_archive(CONTROL_DIR, go_archive(dict(recipe.late_env)))
                container.kill(signal=GO_SIGNAL_NAME)
                return container
        except Exception:  # noqa: BLE001 - gone or broken: a fresh container instead
            pass
        docker_api.ignore_gone(container.remove, force=True, v=True)
        return None

    def _record_address(self, container, name: str) -> None:
        """Say where the worker came up: the proxy names the hosts that reach a link."""
        try:
            container.reload()
            address = container.attrs["NetworkSettings"]["Networks"][self.network.name]["IPAddress"]
        except Exception:  # gone already, or not on the network: nothing to say
            return
        if address:
            self.record(AddressEvent(t=time.time(), source=RUNNER, task=name, address=address))

    def _watch_exit(self, worker: _Worker) -> None:
        try:
            result = worker.container.wait()
        except Exception:  # removed during teardown
            return
        self._record_exit(worker, result)

    def _record_exit(self, worker: _Worker, result: dict) -> None:
        """Record ``worker``'s exit (``result``: its container's wait answer) unless it was recorded."""
        with worker.exit_lock:
            if worker.exit_recorded:
                return
            try:
                worker.container.reload()
                oom = bool(worker.container.attrs["State"].get("OOMKilled"))
            except Exception:  # removed during teardown
                return
            worker.exit_recorded = True
            # Appended under the lock: a restart that found it recorded may then start the next generation.
            self.events.append(
                ExitEvent(
                    t=time.time(),
                    source=self.worker_name(worker.index),
                    exit_code=int(result.get("StatusCode", -1)),
                    oom_killed=oom,
                )
            )


def device_under(mounts: str, point: str) -> str:
    """The source of the mount at ``point`` in a /proc/mounts text ('' if none)."""
    found = [line.split()[0] for line in mounts.splitlines() if len(line.split()) > 1 and line.split()[1] == point]
    return found[-1] if found else ""


def prepare_checkpoint_volume(
    client, volume: str, images, root: str, *, labels: dict[str, str], name: str
) -> dict[str, Any]:
    """Make a checkpoint volume's root writable for the user the workers' images
    run as (chaos.backends.docker.volume_owner), before any worker mounts it: a
    short-lived root helper of the first image, labelled as given, removed
    whatever happens. Workers then mount the volume ``nocopy``."""
    users = {_image_user(client, image) for image in images}
    image = images[0]
    args = [root, next(iter(users))] + (["shared"] if len(users) > 1 else [])
    container = client.containers.create(
        image,
        entrypoint=["python3", "-c", inspect.getsource(volume_owner)],
        command=args,
        user="0",
        # No nocopy here: what the image has at checkpoint_dir is copied into
        # the new volume, as Docker does for a first mount.
        volumes={volume: {"bind": root, "mode": "rw"}},
        labels=labels,
        name=name,
        network_disabled=True,
    )
    try:
        container.start()
        code = int(container.wait().get("StatusCode", -1))
        out = container.logs(stdout=True, stderr=False).decode(errors="replace").strip()
        why = container.logs(stdout=False, stderr=True).decode(errors="replace").strip() or out
    except APIError as exc:  # e.g. no python3 in the image
        code, out, why = -1, "", str(exc.explanation or exc)
    finally:
        docker_api.ignore_gone(container.remove, force=True, v=True)
    if code != 0:
        raise InfrastructureError(
            f"could not make checkpoint_dir {root} writable for the user {image} runs as: "
            + (why.splitlines()[-1] if why else f"the helper exited {code}"),
            hint="the image needs python3 on its PATH, and its USER must be a user its /etc/passwd lists "
            "or a number (docs/workloads.md: the checkpoint volume)",
        )
    return json.loads(out.splitlines()[-1])


def _image_user(client, image: str) -> str:
    """The user an image runs as (its USER; empty: root)."""
    return (client.images.get(image).attrs.get("Config") or {}).get("User") or ""
