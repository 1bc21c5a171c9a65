"""The CI templates of examples/ci/ (issue 41, item 3), checked offline: each file
against its published schema as the check-jsonschema package vendors it
(SchemaStore's github-workflows.json, GitLab's gitlab-ci.json), and every `chaos`
command of their shared script against the CLI's own parser. Neither service is
reachable here; what was run of them is in docs/remote-engines.md."""

from __future__ import annotations

import json
import re
import shlex
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from ruamel.yaml import YAML  # YAML 1.2, as the services and check-jsonschema read it (PyYAML reads `on:` as True)

from chaos.cli import build_parser

CI = Path(__file__).resolve().parents[2] / "examples" / "ci"
SCHEMAS = {"github-actions.yml": "github-workflows.json", "gitlab-ci.yml": "gitlab-ci.json"}


def load(path: Path):
    return YAML(typ="safe").load(path.read_text())


def vendored(name: str) -> dict:
    return json.loads((resources.files("check_jsonschema.builtin_schemas.vendor") / name).read_text())


@pytest.mark.parametrize("template,schema", sorted(SCHEMAS.items()))
def test_the_template_validates_against_its_published_schema(template, schema):
    doc = load(CI / template)
    validator = jsonschema.Draft7Validator(vendored(schema))
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]
    assert errors == []


@pytest.mark.parametrize("template,schema", sorted(SCHEMAS.items()))
def test_the_schema_catches_a_broken_template(template, schema):
    doc = load(CI / template)
    job = doc["jobs"]["chaos"] if "jobs" in doc else doc["chaos-suite"]
    job["timeout-minutes" if "jobs" in doc else "artifacts"] = {"not": "valid here"}
    assert list(jsonschema.Draft7Validator(vendored(schema)).iter_errors(doc))


def test_both_templates_run_the_one_script_and_publish_the_reports():
    github, gitlab = ((CI / t).read_text() for t in ("github-actions.yml", "gitlab-ci.yml"))
    gl, gh = load(CI / "gitlab-ci.yml")["chaos-suite"], load(CI / "github-actions.yml")
    assert "sh ci/chaos-ci.sh chaos_suite" in github and "sh ci/chaos-ci.sh chaos_suite" in gitlab
    assert gl["variables"]["DOCKER_HOST"] == "tcp://docker:2375" and gl["services"][0]["name"] == "docker:dind"
    assert gl["artifacts"]["reports"]["junit"] == "reports/suite/junit.xml" and gl["artifacts"]["when"] == "always"
    steps = gh["jobs"]["chaos"]["steps"]
    assert set(gh["on"]) == {"pull_request", "push"}
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["if"] == "always()" and upload["with"]["path"] == "reports/"


def test_every_chaos_command_of_the_script_parses():
    script = (CI / "chaos-ci.sh").read_text()
    values = {
        "TF_VERSION": "2.20",
        "JOBS": "2",
        "REPORTS": "reports",
        "SUITE": "chaos_suite",
        "BASE_SUITE": "../base/chaos_suite",
    }
    commands = [line.strip().split(" ||")[0] for line in script.splitlines() if re.match(r"\s*chaos \w", line)]
    assert [c.split()[1] for c in commands] == ["images", "run", "run", "compare"]
    parser = build_parser()
    for command in commands:
        expanded = re.sub(r"\$(\w+)", lambda m: values[m.group(1)], command)
        args = parser.parse_args(shlex.split(expanded)[1:])
        assert "$" not in expanded and args is not None
