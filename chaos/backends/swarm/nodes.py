"""A multi-node Docker Swarm on one machine: N containers from the swarm node
image (chaos.images.swarm_node), each running its own Docker engine, joined
into one swarm (node 1 the manager) with an attachable overlay network, and
the project's images loaded into every node.

    with local_swarm(nodes=3, images=["tfchaos/worker:tf2.20"]) as swarm:
        manager = swarm.client(1)            # docker.DockerClient of node-1's engine
        os.environ["DOCKER_HOST"] = swarm.plan.docker_host(1)

Everything on the host engine (the nodes, their /var/lib/docker volumes, the
bridge network between them) carries the project label, the run id
``swarm-<name>`` and ``io.tfchaos.swarm=<name>``; what the inner engines hold
goes with the node volumes. ``down`` removes it all, and so does a failed or
interrupted ``up``.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from chaos import interrupts
from chaos.backends.docker.engine_objects import EngineObject, Removal, project_objects, remove_objects
from chaos.backends.docker.ownership import owner_labels
from chaos.backends.swarm.plan import (
    DEFAULT_NAME,
    FUSE_DEVICE,
    LABEL_NODE,
    LABEL_SWARM,
    STORE_IN_NODE,
    SWARM_PORT,
    SwarmPlan,
    check_name,
    check_nodes,
)
from chaos.errors import InfrastructureError
from chaos.images import engine
from chaos.images.engine import Progress, require_shared_host
from chaos.images.wheelhouse import cache_root

# Nothing leaves the node any more: what it sends (its own and the overlay's VXLAN packets:
# OUTPUT) and what its containers send (FORWARD). Gone with the node's network at its kill.
SILENCE_NODE = "iptables -I OUTPUT 1 -j DROP && iptables -I FORWARD 1 -j DROP"
ENGINE_START_TIMEOUT_S = 60.0
NODE_START_ATTEMPTS = 3  # a node restarted after a kill (node_lost)
NODES_READY_TIMEOUT_S = 60.0
CHUNK = 4 << 20
# One save streamed into every node at once, or one save per node in turn.
PARALLEL_LOAD = True


def _is_docker_error(exc: BaseException) -> bool:
    try:
        from docker.errors import DockerException
    except ImportError:
        return False
    import requests

    return isinstance(exc, (DockerException, requests.exceptions.RequestException))


def socket_root() -> str:
    return os.path.join(cache_root(), "swarm")


def make_plan(name: str = DEFAULT_NAME, nodes: int = 3, *, owned: bool = False) -> SwarmPlan:
    owner = tuple(sorted(owner_labels().items())) if owned else ()
    return SwarmPlan(check_name(name), check_nodes(nodes), socket_root(), owner)


def swarm_objects(client, name: str) -> list[EngineObject]:
    return project_objects(client, {LABEL_SWARM: name}, kinds=("container", "network", "volume"))


def swarm_names(client) -> list[str]:
    return sorted(
        {
            o.labels[LABEL_SWARM]
            for o in project_objects(client, keys=(LABEL_SWARM,), kinds=("container", "network", "volume"))
        }
    )


def require_images(client, images: list[str]) -> list:
    """The host's images to load into the nodes, or an error naming the missing one."""
    out = []
    for tag in images:
        image = engine.get_image(client, tag)
        if image is None:
            raise InfrastructureError(
                f"image {tag!r} is not on this Docker engine, so it cannot be loaded into the swarm's nodes",
                hint="build the project's images with `chaos images build` (see `chaos images status`), "
                "or name others with --image TAG (--no-images loads none)",
            )
        out.append(image)
    return out


@dataclass
class Timings:
    """Seconds each phase of ``up`` took (docs/backends.md quotes them)."""

    node_image: float = 0.0
    store: float = 0.0
    nodes_started: float = 0.0
    swarm_formed: float = 0.0
    images_loaded: float = 0.0
    per_image: dict[str, float] = field(default_factory=dict)

    def lines(self) -> list[str]:
        out = [
            f"  node image {self.node_image:.1f}s, store {self.store:.1f}s, engines up {self.nodes_started:.1f}s, "
            f"swarm formed {self.swarm_formed:.1f}s, images loaded {self.images_loaded:.1f}s"
        ]
        out += [f"    {tag}: {s:.1f}s into every node" for tag, s in self.per_image.items()]
        return out


