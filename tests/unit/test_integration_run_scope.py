"""tests/integration/run_scope.py: the integration tests' leftover check looks
only at runs that appeared during the test (fake Docker client)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

from chaos import LABEL_PROJECT, LABEL_RUN, PROJECT
from chaos.cluster import docker_api

sys.path.insert(0, str(Path(__file__).parents[1] / "integration"))
import run_scope  # noqa: E402


def obj(run=None, **extra):
    labels = {LABEL_PROJECT: PROJECT, **({LABEL_RUN: run} if run else {}), **extra}
    return SimpleNamespace(attrs={"Labels": labels})


class FakeCollection:
    def __init__(self, items):
        self.items = items
        self.calls = []

    def list(self, **kwargs):
        self.calls.append(kwargs)
        return self.items


def client(containers=(), networks=(), volumes=()):
    return SimpleNamespace(
        containers=FakeCollection(list(containers)),
        networks=FakeCollection(list(networks)),
        volumes=FakeCollection(list(volumes)),
    )


def test_run_ids_reads_the_run_label_from_list_calls_only():
    c = client(
        containers=[obj("aaaa1111", **{"io.tfchaos.role": "proxy"}), obj("bbbb2222")],
        networks=[obj("aaaa1111")],
        volumes=[obj("cccc3333"), SimpleNamespace(attrs={"Labels": None})],
    )
    assert run_scope.run_ids(c) == {"aaaa1111", "bbbb2222", "cccc3333"}
    wanted = {"label": [f"{LABEL_PROJECT}={PROJECT}", LABEL_RUN]}
    assert c.containers.calls == [{"all": True, "filters": wanted, "sparse": True}]
    assert c.networks.calls == [{"filters": wanted}] and c.volumes.calls == [{"filters": wanted}]


def test_only_runs_new_since_the_test_started_are_checked_and_removed(monkeypatch):
    before = {"other001", "user0002"}  # another session's run, a user's `chaos run`
    after = before | {"mine0003", "mine0004"}
    runs = run_scope.new_runs(before, after)
    assert runs == ["mine0003", "mine0004"]
    assert run_scope.new_runs(before, before) == []

    listed, removed = [], []

    def list_labelled(client, labels=None, *, any_run=False):
        listed.append(labels)
        return [f"container tfchaos-{labels[LABEL_RUN]}-proxy"]

    monkeypatch.setattr(docker_api, "list_labelled", list_labelled)
    monkeypatch.setattr(docker_api, "remove_labelled", lambda client, labels: removed.append(labels))
    assert run_scope.objects_of(None, runs) == ["container tfchaos-mine0003-proxy", "container tfchaos-mine0004-proxy"]
    run_scope.remove_runs(None, runs)
    assert listed == removed == [{LABEL_RUN: "mine0003"}, {LABEL_RUN: "mine0004"}]
