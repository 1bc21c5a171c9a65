"""How a worker is told its cluster: the same TF_CONFIG text becomes TF_CONFIG
or an address list + task index, and the harness builds the matching resolver."""

import json
from types import SimpleNamespace

import pytest

from chaos.topology import Topology
from chaos.worker.cluster_env import TASK_INDEX_ENV, WORKERS_ENV, cluster_env, make_resolver
from chaos.worker.settings import WorkerSettings


def test_tf_config_is_passed_as_is():
    text = Topology(2).tf_config(1)
    assert cluster_env(text, "tf_config") == {"TF_CONFIG": text}


def test_simple_gets_the_address_list_and_the_index_and_no_tf_config():
    env = cluster_env(Topology(3).tf_config(2), "simple")
    assert env == {WORKERS_ENV: "proxy:23600,proxy:23601,proxy:23602", TASK_INDEX_ENV: "2"}


def test_a_broken_text_reaches_the_simple_list_too():
    config = json.loads(Topology(2).tf_config(1))
    config["cluster"]["worker"][0] = "proxy:24600"
    assert cluster_env(json.dumps(config), "simple")[WORKERS_ENV] == "proxy:24600,proxy:23601"


class FakeTF:
    """The two resolver classes and ClusterSpec, recording how they were made."""

    def __init__(self):
        made = self.made = []
        self.train = SimpleNamespace(ClusterSpec=lambda spec: ("spec", spec))
        resolvers = SimpleNamespace(
            TFConfigClusterResolver=lambda: made.append(("tf_config",)) or "tfconfig-resolver",
            SimpleClusterResolver=lambda spec, **kw: made.append(("simple", spec, kw)) or "simple-resolver",
        )
        self.distribute = SimpleNamespace(cluster_resolver=resolvers)


def test_make_resolver_builds_the_simple_resolver_from_the_environment(monkeypatch):
    tf = FakeTF()
    monkeypatch.setenv(WORKERS_ENV, "proxy:23600,proxy:23601")
    monkeypatch.setenv(TASK_INDEX_ENV, "1")
    assert make_resolver(tf, "simple") == "simple-resolver"
    assert tf.made == [
        (
            "simple",
            ("spec", {"worker": ["proxy:23600", "proxy:23601"]}),
            {"task_type": "worker", "task_id": 1, "rpc_layer": "grpc"},
        )
    ]
    assert make_resolver(tf, "tf_config") == "tfconfig-resolver"


def test_worker_settings_refuse_an_unknown_resolver():
    with pytest.raises(ValueError, match="cluster_resolver must be one of"):
        WorkerSettings(cluster_resolver="k8s")
