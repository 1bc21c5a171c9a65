"""A fake Docker Swarm at the SDK boundary: a manager client (info, nodes, images,
networks, services and their tasks) and one engine per node holding the tasks'
containers. Only what chaos.backends.swarm calls, recording every call, so the
unit tests read what the backend asked of the engine."""

from __future__ import annotations

import itertools
import threading
from types import SimpleNamespace

from docker.errors import ImageNotFound, NotFound

_ids = itertools.count(1)


class FakeContainer:
    def __init__(self, node: str, service: FakeService) -> None:
        self.id = f"c{next(_ids)}"
        self.node = node
        self.service = service
        self.status = "running"
        self.calls: list[tuple] = []
        self.exit_code: int | None = None
        self.lost = False  # its node's engine died under it
        self._exited = threading.Event()
        self.attrs = {"State": {"OOMKilled": False, "Paused": False, "Status": "running"}}
        self.name = f"{service.name}.1.{self.id}"
        self.task_id = f"t{next(_ids)}"
        helper = (service.spec.get("labels") or {}).get("io.tfchaos.role") == "helper"
        self.task_state = "complete" if helper else "running"  # a helper runs to its end

    # what the backend calls
    def kill(self, signal="SIGKILL"):
        self.calls.append(("kill", signal))
        self.exit(137 if signal == "SIGKILL" else 143)

    def stop(self, timeout=10):
        self.calls.append(("stop", timeout))
        if self.status == "running":
            self.exit(143)

    def remove(self, force=False, v=False):
        self.calls.append(("remove", force))
        if self.status == "running":
            self.exit(137)
        self.status = "removed"

    def pause(self):
        self.calls.append(("pause",))
        self.attrs["State"]["Paused"] = True

    def unpause(self):
        self.calls.append(("unpause",))
        self.attrs["State"]["Paused"] = False

    def update(self, **kwargs):
        self.calls.append(("update", kwargs))

    def reload(self):
        if self.status == "removed":
            raise NotFound("gone")

    def wait(self):
        self._exited.wait(30)
        if self.lost:
            raise ConnectionError("the node's engine is gone")  # as its socket closes
        return {"StatusCode": self.exit_code if self.exit_code is not None else -1}

    def lose(self):
        """Its node died: no engine is left to answer for it."""
        self.lost = True
        self.status = "gone"
        self._exited.set()

    def logs(self, stream=False, follow=False, stdout=True, stderr=True, tail=None):
        lines = [b'{"event": "start", "t": 1.0, "tf_version": "2.20.0"}\n']
        return iter(lines) if stream else b"".join(lines)

    def exec_run(self, cmd):
        self.calls.append(("exec", cmd))
        return SimpleNamespace(exit_code=0, output=b"")

    # what the test does
    def exit(self, code: int) -> None:
        self.exit_code = code
        self.status = "exited"
        self.task_state = "failed" if code else "complete"
        self._exited.set()
        self.service.exited(self)


