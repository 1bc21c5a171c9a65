"""The fake swarm every Swarm backend unit test here runs against (tests/unit/fake_swarm.py)."""

from __future__ import annotations

import pytest
from fake_swarm import FakeProxies, FakeSwarm

from chaos.backends.swarm import cluster as swarm_cluster


@pytest.fixture
def swarm(monkeypatch):
    fake = FakeSwarm()
    monkeypatch.setattr(swarm_cluster, "ProxyClient", FakeProxies)
    monkeypatch.setattr(swarm_cluster.requests, "get", lambda url, timeout: type("R", (), {"ok": True})())
    return fake


@pytest.fixture(autouse=True)
def no_placements_of_other_tests():
    """The placements a process's runs hold (swarm_cluster._PLACED) are process-wide: a test's
    cluster that was never torn down must not steer the next test's placement."""
    swarm_cluster._PLACED.clear()
    yield
    swarm_cluster._PLACED.clear()