class LocalSwarm:
    """A swarm of node containers on the host engine ``client``."""

    def __init__(self, client, plan: SwarmPlan, progress: Progress = engine.noop) -> None:
        self.host = client
        self.plan = plan
        self.progress = progress
        self.timings = Timings()
        self.store = False
        self.parallel_load = PARALLEL_LOAD
        self._clients: dict[int, object] = {}

    # --- reaching the nodes ------------------------------------------------------

    def client(self, i: int = 1):
        """A docker.DockerClient of node ``i``'s engine (through its socket on the host)."""
        if i not in self._clients:
            import docker

            self._clients[i] = docker.DockerClient(base_url=self.plan.docker_host(i), timeout=600)
        return self._clients[i]

    def node_ip(self, i: int) -> str:
        attrs = self.host.api.inspect_container(self.plan.node_container(i))
        return attrs["NetworkSettings"]["Networks"][self.plan.network]["IPAddress"]

    # --- up ----------------------------------------------------------------------

    def up(self, images: list[str], node_image: str | None = None, *, store: bool = True) -> LocalSwarm:
        """Bring the swarm up (``store``: with the shared checkpoint store mounted on
        every node); on any failure or Ctrl-C remove what was made, then raise."""
        plan = self.plan
        self.store = store
        require_shared_host(
            self.host,
            "a local swarm (`chaos swarm up`)",
            "its nodes' engine sockets and the store's keys are folders of this machine that "
            "the engine bind-mounts into the nodes",
        )
        if store and not os.path.exists(FUSE_DEVICE):
            raise InfrastructureError(
                f"the shared store needs FUSE and this machine has no {FUSE_DEVICE}",
                hint="load the fuse module, or bring the swarm up without the store (--no-store)",
            )
        if swarm_objects(self.host, plan.name):
            raise InfrastructureError(
                f"a swarm named {plan.name!r} exists already on this Docker engine",
                hint=f"`chaos swarm status --name {plan.name}` shows it, `chaos swarm down --name {plan.name}` "
                "removes it; or pick another --name",
            )
        host_images = require_images(self.host, images)
        try:
            t0 = time.monotonic()
            if node_image is None:
                from chaos.images.swarm_node import ensure_node_image

                node_image = ensure_node_image(self.host, progress=self.progress)
            self.timings.node_image = time.monotonic() - t0
            if store:
                self._start_store(node_image)
            self._start_nodes(node_image)
            if store:
                self._mount_store()
            self._form_swarm()
            self._load_images(host_images)
        except BaseException as exc:
            self.progress("bring-up failed: removing what it made")
            self.down()
            if _is_docker_error(exc):
                raise InfrastructureError(
                    f"Docker refused to bring up swarm {plan.name!r}: "
                    f"{str(getattr(exc, 'explanation', None) or exc).splitlines()[0][:300]}",
                    hint="everything it made was removed; the nodes need the capabilities SYS_ADMIN, NET_ADMIN, "
                    "MKNOD, SYS_PTRACE and /sys/fs/cgroup (docs/backends.md)",
                ) from None
            raise
        return self

    def _network(self) -> None:
        plan = self.plan
        if not project_objects(self.host, {LABEL_SWARM: plan.name}, kinds=("network",)):
            self.host.networks.create(plan.network, driver="bridge", labels=plan.labels(), check_duplicate=True)

    def _start_store(self, node_image: str) -> None:
        """The SFTP export every node mounts; its key pair in a host folder the nodes read."""
        plan = self.plan
        t0 = time.monotonic()
        self._network()
        shutil.rmtree(plan.store_keys, ignore_errors=True)
        os.makedirs(plan.store_keys, mode=0o700)
        self.host.volumes.create(plan.store_volume, labels=plan.labels())
        self.host.containers.create(**plan.store_create(node_image)).start()
        deadline = time.monotonic() + ENGINE_START_TIMEOUT_S
        while not os.path.exists(os.path.join(plan.store_keys, "id.pub")):
            container = self.host.containers.get(plan.store_container)
            if container.status not in ("created", "running") or time.monotonic() > deadline:
                tail = container.logs(tail=5).decode(errors="replace").strip().splitlines()
                raise InfrastructureError(
                    f"the shared store {plan.store_container} did not start (container {container.status}): "
                    f"{' | '.join(tail)[-300:]}",
                    hint="`docker logs` of it shows why; --no-store brings the swarm up without it",
                )
            time.sleep(0.2)
        self.timings.store = time.monotonic() - t0

    def _mount_store(self) -> None:
        """sshfs of the store on every node (retried while its sshd starts)."""
        t0 = time.monotonic()
        for i in self.plan.indices():
            self._mount_store_on(i)
        self.timings.store += time.monotonic() - t0
        self.progress(f"shared store mounted on every node at {STORE_IN_NODE}")

    def _mount_store_on(self, i: int) -> None:
        plan = self.plan
        node = self.host.containers.get(plan.node_container(i))
        deadline = time.monotonic() + 30
        while True:
            code, out = node.exec_run(plan.store_mount_command())
            if code == 0:
                return
            if time.monotonic() > deadline:
                raise InfrastructureError(
                    f"{plan.hostname(i)} could not mount the shared store: "
                    f"{out.decode(errors='replace').strip()[-300:]}",
                    hint="the node needs /dev/fuse and SYS_ADMIN; --no-store brings the swarm up without it",
                )
            time.sleep(0.5)

    # --- a node lost and back (the node_lost fault) -------------------------------

    def kill_node(self, i: int) -> None:
        """Node ``i`` goes silent, then its container is SIGKILLed: its engine and every task on it
        die at once, unannounced, as on a machine that loses power. Silent first: a killed
        process's kernel still sends FIN or RST on its connections while its network lives
        (measured: a peer's `Socket closed` 0.08 s after a bare kill), and a machine without
        power sends nothing."""
        self._forget_client(i)
        node = self.host.containers.get(self.plan.node_container(i))
        code, out = node.exec_run(["sh", "-c", SILENCE_NODE])
        if code != 0:
            raise InfrastructureError(
                f"{self.plan.hostname(i)} could not be cut off before its kill: "
                f"{out.decode(errors='replace').strip()[-300:]}",
                hint="the node needs NET_ADMIN and iptables (the node image has both; docs/backends.md)",
            )
        node.kill()

    def node_exec(self, i: int, argv: list[str]) -> str:
        """Run ``argv`` in node ``i``'s container; its output, or InfrastructureError naming both."""
        node = self.host.containers.get(self.plan.node_container(i))
        code, out = node.exec_run(argv)
        text = out.decode(errors="replace").strip()
        if code != 0:
            raise InfrastructureError(
                f"{self.plan.hostname(i)}: `{' '.join(argv)}` failed (exit {code}): {text[-300:]}",
                hint="the node needs NET_ADMIN and iptables (the node image has both; docs/backends.md)",
            )
        return text

    def restart_node(self, i: int) -> None:
        """Start node ``i``'s container again: its engine comes back with the swarm state its volume
        kept and rejoins; the store is mounted again; returns once every node is ready."""
        self._forget_client(i)
        for attempt in range(1, NODE_START_ATTEMPTS + 1):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.plan.socket_path(i))  # the dead engine's: a new one is made at start
            container = self.host.containers.get(self.plan.node_container(i))
            container.start()
            try:
                self._wait_engine(i)
                break
            except InfrastructureError:
                # Measured: 3 of 11 restarts after a kill, the new engine exited at once with
                # `can't create unix socket /var/run/docker.sock: bind: address already in
                # use` although the node's command had removed that file (cause not found);
                # started again, each came up. A node that keeps failing is an error.
                container.reload()
                if container.status in ("created", "running") or attempt == NODE_START_ATTEMPTS:
                    raise
                self.progress(f"{self.plan.hostname(i)}'s engine exited at its start; starting it again")
        if os.path.exists(os.path.join(self.plan.store_keys, "id.pub")):
            self._mount_store_on(i)
        self._wait_ready()

    def _forget_client(self, i: int) -> None:
        client = self._clients.pop(i, None)
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()

    def _start_nodes(self, node_image: str) -> None:
        plan = self.plan
        t0 = time.monotonic()
        self._network()
        for i in plan.indices():
            os.makedirs(plan.socket_dir(i), exist_ok=True)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(plan.socket_path(i))  # a stale socket of an earlier swarm
            self.host.volumes.create(plan.volume(i), labels=plan.labels(i))
            fuse = os.path.exists(FUSE_DEVICE)
            self.host.containers.create(**plan.node_create(i, node_image, fuse=fuse, store=self.store)).start()
        self.progress(f"{plan.nodes} node container(s) started; waiting for their engines")
        for i in plan.indices():
            self._wait_engine(i)
        self.timings.nodes_started = time.monotonic() - t0
        self.progress(f"engines up in {self.timings.nodes_started:.1f}s")

    def _wait_engine(self, i: int) -> None:
        deadline = time.monotonic() + ENGINE_START_TIMEOUT_S
        last = ""
        while time.monotonic() < deadline:
            if os.path.exists(self.plan.socket_path(i)):
                try:
                    self.client(i).ping()
                    return
                except Exception as exc:  # noqa: BLE001 - still starting
                    last = str(exc).splitlines()[0][:120]
            container = self.host.containers.get(self.plan.node_container(i))
            if container.status not in ("created", "running"):
                break
            time.sleep(0.2)
        container = self.host.containers.get(self.plan.node_container(i))
        tail = container.logs(tail=5).decode(errors="replace").strip().splitlines()
        raise InfrastructureError(
            f"the Docker engine in {self.plan.node_container(i)} did not answer within "
            f"{ENGINE_START_TIMEOUT_S:.0f}s (container {container.status}; {last or 'no socket yet'}); "
            f"its last lines: {' | '.join(tail)[-400:]}",
            hint="the node needs the capabilities SYS_ADMIN, NET_ADMIN, MKNOD, SYS_PTRACE and /sys/fs/cgroup "
            "read-write (docs/backends.md); `docker logs` of the node shows why its engine stopped",
        )

    def _form_swarm(self) -> None:
        plan = self.plan
        t0 = time.monotonic()
        manager = self.client(1)
        ip1 = self.node_ip(1)
        manager.swarm.init(advertise_addr=ip1, listen_addr=f"0.0.0.0:{SWARM_PORT}")
        manager.swarm.reload()
        token = manager.swarm.attrs["JoinTokens"]["Worker"]
        for i in plan.indices():
            if i == 1:
                continue
            self.client(i).swarm.join(
                remote_addrs=[f"{ip1}:{SWARM_PORT}"],
                join_token=token,
                advertise_addr=self.node_ip(i),
                listen_addr=f"0.0.0.0:{SWARM_PORT}",
            )
        self._wait_ready()
        manager.networks.create(**plan.overlay_create())
        self.timings.swarm_formed = time.monotonic() - t0
        self.progress(f"swarm of {plan.nodes} formed in {self.timings.swarm_formed:.1f}s")

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + NODES_READY_TIMEOUT_S
        states: dict[str, str] = {}
        while time.monotonic() < deadline:
            states = {
                n.attrs["Description"]["Hostname"]: n.attrs["Status"]["State"] for n in self.client(1).nodes.list()
            }
            if len(states) == self.plan.nodes and all(s == "ready" for s in states.values()):
                return
            time.sleep(0.3)
        raise InfrastructureError(
            f"the swarm's nodes are not all ready after {NODES_READY_TIMEOUT_S:.0f}s: "
            f"{', '.join(f'{k} {v}' for k, v in sorted(states.items())) or 'none joined'}",
            hint="the nodes reach each other on ports 2377, 7946 and 4789 of their bridge network; "
            "`docker logs` of a node shows its engine's view",
        )

    def _load_images(self, images: list) -> None:
        """Each image saved once on the host and streamed into every node at the same time."""
        t0 = time.monotonic()
        for image in images:
            tag = next(iter(image.tags), image.short_id)
            t1 = time.monotonic()
            todo = [i for i in self.plan.indices() if not self._has_image(i, image.id)]
            if todo:
                self.progress(f"loading {tag} into {', '.join(self.plan.hostname(i) for i in todo)}")
                for group in [todo] if self.parallel_load else [[i] for i in todo]:
                    self._fan_out(tag, group)
            self.timings.per_image[tag] = time.monotonic() - t1
            self.progress(f"{tag}: in every node ({self.timings.per_image[tag]:.1f}s)")
        self.timings.images_loaded = time.monotonic() - t0

    def _has_image(self, i: int, image_id: str) -> bool:
        try:
            return self.client(i).images.get(image_id).id == image_id
        except Exception:  # noqa: BLE001 - not there
            return False

    def _fan_out(self, tag: str, nodes: list[int]) -> None:
        queues = {i: queue.Queue(maxsize=8) for i in nodes}
        errors: dict[int, str] = {}
        stop = threading.Event()

        def feed(q: queue.Queue) -> Iterator[bytes]:
            while True:
                chunk = q.get()
                if chunk is None:
                    return
                yield chunk

        def load(i: int) -> None:
            try:
                out = self.client(i).api.load_image(feed(queues[i]))
                for doc in out or []:
                    if isinstance(doc, dict) and doc.get("error"):
                        errors[i] = str(doc["error"])[:200]
            except Exception as exc:  # noqa: BLE001 - reported below
                errors[i] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            finally:
                if i in errors:
                    stop.set()
                while True:  # unblock the reader if this node stopped reading early
                    try:
                        queues[i].get_nowait()
                    except queue.Empty:
                        break

        threads = [threading.Thread(target=load, args=(i,), daemon=True, name=f"swarm-load-{i}") for i in nodes]
        for t in threads:
            t.start()
        try:
            for chunk in self.host.api.get_image(tag, chunk_size=CHUNK):
                if stop.is_set():
                    break
                for i in nodes:
                    while i not in errors:
                        try:
                            queues[i].put(chunk, timeout=1)
                            break
                        except queue.Full:
                            continue
        finally:
            for i in nodes:
                with contextlib.suppress(queue.Full):
                    queues[i].put(None, timeout=30)
            for t in threads:
                t.join()
        if errors:
            raise InfrastructureError(
                f"loading {tag} into the swarm failed: "
                + "; ".join(f"{self.plan.hostname(i)}: {why}" for i, why in sorted(errors.items())),
                hint="check free space on the host (`df -h /var/lib/docker`); each node holds its own copy",
            )

    # --- down ----------------------------------------------------------------------

    def down(self) -> Removal:
        """Remove the nodes, their volumes and network (and the host's socket folders).
        Never raises; Ctrl-C during it is held back until it is done."""
        with interrupts.deferred():
            for c in self._clients.values():
                with contextlib.suppress(Exception):
                    c.close()
            self._clients.clear()
            removal = remove_objects(self.host, lambda: swarm_objects(self.host, self.plan.name))
            shutil.rmtree(os.path.join(self.plan.socket_root, self.plan.name), ignore_errors=True)
        return removal


