"""Which engine a swarm run reaches a node's task through: named in TFCHAOS_SWARM_NODES,
found beside the manager's socket (the local swarm's layout), or the manager itself;
otherwise an error naming the node and how to name its engine."""

from __future__ import annotations

import pytest

from chaos.backends.swarm.engines import NODES_ENV, NodeEngines, manager_url, parse_nodes, sibling_socket
from chaos.errors import InfrastructureError, ScenarioError


def test_nodes_are_named_host_equals_url():
    assert parse_nodes(" node-2=unix:///run/n2.sock, gpu-7=ssh://me@gpu-7 ,") == {
        "node-2": "unix:///run/n2.sock",
        "gpu-7": "ssh://me@gpu-7",
    }


@pytest.mark.parametrize("text", ["node-2", "node-2=/run/n2.sock", "=ssh://x"])
def test_a_bad_entry_is_named_with_an_example(text):
    with pytest.raises(ScenarioError) as err:
        parse_nodes(text)
    assert repr(text) in err.value.message and NODES_ENV in err.value.hint


def test_the_local_swarms_sockets_are_found_beside_the_managers(tmp_path):
    for node in ("node-1", "node-2"):
        (tmp_path / node).mkdir()
        (tmp_path / node / "docker.sock").write_text("")
    manager = f"unix://{tmp_path}/node-1/docker.sock"
    assert sibling_socket(manager, "node-2") == f"unix://{tmp_path}/node-2/docker.sock"
    assert sibling_socket(manager, "node-3") is None
    assert sibling_socket("tcp://10.0.0.1:2376", "node-2") is None


def test_an_explicit_engine_wins_and_an_unknown_node_is_an_error_with_a_hint(tmp_path):
    engines = NodeEngines("tcp://m:2376", "mgr", {"node-2": "ssh://me@node-2"}, connect=lambda url: url)
    assert engines.client("node-2") == "ssh://me@node-2"
    assert engines.url("mgr") == "tcp://m:2376"
    with pytest.raises(InfrastructureError) as err:
        engines.url("node-9")
    assert "'node-9'" in err.value.message and f"{NODES_ENV}=node-9=ssh://" in err.value.hint


def test_the_manager_is_docker_host_when_set():
    assert manager_url({"DOCKER_HOST": "unix:///x/node-1/docker.sock"}) == "unix:///x/node-1/docker.sock"


def test_closing_keeps_the_callers_manager_client():
    class Client:
        closed = False

        def close(self):
            self.closed = True

    manager, other = Client(), Client()
    engines = NodeEngines(None, "node-1", connect=lambda url: other, manager_client=manager)
    engines.explicit["node-2"] = "ssh://node-2"
    assert engines.client("node-1") is manager and engines.client("node-2") is other
    engines.close()
    assert not manager.closed and other.closed
