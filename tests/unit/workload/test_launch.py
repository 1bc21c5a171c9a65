"""How a user's workload spec becomes the worker's launch."""

from __future__ import annotations

from chaos.agent.layer import AGENT_DIR
from chaos.workload.launch import Launch
from chaos.workload.spec import WorkloadSpec


def spec(**fields) -> WorkloadSpec:
    return WorkloadSpec.model_validate(
        {"image": "acme/trainer:1", "command": ["python", "train.py"], "checkpoint_dir": "/ckpt", **fields}
    )


def test_a_scenario_pythonpath_keeps_the_agent_first():
    launch = Launch.of(spec(env={"PYTHONPATH": "/app/src"}))
    assert launch.env["PYTHONPATH"] == f"{AGENT_DIR}:/app/src"


def test_without_the_agent_the_pythonpath_is_the_users():
    launch = Launch.of(spec(agent="none", env={"PYTHONPATH": "/app/src"}))
    assert launch.env["PYTHONPATH"] == "/app/src"
    assert "CHAOS_AGENT" not in launch.env


def test_the_checkpoint_dir_is_passed_to_the_job():
    launch = Launch.of(spec(checkpoint_dir="/ckpt"))
    assert launch.env["CHAOS_CHECKPOINT_DIR"] == "/ckpt" and launch.checkpoint_dir == "/ckpt"
