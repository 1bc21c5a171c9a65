"""A ClusterControl that records calls, with proxies that behave like
toxiproxy-python's Proxy (same methods, same errors) but keep state in memory."""

from __future__ import annotations

from toxiproxy.exceptions import NotFound, ProxyExists
from toxiproxy.toxic import Toxic


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


class FakeCluster:
    def __init__(self, num_workers=2):
        self.num_workers = num_workers
        self.calls = []
        self.events = []
        self.paused: set[int] = set()
        self.disconnected: set[int] = set()
        self.proxies = [FakeProxy(f"worker-{i}", self.calls) for i in range(num_workers)]

    def worker_name(self, index):
        return f"worker-{index}"

    def signal(self, index, signal):
        self.calls.append(("signal", index, signal))

    def preempt(self, index, grace_s):
        self.calls.append(("preempt", index, grace_s))

    def pause(self, index):
        self.calls.append(("pause", index))
        if index in self.paused:
            raise RuntimeError("already paused")  # docker's 409
        self.paused.add(index)

    def unpause(self, index):
        self.calls.append(("unpause", index))
        if index not in self.paused:
            raise RuntimeError("not paused")  # docker's 409
        self.paused.remove(index)

    def disconnect(self, index):
        self.calls.append(("disconnect", index))
        if index in self.disconnected:
            raise RuntimeError("already disconnected")
        self.disconnected.add(index)

    def reconnect(self, index):
        self.calls.append(("reconnect", index))
        if index not in self.disconnected:
            raise RuntimeError("not disconnected")
        self.disconnected.remove(index)

    def proxy(self, index):
        return self.proxies[index]

    def update_resources(self, index, **limits):
        self.calls.append(("update_resources", index, limits))

    def created_resources(self, index):
        return getattr(self, "created", {}).get(index, {})

    def restart(self, indices, reason):
        self.calls.append(("restart", list(indices), reason))

    def record(self, event):
        self.events.append(event)
