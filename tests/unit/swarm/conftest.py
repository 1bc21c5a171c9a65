"""The fake swarm every Swarm backend unit test here runs against (tests/unit/fake_swarm.py)."""

from __future__ import annotations

import pytest

from chaos.backends.swarm import cluster as swarm_cluster
from fake_swarm import FakeProxies, FakeSwarm


@pytest.fixture
def swarm(monkeypatch):
    fake = FakeSwarm()
    monkeypatch.setattr(swarm_cluster, "ProxyClient", FakeProxies)
    monkeypatch.setattr(swarm_cluster.requests, "get", lambda url, timeout: type("R", (), {"ok": True})())
    return fake
