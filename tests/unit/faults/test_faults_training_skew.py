"""seed_skew and batch_size_skew: settings overrides of how workers are created,
their validation errors, and the worker-side pieces they switch (no TF here)."""

import dataclasses

import pytest
from fake_backend import FakeCluster

from chaos.errors import ScenarioError
from chaos.faults import BatchSizeSkew, SeedSkew
from chaos.faults.undo import Undo
from chaos.scenario.loader import scenario_from_dict
from chaos.worker.dropout import mask_digest
from chaos.worker.seeding import seed_for
from chaos.worker.settings import WorkerSettings

EXPLAIN = {"symptom": "s", "cause": "c", "fix": "f"}


@pytest.fixture
def cluster():
    return FakeCluster(num_slots=3)


def problem(**data):
    with pytest.raises(ScenarioError) as caught:
        scenario_from_dict({"name": "x", "description": "d", "explain": EXPLAIN, **data}, "x.yaml")
    return caught.value.message


def test_seed_skew_sets_the_seeding_of_every_worker_and_heal_clears_it(cluster):
    undo = Undo()
    fault = SeedSkew(mode="per_worker")
    fault.inject(cluster, undo)
    for w in range(3):
        assert cluster.overrides[w]["seed_skew"]["settings"] == {"seeding": "per_worker"}
    undo(cluster)
    undo(cluster)  # idempotent
    assert not any(cluster.overrides.get(w) for w in range(3))
    assert fault.target == "all workers" and SeedSkew.applies_at_create


def test_batch_size_skew_overrides_one_worker_only(cluster):
    undo = Undo()
    fault = BatchSizeSkew(worker=1, local_batch=8)
    fault.inject(cluster, undo)
    assert cluster.overrides[1]["batch_size_skew"]["settings"] == {"local_batch_size": 8}
    assert 0 not in cluster.overrides and fault.target == "worker-1"
    undo(cluster)
    assert not cluster.overrides.get(1)


def test_the_overridden_settings_are_real_worker_settings():
    settings = dataclasses.replace(WorkerSettings(), seeding="unseeded", local_batch_size=8)
    assert settings.seeding == "unseeded" and settings.local_batch(2) == 8
    assert WorkerSettings().local_batch(2) == 32


@pytest.mark.parametrize(
    "data, expected",
    [
        (
            {"faults": [{"seed_skew": {"mode": "per_replica"}, "at": "bring_up"}]},
            "faults[0].seed_skew.mode: 'per_replica' is not valid; valid: per_worker, unseeded",
        ),
        ({"faults": [{"seed_skew": {}, "at": "bring_up"}]}, "faults[0].seed_skew.mode: required"),
        (
            {"faults": [{"batch_size_skew": {"worker": 1, "local_batch": -4}, "at": "bring_up"}]},
            "faults[0].batch_size_skew.local_batch: must be >= 1 (got -4)",
        ),
        (
            {"faults": [{"batch_size_skew": {"worker": 2, "local_batch": 8}, "at": "bring_up"}]},
            "faults[0].batch_size_skew.worker: 2 is out of range; valid: 0..1 (cluster.workers is 2)",
        ),
        ({"cluster": {"training": {"dropout": 1.0}}}, "cluster.training.dropout: must be < 1.0 (got 1.0)"),
        ({"cluster": {"training": {"dropout": -0.1}}}, "cluster.training.dropout: must be >= 0.0 (got -0.1)"),
    ],
)
def test_bad_values_name_the_field_and_the_valid_values(data, expected):
    assert expected in problem(**data)


@pytest.mark.parametrize(
    "field, value, expected",
    [
        ("seeding", "per_replica", "seeding must be one of ('global', 'per_worker', 'unseeded')"),
        ("dropout", 1.0, "dropout must be >= 0 and < 1"),
        ("local_batch_size", -1, "local_batch_size must be an int >= 0"),
    ],
)
def test_worker_settings_refuse_bad_values_naming_the_field(field, value, expected):
    with pytest.raises(ValueError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        WorkerSettings(**{field: value})


def test_seed_for_each_mode():
    assert [seed_for(m, 42, 1) for m in ("global", "per_worker", "unseeded")] == [42, 43, None]
    assert seed_for("per_worker", 42, 0) == 42  # the chief keeps the scenario's seed


def test_mask_digest_formats_the_hash_and_tolerates_its_absence():
    assert mask_digest(255) == "00000000000000ff"
    assert mask_digest(None) == "" and mask_digest("not a number") == ""


@pytest.mark.parametrize(
    "training, workers, expected",
    [
        (
            {"strategy": "mirrored", "replicas": 2},
            2,
            "cluster.training.strategy: mirrored runs in one container: cluster.workers must be 1 (got 2)",
        ),
        ({"strategy": "mirrored"}, 1, "cluster.training.replicas: mirrored needs replicas 2..8"),
        ({"replicas": 2}, 2, "cluster.training.replicas: 2 replicas need strategy: mirrored"),
        (
            {"strategy": "mirrored", "replicas": 3},
            1,
            "cluster.training.global_batch: 64 is not divisible by 3 replicas",
        ),
        ({"strategy": "mirrored", "replicas": 9}, 1, "cluster.training.replicas: must be <= 8 (got 9)"),
        (
            {"strategy": "one_device"},
            1,
            "cluster.training.strategy: 'one_device' is not valid; valid: multi_worker_mirrored, mirrored",
        ),
    ],
)
def test_strategy_and_replicas_out_of_range_name_the_field(training, workers, expected):
    assert expected in problem(cluster={"workers": workers, "training": training})


def test_a_mirrored_one_worker_cluster_loads():
    data = {
        "name": "x",
        "description": "d",
        "explain": EXPLAIN,
        "cluster": {"workers": 1, "training": {"strategy": "mirrored", "replicas": 2}},
    }
    settings = scenario_from_dict(data, "x.yaml").cluster.training.to_worker_settings()
    assert (settings.strategy, settings.replicas, settings.local_batch(1 * settings.replicas)) == ("mirrored", 2, 32)


def test_worker_settings_refuse_replicas_without_the_mirrored_strategy():
    with pytest.raises(ValueError, match="replicas 2 needs strategy 'mirrored'"):
        WorkerSettings(replicas=2)
    with pytest.raises(ValueError, match="strategy must be one of"):
        WorkerSettings(strategy="parameter")


def test_a_faults_settings_are_checked_where_the_fault_names_them():
    assert WorkerSettings.change(seeding="per_worker", local_batch_size=8) == {
        "seeding": "per_worker",
        "local_batch_size": 8,
    }
    with pytest.raises(ValueError, match=r"unknown worker settings \['seding'\]; valid: \[.*'seeding'"):
        WorkerSettings.change(seding="per_worker")
    with pytest.raises(ValueError, match="local_batch_size must be an int >= 0, got -1"):
        WorkerSettings.change(local_batch_size=-1)
