"""The JSON Schema of the scenario format, generated from the model.

Editors use the committed ``schema.json`` (e.g. a ``# yaml-language-server:
$schema=...`` line); a unit test keeps it equal to what the model generates.
Regenerate after changing a fault, a check or the model::

    python -m chaos.scenario.schema
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chaos.scenario.model import Scenario

SCHEMA_PATH = Path(__file__).with_name("schema.json")


def generate() -> dict[str, Any]:
    schema = Scenario.model_json_schema(by_alias=True, mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "tfchaos scenario",
        **{k: v for k, v in schema.items() if k != "title"},
    }


def render() -> str:
    return json.dumps(generate(), indent=2, sort_keys=True) + "\n"


def main() -> None:
    SCHEMA_PATH.write_text(render(), encoding="utf-8")
    print(f"wrote {SCHEMA_PATH}")


if __name__ == "__main__":
    main()
