"""FakeCluster plus the ClusterControl methods the environment and resource
faults use: per-owner overrides, commands, memory use, running state.

State is kept like DockerCluster keeps it (overrides per worker per owner,
applied at the next create), so a test can assert what the next container
would get, not only which calls were made.
"""

from __future__ import annotations

from fake_cluster import FakeCluster


class ControlFake(FakeCluster):
    def __init__(self, num_workers=2, usage_bytes=0):
        super().__init__(num_workers)
        self.overrides: dict[int, dict[str, dict]] = {}
        self.running: set[int] = set(range(num_workers))
        self.usage = {i: usage_bytes for i in range(num_workers)}
        self.fail_on: set[str] = set()  # method names that raise, like a Docker error would

    def _maybe_fail(self, method):
        if method in self.fail_on:
            raise RuntimeError(f"{method} failed (fake Docker error)")

    def override(self, index, owner, *, image=None, env=None, settings=None, cluster_config=None, resources=None):
        given = {"image": image, "env": env, "settings": settings, "cluster_config": cluster_config}
        if resources is not None:  # only the faults that set limits pass it
            given["resources"] = resources
        self.calls.append(("override", index, owner, given))
        self._maybe_fail("override")
        self.overrides.setdefault(index, {})[owner] = {
            "image": image,
            "env": dict(env or {}),
            "settings": dict(settings or {}),
            "cluster_config": cluster_config,
            **({"resources": dict(resources)} if resources is not None else {}),
        }

    def unused_address(self):
        return "172.30.255.254"

    def tf_config(self, index):
        # What the real cluster creates (chaos.topology), for the faults that break it.
        from chaos.topology import Topology

        return Topology(self.num_workers).tf_config(index)

    def clear_override(self, index, owner):
        self.calls.append(("clear_override", index, owner))
        self.overrides.get(index, {}).pop(owner, None)

    def active_overrides(self):
        """worker -> owners with an override in place (workers without one left out)."""
        return {w: sorted(o) for w, o in self.overrides.items() if o}

    def command(self, index, name, params):
        self.calls.append(("command", index, name, params))
        self._maybe_fail("command")

    def is_running(self, index):
        return index in self.running

    def memory_usage(self, index):
        self.calls.append(("memory_usage", index))
        self._maybe_fail("memory_usage")
        return self.usage[index]

    def update_resources(self, index, **limits):
        super().update_resources(index, **limits)
        self._maybe_fail("update_resources")

    def expect_restarts(self, expected):
        self.calls.append(("expect_restarts", expected))

    def restart(self, indices, reason, grace_s=3.0):
        self.calls.append(("restart", list(indices), reason, grace_s))
