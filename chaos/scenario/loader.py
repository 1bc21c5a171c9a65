"""Load scenario files: YAML (safe_load only) -> typed ``Scenario``.

``load_scenario(path)`` raises ``ScenarioError`` naming the file, each bad
field's path, the valid values and a close match. Files cannot run code:
``yaml.safe_load`` builds only plain data, and nothing in the format names a
Python object. Duplicate keys are errors (YAML would silently keep the last).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from chaos.errors import ScenarioError
from chaos.scenario.model import HINT, Scenario, render_problems
from chaos.scenario.problems import problems_of

SCENARIO_SUFFIXES = (".yaml", ".yml")


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects a key given twice in one mapping, and reads only
    true/false as booleans (YAML 1.2): YAML 1.1 turns on/off/yes/no into
    booleans, so `on: all` would silently become `True: all`."""


_UniqueKeyLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_UniqueKeyLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} is given twice", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def parse_yaml(text: str, source: str) -> Any:
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ScenarioError(f"{source}{where}: not valid YAML: {problem}", hint="check the indentation and quoting") from None


def scenario_from_dict(data: Any, source: str = "<scenario>") -> Scenario:
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: a scenario is a mapping (name:, description:, ...), got {type(data).__name__}", hint=HINT)
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(f"{source}: {render_problems(problems_of(exc, Scenario))}", hint=HINT) from None
    except ScenarioError as exc:  # cross-field problems from the model itself
        raise ScenarioError(f"{source}: {exc.message}", hint=exc.hint) from None


def load_scenario(path: str | Path) -> Scenario:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read: {exc.strerror}", hint="give the path of a scenario file, e.g. scenarios/<name>.yaml") from None
    scenario = scenario_from_dict(parse_yaml(text, str(path)), str(path))
    if scenario.name != path.stem:
        raise ScenarioError(
            f"{path}: name: {scenario.name!r} differs from the file name {path.stem!r}",
            hint=f"name the file {scenario.name}.yaml, or set name: {path.stem}",
        )
    return scenario


def scenario_files(directory: str | Path) -> list[Path]:
    return sorted(p for p in Path(directory).iterdir() if p.suffix in SCENARIO_SUFFIXES)


def load_scenarios(directory: str | Path) -> list[Scenario]:
    return [load_scenario(p) for p in scenario_files(directory)]
