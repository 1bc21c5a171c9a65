"""version_skew and reused_seed: overrides of how workers are created."""

import dataclasses

import pytest
from fake_backend import FakeCluster
from pydantic import ValidationError

from chaos.faults import FAULTS, ReusedSeed, VersionSkew
from chaos.faults.undo import Undo
from chaos.images import worker_image_tag
from chaos.worker.settings import WorkerSettings


@pytest.fixture
def cluster():
    return FakeCluster(num_slots=3)


# --- version_skew -------------------------------------------------------------


def test_version_skew_overrides_each_listed_worker_with_the_image_of_its_tf_version_and_env(cluster):
    undo = Undo()
    fault = VersionSkew(workers=[1, 2], tf_version="2.15", env={"LD_LIBRARY_PATH": "/opt/cuda-11/lib64"})
    fault.inject(cluster, undo)
    expected = {
        "image": worker_image_tag("2.15"),
        "env": {"LD_LIBRARY_PATH": "/opt/cuda-11/lib64"},
        "settings": {},
        "cluster_config": None,
    }
    assert worker_image_tag("2.15") == "tfchaos/worker:tf2.15"
    assert cluster.overrides[1] == {"version_skew": expected}
    assert cluster.overrides[2] == {"version_skew": expected}
    assert 0 not in cluster.overrides  # the chief was not listed
    assert [c[:3] for c in cluster.calls] == [("override", 1, "version_skew"), ("override", 2, "version_skew")]


def test_version_skew_with_env_only_keeps_the_image(cluster):
    undo = Undo()
    VersionSkew(workers=[0], env={"TF_ENABLE_ONEDNN_OPTS": "0"}).inject(cluster, undo)
    assert cluster.overrides[0]["version_skew"]["image"] is None
    assert cluster.overrides[0]["version_skew"]["env"] == {"TF_ENABLE_ONEDNN_OPTS": "0"}


def test_version_skew_with_tf_version_only_sets_an_empty_env(cluster):
    undo = Undo()
    VersionSkew(tf_version="2.18").inject(cluster, undo)  # default: worker 1
    assert cluster.overrides == {
        1: {"version_skew": {"image": "tfchaos/worker:tf2.18", "env": {}, "settings": {}, "cluster_config": None}}
    }


def test_version_skew_heal_clears_every_override_and_is_idempotent(cluster):
    undo = Undo()
    fault = VersionSkew(workers=[1, 2], tf_version="2.15")
    undo(cluster)  # never injected: clearing nothing is harmless
    fault.inject(cluster, undo)
    cluster.override(1, "someone_else", env={"X": "1"})  # another owner's override stays
    undo(cluster)
    undo(cluster)
    assert cluster.active_overrides() == {1: ["someone_else"]}


def test_version_skew_needs_tf_version_or_env():
    with pytest.raises(ValidationError, match="give tf_version, image or env"):
        VersionSkew(workers=[1])
    with pytest.raises(ValidationError, match="give tf_version, image or env"):
        VersionSkew(workers=[1], env={})


@pytest.mark.parametrize("bad", [{"workers": []}, {"tf_version": "2.x"}, {"tf_version": "two"}, {"colour": "red"}])
def test_version_skew_rejects_bad_parameters(bad):
    with pytest.raises(ValidationError):
        VersionSkew(**{"env": {"A": "1"}, **bad})


def test_version_skew_names_the_images_it_needs_and_its_targets():
    assert VersionSkew(tf_version="2.15").tf_versions() == {"2.15"}
    assert VersionSkew(env={"A": "1"}).tf_versions() == set()
    fault = VersionSkew(workers=[0, 2], tf_version="2.15", env={"A": "1"})
    assert fault.target == "worker-0,worker-2"
    assert VersionSkew.applies_at_create
    event = fault.inject_event(5.0)
    assert (event.fault, event.target) == ("version_skew", "worker-0,worker-2")
    assert event.params == {"workers": [0, 2], "tf_version": "2.15", "image": None, "env": {"A": "1"}}


# --- reused_seed --------------------------------------------------------------


def test_reused_seed_turns_sharding_off_on_every_worker(cluster):
    undo = Undo()
    fault = ReusedSeed()
    fault.inject(cluster, undo)
    for w in range(3):
        assert cluster.overrides[w] == {
            "reused_seed": {"image": None, "env": {}, "settings": {"shard_data": False}, "cluster_config": None}
        }
    assert fault.target == "all workers" and ReusedSeed.applies_at_create


def test_reused_seed_setting_is_a_real_worker_setting():
    # DockerCluster.override applies settings with dataclasses.replace: a
    # misspelled field would fail at the inject, not silently do nothing.
    settings = dataclasses.replace(WorkerSettings(), shard_data=False)
    assert settings.shard_data is False and WorkerSettings().shard_data is True


def test_reused_seed_heal_clears_every_worker_it_overrode(cluster):
    undo = Undo()
    fault = ReusedSeed()
    undo(cluster)
    assert cluster.calls == []  # never injected: nothing to clear
    fault.inject(cluster, undo)
    undo(cluster)
    assert cluster.active_overrides() == {}
    assert sorted(c[1] for c in cluster.calls if c[0] == "clear_override") == [0, 1, 2]


def test_the_environment_faults_are_registered():
    assert FAULTS.get("version_skew") is VersionSkew
    assert FAULTS.get("reused_seed") is ReusedSeed
