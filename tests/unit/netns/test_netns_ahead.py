"""A packet fault's helper started ahead (DockerCluster.netns_ahead) serves its
inject only in the container it joined; a replaced worker gets a fresh one."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from chaos.backends.docker import netns as netns_module
from chaos.backends.docker.cluster import DockerCluster
from chaos.backends.spec import Deployment
from chaos.worker.settings import WorkerSettings


class Helper:
    def __init__(self, target, running=True):
        self.target, self.running, self.closed, self.probed = target, running, False, 0

    def is_running(self):
        return self.running and not self.closed

    def capabilities(self):
        self.probed += 1

    def close(self):
        self.closed = True


@pytest.fixture
def cluster(monkeypatch):
    joined = []

    def join(client, target, *, labels, prefix, image=None):
        helper = Helper(target)
        joined.append(helper)
        return helper

    monkeypatch.setattr(netns_module.DockerNetns, "join", staticmethod(join))
    c = DockerCluster(
        Deployment(images=("w", "w"), proxy_image="p", settings=WorkerSettings()),
        client=SimpleNamespace(info=lambda: {"Driver": "overlay2"}),
    )
    c.workers = {i: SimpleNamespace(container=SimpleNamespace(id=f"gen0-{i}")) for i in range(2)}
    c.joined = joined
    return c


def test_the_helper_made_ahead_serves_the_inject_and_was_probed_ahead(cluster):
    cluster.netns_ahead(1)
    (ahead,) = cluster.joined
    assert ahead.probed == 1 and ahead.target.id == "gen0-1"
    assert cluster.netns(1) is ahead
    assert cluster.netns(1) is not ahead  # used once: a second fault gets its own
    assert len(cluster.joined) == 2


def test_a_helper_of_a_replaced_container_is_removed_and_a_fresh_one_joins_the_new(cluster):
    cluster.netns_ahead(1)
    (stale,) = cluster.joined
    cluster.workers[1] = SimpleNamespace(container=SimpleNamespace(id="gen1-1"))  # restarted before the fault
    fresh = cluster.netns(1)
    assert stale.closed and fresh is not stale and fresh.target.id == "gen1-1"


def test_a_helper_that_stopped_is_not_used(cluster):
    cluster.netns_ahead(0)
    (dead,) = cluster.joined
    dead.running = False
    assert cluster.netns(0) is not dead and dead.closed


def test_without_a_helper_ahead_the_inject_joins_one(cluster):
    helper = cluster.netns(0)
    assert helper.target.id == "gen0-0" and cluster.joined == [helper]