def down(client, name: str) -> Removal | None:
    """Remove the swarm ``name`` (None: there is none)."""
    check_name(name)
    objects = swarm_objects(client, name)
    if not objects:
        shutil.rmtree(os.path.join(socket_root(), name), ignore_errors=True)
        return None
    nodes = {o.labels.get(LABEL_NODE) for o in objects if o.labels.get(LABEL_NODE)}
    plan = SwarmPlan(name, max(1, len(nodes)), socket_root())
    return LocalSwarm(client, plan).down()


@dataclass
class NodeState:
    index: int
    container: str
    state: str  # the node container's: running, exited, missing
    swarm: str = ""  # the swarm's view: ready / down / ..., manager or worker
    images: list[str] = field(default_factory=list)


def status(client, name: str) -> list[NodeState]:
    """Each node of swarm ``name``: its container, the swarm's view of it, its images."""
    check_name(name)
    objects = [o for o in swarm_objects(client, name) if o.kind == "container"]
    by_index = {int(o.labels[LABEL_NODE]): o for o in objects if (o.labels.get(LABEL_NODE) or "").isdigit()}
    if not by_index:
        return []
    plan = SwarmPlan(name, max(by_index), socket_root())
    swarm = LocalSwarm(client, plan)
    view: dict[str, str] = {}
    with contextlib.suppress(Exception):
        for n in swarm.client(1).nodes.list():
            role = "manager" if n.attrs.get("ManagerStatus") else "worker"
            view[n.attrs["Description"]["Hostname"]] = f"{n.attrs['Status']['State']}, {role}"
    out = []
    for i in plan.indices():
        obj = by_index.get(i)
        node = NodeState(i, plan.node_container(i), obj.state if obj else "missing")
        node.swarm = view.get(plan.hostname(i), "unknown")
        if node.state == "running":
            with contextlib.suppress(Exception):
                node.images = sorted(t for img in swarm.client(i).images.list() for t in img.tags)
        out.append(node)
    return out


@contextlib.contextmanager
def local_swarm(
    nodes: int = 3,
    images: list[str] | tuple[str, ...] = (),
    *,
    name: str | None = None,
    store: bool = True,
    client=None,
    progress: Progress = engine.noop,
) -> Iterator[LocalSwarm]:
    """A swarm for a test: owned by this process (``chaos clean`` removes it if the
    process dies), removed when the block ends, whatever happens in it."""
    import uuid

    client = client or engine.docker_client()
    plan = make_plan(name or f"t{uuid.uuid4().hex[:8]}", nodes, owned=True)
    swarm = LocalSwarm(client, plan, progress)
    swarm.up(list(images), store=store)
    try:
        yield swarm
    finally:
        swarm.down()