class FakeService:
    def __init__(self, swarm: FakeSwarm, spec: dict) -> None:
        self.swarm = swarm
        self.spec = spec
        self.name = spec["name"]
        self.id = f"s{next(_ids)}"
        self.removed = False
        constraints = spec.get("constraints") or []
        self.node = constraints[0].split("==", 1)[1] if constraints else swarm.hostnames[0]
        self.history: list[FakeContainer] = []  # one container per task, oldest first
        self.restarts = 0  # tasks its restart policy started
        self._new_task()

    @property
    def attrs(self) -> dict:
        """As the SDK's ``Service.attrs``: the spec's labels under Spec.Labels."""
        return {"ID": self.id, "Spec": {"Name": self.name, "Labels": dict(self.spec.get("labels") or {})}}

    @property
    def container(self) -> FakeContainer:
        """The newest task's container."""
        return self.history[-1]

    def _new_task(self) -> None:
        container = FakeContainer(self.node, self)
        self.history.append(container)
        self.swarm.engines[self.node].containers.held[container.id] = container

    def exited(self, container: FakeContainer) -> None:
        """Swarm's restart policy: on-failure starts a new task, up to max_attempts (as the engine does)."""
        policy = self.spec.get("restart_policy") or {}
        if (
            container.exit_code
            and not self.removed
            and policy.get("Condition") == "on-failure"
            and self.restarts < policy.get("MaxAttempts", 0)
            and container is self.container
        ):
            self.restarts += 1
            self._new_task()

    def tasks(self):
        if self.removed:
            raise NotFound("no such service")
        return [self._task(c, n) for n, c in enumerate(self.history)]

    def _task(self, container: FakeContainer, n: int) -> dict:
        ports = []
        endpoint = self.spec.get("endpoint_spec") or {}
        for p in endpoint.get("Ports") or []:
            ports.append({"TargetPort": p["TargetPort"], "PublishedPort": 30001, "PublishMode": p["PublishMode"]})
        networks = [
            {
                "Network": {"Spec": {"Name": getattr(n, "get", lambda k, n=n: n)("Target")}},
                "Addresses": [f"10.0.9.{next(_ids) % 250}/24"],
            }
            for n in self.spec.get("networks") or []
        ]
        return {
            "ID": container.task_id,
            "CreatedAt": f"2026-11-27T01:00:{n:02d}Z",
            "NodeID": f"id-{self.node}",
            "Status": {
                "State": container.task_state,
                "ContainerStatus": {"ContainerID": container.id, "ExitCode": container.exit_code},
                "PortStatus": {"Ports": ports},
            },
            "NetworksAttachments": networks,
        }

    def logs(self, stdout=True, stderr=True):
        return iter([b"done\n"])

    def remove(self):
        if self.removed:
            raise NotFound("no such service")
        self.removed = True
        self.swarm.removed.append(self.name)
        if self.container.status == "running":
            self.container.exit(137)


class FakeServices:
    def __init__(self, swarm: FakeSwarm) -> None:
        self.swarm = swarm
        self.created: list[FakeService] = []

    def create(self, **spec):
        image = spec["image"]
        if image not in self.swarm.images.tags:
            raise ImageNotFound(image)
        service = FakeService(self.swarm, spec)
        self.created.append(service)
        return service

    def list(self, filters=None):
        want = (
            dict(f.split("=", 1) for f in (filters or {}).get("label", []))
            if isinstance((filters or {}).get("label"), list)
            else dict([filters["label"].split("=", 1)])
            if filters
            else {}
        )
        return [
            s
            for s in self.created
            if not s.removed and all((s.spec.get("labels") or {}).get(k) == v for k, v in want.items())
        ]


class FakeNetwork:
    def __init__(self, networks: FakeNetworks, spec: dict) -> None:
        self.networks = networks
        self.spec = spec
        self.name = spec["name"]
        self.id = f"n{next(_ids)}"
        self.attrs = {"IPAM": {"Config": [{"Subnet": "10.0.9.0/24"}]}}
        self.remove_refusals = 0  # "network has active endpoints" this many times first

    def remove(self):
        if self.remove_refusals:
            self.remove_refusals -= 1
            raise RuntimeError("network has active endpoints")
        self.networks.live.remove(self)
        self.networks.removed.append(self.name)


class FakeNetworks:
    def __init__(self) -> None:
        self.live: list[FakeNetwork] = []
        self.removed: list[str] = []

    def create(self, **spec):
        network = FakeNetwork(self, spec)
        self.live.append(network)
        return network

    def get(self, network_id):
        return next(n for n in self.live if n.id == network_id)

    def list(self, filters=None):
        key, value = filters["label"].split("=", 1)
        return [n for n in self.live if n.spec["labels"].get(key) == value]


class FakeImages:
    def __init__(self, tags) -> None:
        self.tags = set(tags)

    def get(self, tag):
        if tag not in self.tags:
            raise ImageNotFound(tag)
        return SimpleNamespace(id=f"sha256:{abs(hash(tag)):x}", tags=[tag])


class FakeContainers:
    def __init__(self) -> None:
        self.held: dict[str, FakeContainer] = {}

    def get(self, container_id):
        return self.held[container_id]

    def list(self, all=False, filters=None):
        key, _, value = ((filters or {}).get("label") or "=").partition("=")
        return [
            c
            for c in self.held.values()
            if c.status != "removed"
            and (all or c.status == "running")
            and (not key or c.service.spec["labels"].get(key) == value)
        ]


