"""The fakes of ``chaos.backends.base.Cluster`` the unit tests share: ``FakeWorkers``
(the required part only) and one mixin per ability (chaos.backends.abilities), so a
test builds a fake of just what it needs (``class Frozen(FakeWorkers, FakeFreezing)``);
``FakeCluster`` has every ability a single Docker host or a swarm serves but the
packet faults' namespaces (tests/unit/netns keeps iptables state in its own fake).

They record every call in order (``calls``: a tuple per call, the verb first),
keep state the way DockerCluster keeps it (overrides per worker per owner,
applied at the next create; paused and disconnected workers; a proxy per worker
that behaves like toxiproxy-python's ``Proxy``, same methods and errors), and
raise what ``fail`` names for a verb, as an engine error would.
tests/unit/backends/test_backend_fakes.py holds each against the protocols it implements.

They do not train: tests that need events subclass them (tests/unit/runner/test_supervisor.py).
"""

from __future__ import annotations

import dataclasses

from toxiproxy.exceptions import NotFound, ProxyExists
from toxiproxy.toxic import Toxic

from chaos.eventlog import EventLog
from chaos.topology import Topology
from chaos.worker.settings import WorkerSettings


class FakeProxy:
    def __init__(self, name, calls):
        self.name = name
        self.enabled = True
        self._toxics: dict[str, Toxic] = {}
        self._calls = calls

    def add_toxic(self, **kwargs):
        self._calls.append((self.name, "add_toxic", kwargs))
        if kwargs["name"] in self._toxics:
            raise ProxyExists(b"toxic already exists")
        self._toxics[kwargs["name"]] = Toxic(**kwargs)

    def destroy_toxic(self, toxic_name):
        self._calls.append((self.name, "destroy_toxic", toxic_name))
        if toxic_name not in self._toxics:
            raise NotFound(b"toxic not found")
        del self._toxics[toxic_name]
        return True

    def toxics(self):
        return dict(self._toxics)

    def disable(self):
        self._calls.append((self.name, "disable"))
        self.enabled = False

    def enable(self):
        self._calls.append((self.name, "enable"))
        self.enabled = True


class RecordedEvents(EventLog):
    """The run's event log, also readable as the list of what was recorded."""

    def __iter__(self):
        return iter(self.snapshot())

    def __len__(self):
        return len(self.snapshot())

    def __getitem__(self, index):
        return self.snapshot()[index]

    def __eq__(self, other):
        return self.snapshot() == list(other)


class FakeWorkers:
    """What every cluster serves (chaos.backends.base.Cluster), and the state the ability mixins keep."""

    def __init__(self, num_slots=2, usage_bytes=0, events: EventLog | None = None):
        self.num_slots = num_slots
        self.calls: list[tuple] = []
        self.events = events if events is not None else RecordedEvents()
        self.fail: dict[str, Exception] = {}  # verb -> what it raises
        self.running: set[int] = set(range(num_slots))
        # The mixins' state, here so that a fake of any mix starts whole.
        self.paused: set[int] = set()
        self.disconnected: set[int] = set()
        self.lost_nodes: set[str] = set()
        self.drained_nodes: set[str] = set()
        self.degraded_links: set[tuple[str, str]] = set()
        self.usage = {i: usage_bytes for i in range(num_slots)}
        self.overrides: dict[int, dict[str, dict]] = {}
        self.not_restarted: set[int] = set()  # workers the orchestrator leaves (await_restarts)
        self.proxies = [FakeProxy(f"worker-{i}", self.calls) for i in range(num_slots)]

    def _call(self, *call):
        self.calls.append(call)
        if call[0] in self.fail:
            raise self.fail[call[0]]

    # --- the lifecycle the supervisor drives ---------------------------------------

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.calls.append(("teardown",))

    def start_workers(self):
        self._call("start_workers")

    def wait_started(self, timeout=None):
        self._call("wait_started")

    def restart(self, indices, reason, grace_s=3.0):
        self._call("restart", list(indices), reason, grace_s)

    def record(self, event):
        self.events.append(event)

    def log_tail(self, index):
        return [f"log of worker-{index}"]

    # --- what any fault may do -----------------------------------------------------

    def worker_name(self, index):
        return f"worker-{index}"

    def tf_config(self, index):
        # What the real cluster creates (chaos.topology), for the faults that break it.
        return Topology(self.num_slots).tf_config(index)

    def signal(self, index, signal):
        self._call("signal", index, signal)

    def preempt(self, index, grace_s):
        self._call("preempt", index, grace_s)

    def is_running(self, index):
        return index in self.running


class FakeProxyLinks:
    def proxy(self, index):
        return self.proxies[index]


class FakePartitions:
    def disconnect(self, index):
        self._call("disconnect", index)
        if index in self.disconnected:
            raise RuntimeError("already disconnected")
        self.disconnected.add(index)

    def reconnect(self, index):
        self._call("reconnect", index)
        if index not in self.disconnected:
            raise RuntimeError("not disconnected")
        self.disconnected.remove(index)


