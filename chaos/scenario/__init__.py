"""Scenarios: the YAML format, its typed model, loading and validation.

Public names are loaded lazily (``from chaos.scenario import load_scenario``):
importing the package does not build the model, which needs both registries
(``chaos.registry``) filled by ``chaos.faults`` and ``chaos.checks`` first.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Scenario": "chaos.scenario.model",
    "ClusterSpec": "chaos.scenario.model",
    "TrainingSpec": "chaos.scenario.model",
    "RecoveryPolicy": "chaos.scenario.model",
    "Explain": "chaos.scenario.model",
    "Timeouts": "chaos.scenario.model",
    "FaultStep": "chaos.scenario.model",
    "AtBringUp": "chaos.scenario.triggers",
    "AtStep": "chaos.scenario.triggers",
    "AtEpoch": "chaos.scenario.triggers",
    "AtSeconds": "chaos.scenario.triggers",
    "load_scenario": "chaos.scenario.loader",
    "load_scenarios": "chaos.scenario.loader",
    "load_many": "chaos.scenario.loader",
    "scenario_paths": "chaos.scenario.loader",
    "scenario_from_dict": "chaos.scenario.loader",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'chaos.scenario' has no attribute {name!r}")