class FakeLowLevel:
    """The node engine's low-level API: attaching a container to a network and cutting it off."""

    def __init__(self, engine: FakeNodeEngine) -> None:
        self.engine = engine
        self.calls: list[tuple] = []

    def disconnect_container_from_network(self, container, net_id, force=False):
        self.calls.append(("disconnect", container, net_id, force))
        self.engine.containers.held[container].attrs.setdefault("NetworkSettings", {})["Networks"] = {}

    def connect_container_to_network(self, container, net_id, aliases=None):
        self.calls.append(("connect", container, net_id, aliases))
        self.engine.containers.held[container].attrs["NetworkSettings"]["Networks"] = {net_id: {"Aliases": aliases}}


class FakeNodeEngine:
    def __init__(self, hostname: str) -> None:
        self.hostname = hostname
        self.containers = FakeContainers()
        self.api = FakeLowLevel(self)
        self.closed = False

    def close(self):
        self.closed = True


def node_attrs(
    hostname: str, role: str = "worker", state: str = "ready", availability: str = "active", addr: str = ""
) -> dict:
    return {
        "ID": f"id-{hostname}",
        "Description": {"Hostname": hostname},
        "Spec": {"Role": role, "Availability": availability},
        "Status": {"State": state, "Addr": addr or f"172.30.0.{hostname[-1]}"},
    }


class FakeSwarm:
    """The manager client (``manager``) and the node engines (``engines[hostname]``)."""

    def __init__(
        self,
        nodes: list[dict] | None = None,
        images=("tfchaos/worker:tf2.20", "tfchaos/proxy:latest"),
        manager: bool = True,
    ) -> None:
        self.node_list = nodes or [node_attrs("node-1", "manager"), node_attrs("node-2"), node_attrs("node-3")]
        self.hostnames = [n["Description"]["Hostname"] for n in self.node_list]
        self.engines = {h: FakeNodeEngine(h) for h in self.hostnames}
        self.images = FakeImages(images)
        self.networks = FakeNetworks()
        self.services = FakeServices(self)
        self.removed: list[str] = []
        self.is_manager = manager
        self.nodes = SimpleNamespace(
            list=lambda: [SimpleNamespace(id=n["ID"], attrs=n, update=self._node_updater(n)) for n in self.node_list]
        )
        self.node_updates: list[tuple[str, dict]] = []

    def _node_updater(self, attrs: dict):
        """``node.update(spec)``: the SDK replaces the node's whole spec."""

        def update(spec: dict) -> bool:
            self.node_updates.append((attrs["Description"]["Hostname"], dict(spec)))
            attrs["Spec"] = dict(spec)
            return True

        return update

    def info(self):
        state = (
            {"LocalNodeState": "active", "ControlAvailable": True}
            if self.is_manager
            else {"LocalNodeState": "inactive", "ControlAvailable": False}
        )
        return {"Name": self.hostnames[0], "Swarm": state}

    def close(self):
        pass


class FakeProxies:
    """chaos.backends.proxy_client.ProxyClient's surface: routes by name."""

    def __init__(self, host, port) -> None:
        self.host, self.port = host, port
        self.routes: dict[str, object] = {}

    def names(self):
        return list(self.routes)

    def populate(self, routes):
        for r in routes:
            self.routes[r.name] = r

    def proxy(self, name):
        return SimpleNamespace(name=name, route=self.routes[name])


# --- a SwarmCluster on the fake ------------------------------------------------------------

WORKER_IMAGE = "tfchaos/worker:tf2.20"
PROXY_IMAGE = "tfchaos/proxy:latest"


def make_cluster(fake: FakeSwarm, **spec_kwargs):
    """A SwarmCluster whose manager and node engines are ``fake``'s."""
    from chaos.backends.spec import Deployment
    from chaos.backends.swarm.cluster import SwarmCluster
    from chaos.backends.swarm.engines import NodeEngines
    from chaos.worker.settings import WorkerSettings

    spec = Deployment(
        images=(WORKER_IMAGE, WORKER_IMAGE), proxy_image=PROXY_IMAGE, settings=WorkerSettings(epochs=3), **spec_kwargs
    )
    engines = NodeEngines(None, "node-1", connect=lambda url: None, manager_client=fake)
    engines._clients.update(fake.engines)  # each node's engine, as a real swarm's sockets would give
    return SwarmCluster(spec, manager=fake, engines=engines, store_root="/mnt/tfchaos-store")


def wait_for(predicate, timeout=5.0):
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def services(fake: FakeSwarm, role: str):
    return [s for s in fake.services.created if s.spec["labels"].get("io.tfchaos.role") == role]
