"""tf_config: each mode is the TF_CONFIG a misconfigured worker would really get."""

import json

import pytest
from fake_backend import FakeCluster
from pydantic import ValidationError

from chaos.faults import FAULTS, TfConfig
from chaos.faults.undo import Undo


@pytest.fixture
def cluster():
    return FakeCluster(num_slots=3)


def given(cluster, worker):
    return cluster.overrides[worker]["tf_config"]["cluster_config"]


def healthy(cluster, worker):
    return json.loads(cluster.tf_config(worker))


def test_localhost_peers_names_every_worker_localhost_on_the_same_ports(cluster):
    undo = Undo()
    TfConfig(mode="localhost_peers", workers=[1]).inject(cluster, undo)
    config = json.loads(given(cluster, 1))
    ports = [a.rsplit(":", 1)[1] for a in healthy(cluster, 1)["cluster"]["worker"]]
    assert config["cluster"]["worker"] == [f"localhost:{p}" for p in ports]
    assert config["task"] == {"type": "worker", "index": 1}
    assert set(cluster.overrides) == {1}  # only the listed worker


def test_wrong_port_moves_only_the_chiefs_entry_to_a_port_nobody_serves(cluster):
    undo = Undo()
    TfConfig(mode="wrong_port", workers=[2]).inject(cluster, undo)
    good, bad = healthy(cluster, 2)["cluster"]["worker"], json.loads(given(cluster, 2))["cluster"]["worker"]
    assert bad[1:] == good[1:] and bad[0] != good[0]
    assert bad[0].rsplit(":", 1)[1] not in {a.rsplit(":", 1)[1] for a in good}


def test_duplicate_index_claims_the_next_workers_index(cluster):
    undo = Undo()
    TfConfig(mode="duplicate_index", workers=[1, 2]).inject(cluster, undo)
    assert json.loads(given(cluster, 1))["task"]["index"] == 2
    assert json.loads(given(cluster, 2))["task"]["index"] == 0  # wraps to the chief's
    assert json.loads(given(cluster, 1))["cluster"] == healthy(cluster, 1)["cluster"]


def test_missing_worker_lists_one_more_worker_than_is_started(cluster):
    undo = Undo()
    TfConfig(mode="missing_worker", workers=[0, 1, 2]).inject(cluster, undo)
    for w in range(3):
        workers = json.loads(given(cluster, w))["cluster"]["worker"]
        assert len(workers) == 4 and workers[:3] == healthy(cluster, w)["cluster"]["worker"]
        assert workers[3] not in workers[:3]


def test_malformed_is_not_json(cluster):
    undo = Undo()
    TfConfig(mode="malformed").inject(cluster, undo)  # default: worker 1
    with pytest.raises(json.JSONDecodeError):
        json.loads(given(cluster, 1))


def test_unreachable_address_puts_an_unheld_address_of_the_runs_network_in_the_chiefs_entry(cluster):
    undo = Undo()
    TfConfig(mode="unreachable_address", workers=[1]).inject(cluster, undo)
    good, bad = healthy(cluster, 1)["cluster"]["worker"], json.loads(given(cluster, 1))["cluster"]["worker"]
    assert bad[0] == f"{cluster.unused_address()}:{good[0].rsplit(':', 1)[1]}"
    assert bad[1:] == good[1:]


def test_set_after_strategy_changes_the_jobs_order_not_its_config_and_needs_the_harness(cluster):
    undo = Undo()
    fault = TfConfig(mode="set_after_strategy", workers=[0, 1])
    fault.inject(cluster, undo)
    for w in (0, 1):
        override = cluster.overrides[w]["tf_config"]
        assert override["settings"] == {"tf_config_after_strategy": True, "backup_dir": f"/backup/worker-{w}"}
        assert override["cluster_config"] is None
    assert fault.hooks() == {"settings"}
    assert TfConfig(mode="wrong_port").hooks() == frozenset()


def test_heal_clears_the_override_and_is_idempotent(cluster):
    undo = Undo()
    fault = TfConfig(mode="wrong_port", workers=[1])
    undo(cluster)
    fault.inject(cluster, undo)
    undo(cluster)
    undo(cluster)
    assert cluster.overrides.get(1, {}) == {}


def test_an_unknown_mode_is_rejected_with_the_valid_ones():
    with pytest.raises(ValidationError) as info:
        FAULTS.get("tf_config")(mode="localhost")
    for mode in ("localhost_peers", "malformed", "set_after_strategy", "unreachable_address"):
        assert mode in str(info.value)


def test_tf_config_applies_at_create():
    assert TfConfig.applies_at_create
