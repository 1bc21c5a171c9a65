"""The committed schema and scenario files stay valid and in sync with the model."""

import json
from pathlib import Path

import jsonschema
import pytest

from chaos.scenario import schema
from chaos.scenario.loader import load_scenario, parse_yaml, scenario_files

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"
FILES = scenario_files(SCENARIOS)


def test_the_committed_schema_equals_the_generated_one():
    committed = schema.SCHEMA_PATH.read_text(encoding="utf-8")
    assert committed == schema.render(), "run: python -m chaos.scenario.schema"


def test_the_schema_is_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(json.loads(schema.SCHEMA_PATH.read_text()))


def test_there_are_scenarios():
    assert len(FILES) >= 9


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_scenario_loads_and_validates_against_the_schema(path):
    scenario = load_scenario(path)
    data = parse_yaml(path.read_text(), str(path))
    jsonschema.Draft202012Validator(schema.generate()).validate(data)
    # Small enough to run in well under a minute (a step takes about 5 ms; faults
    # that must hit a running job at a chosen epoch need a few seconds of training).
    training = scenario.cluster.training
    # Two workers; a one-host MirroredStrategy scenario runs its replicas in one.
    assert (scenario.cluster.workers == 2 or training.strategy == "mirrored") and training.total_steps <= 500
    assert scenario.explain.symptom and scenario.explain.cause and scenario.explain.fix
    # No recover: checks only in a scenario that asserts how recovery failed.
    assert scenario.expect and (
        scenario.recover or any(getattr(c, "states_failed_recovery", False) for c in scenario.expect)
    )


def test_the_schema_rejects_what_the_loader_rejects():
    validator = jsonschema.Draft202012Validator(schema.generate())
    base = {"name": "x", "description": "d", "explain": {"symptom": "s", "cause": "c", "fix": "f"}}
    assert validator.is_valid(base)
    assert not validator.is_valid({**base, "faults": [{"latncy": {"worker": 1}, "at": "bring_up"}]})
    assert not validator.is_valid({**base, "faults": [{"kill_worker": {"worker": 1}, "at": {"epoc": 1}}]})
    assert not validator.is_valid({**base, "extra": 1})