class FakeFreezing:
    def pause(self, index):
        self._call("pause", index)
        if index in self.paused:
            raise RuntimeError("already paused")  # the engine's 409
        self.paused.add(index)

    def unpause(self, index):
        self._call("unpause", index)
        if index not in self.paused:
            raise RuntimeError("not paused")  # the engine's 409
        self.paused.remove(index)


class FakeCommands:
    def command(self, index, command):
        self._call("command", index, command)


class FakeResourceLimits:
    def limit_cpu(self, index, cpus):
        self._call("limit_cpu", index, cpus)

    def limit_memory(self, index, limit_bytes):
        self._call("limit_memory", index, limit_bytes)

    def restore_cpu(self, index):
        self._call("restore_cpu", index)

    def restore_memory(self, index):
        self._call("restore_memory", index)

    def memory_usage(self, index):
        self._call("memory_usage", index)
        return self.usage[index]


class FakeOverrides:
    def override(self, index, owner, *, image=None, env=None, settings=None, cluster_config=None):
        if settings:
            dataclasses.replace(WorkerSettings(), **settings)  # a bad key or value fails now, as on DockerCluster
        given = {"image": image, "env": env, "settings": settings, "cluster_config": cluster_config}
        self._call("override", index, owner, given)
        self.overrides.setdefault(index, {})[owner] = {
            "image": image,
            "env": dict(env or {}),
            "settings": dict(settings or {}),
            "cluster_config": cluster_config,
        }

    def clear_override(self, index, owner):
        self._call("clear_override", index, owner)
        self.overrides.get(index, {}).pop(owner, None)

    def active_overrides(self):
        """worker -> owners with an override in place (workers without one left out)."""
        return {w: sorted(o) for w, o in self.overrides.items() if o}


class FakeSpareAddresses:
    def unused_address(self):
        return "172.30.255.254"


class FakeCheckpointStore:
    """Every checkpoint-store ability; tests that damage backups give it a folder."""

    def checkpoint_files(self):
        return None

    def damage_backup(self, file, mode):
        self._call("damage_backup", file, mode)
        return {}

    def snapshot_backup(self, name):
        self._call("snapshot_backup", name)
        return f"/checkpoints/{name}"

    def backup_device(self):
        self._call("backup_device")
        return "/dev/vda"

    def limit_writes(self, index, owner, limit):
        self._call("limit_writes", index, owner, limit)
        self.overrides.setdefault(index, {})[owner] = {"write_limit": limit}

    def fill_backup_volume(self, leave_bytes):
        self._call("fill_backup_volume", leave_bytes)
        return {"filled": 1000, "free_before": 1000 + leave_bytes, "free": leave_bytes}

    def clear_backup_fill(self):
        self._call("clear_backup_fill")
        return {"free": 5000}


class FakeNodes:
    """A node lost or drained, the link between two nodes."""

    def lose_node(self, index):
        self._call("lose_node", index)
        node = f"node-of-worker-{index}"
        if node in self.lost_nodes:
            raise RuntimeError("already lost")
        self.lost_nodes.add(node)
        return node

    def restore_node(self, node):
        self._call("restore_node", node)
        if node not in self.lost_nodes:
            raise RuntimeError("not lost")
        self.lost_nodes.remove(node)

    def drain_node(self, index):
        self._call("drain_node", index)
        node = f"node-of-worker-{index}"
        if node in self.drained_nodes:
            raise RuntimeError("already drained")
        self.drained_nodes.add(node)
        return node

    def activate_node(self, node):
        self._call("activate_node", node)
        if node not in self.drained_nodes:
            raise RuntimeError("not drained")
        self.drained_nodes.remove(node)

    def degrade_link(self, a, b, loss_percent):
        self._call("degrade_link", a, b, loss_percent)
        link = (f"node-of-worker-{a}", f"node-of-worker-{b}")
        if link in self.degraded_links:
            raise RuntimeError("already degraded")
        self.degraded_links.add(link)
        return link

    def restore_link(self, link):
        self._call("restore_link", link)
        self.degraded_links.discard(link)


class FakeRestarts:
    """The orchestrator's restart policy, and containers made ahead."""

    def await_restarts(self, indices, reason, timeout_s=120.0):
        """The orchestrator restarts every worker asked about, except those in ``not_restarted``."""
        self._call("await_restarts", list(indices), reason)
        return [i for i in indices if i not in self.not_restarted]

    def expect_restarts(self, expected):
        self.calls.append(("expect_restarts", expected))


class FakeCluster(
    FakeWorkers,
    FakeProxyLinks,
    FakePartitions,
    FakeFreezing,
    FakeCommands,
    FakeResourceLimits,
    FakeOverrides,
    FakeSpareAddresses,
    FakeCheckpointStore,
    FakeNodes,
    FakeRestarts,
):
    """Every ability but the packet faults' network namespaces."""
