"""The uninterrupted reference run is cached per key: everything that decides the
final weights must be in it, or a scenario is judged against another run."""

from dataclasses import replace

from chaos.backends.spec import Deployment
from chaos.runner.reference import reference_key
from chaos.worker.settings import WorkerSettings
from chaos.workload.launch import Launch

SPEC = Deployment(images=("w", "w"), proxy_image="p", settings=WorkerSettings(epochs=3))


def test_the_scenario_environment_of_the_built_in_harness_is_part_of_the_key():
    # TF_ENABLE_ONEDNN_OPTS changes the numerics: with it the run ends on other weights.
    onednn_off = replace(SPEC, launch=replace(Launch(), env={"TF_ENABLE_ONEDNN_OPTS": "0"}))
    assert reference_key(onednn_off, ["id"]) != reference_key(SPEC, ["id"])
    per_worker = replace(SPEC, env={1: {"TF_ENABLE_ONEDNN_OPTS": "0"}})
    assert reference_key(per_worker, ["id"]) != reference_key(SPEC, ["id"])


def test_the_key_is_stable_and_ignores_the_backup_dir():
    assert reference_key(SPEC, ["id"]) == reference_key(SPEC, ["id"])
    moved = replace(SPEC, settings=replace(SPEC.settings, backup_dir="/elsewhere"))
    assert reference_key(moved, ["id"]) == reference_key(SPEC, ["id"])
    assert reference_key(SPEC, ["other-image"]) != reference_key(SPEC, ["id"])
