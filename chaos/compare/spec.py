"""One side of a comparison: an overlay applied to every scenario.

A SPEC is ``default`` (the scenarios as written), a YAML file, or inline
``key=value`` pairs separated by commas for the common changes::

    # candidate.yaml
    name: heartbeat-30s
    cluster:                        # deep-merged into each scenario's cluster
      training: {heartbeat_timeout_s: 30}
    proxy_image: local/toxiproxy:2.9   # optional: another Toxiproxy-API image

    --candidate tf=2.18,heartbeat_timeout_s=30
    --candidate cpus=1,memory_mb=3072          # smaller worker machines
    --candidate image=acme/trainer:2.5,env.XLA_FLAGS=--xla_gpu_autotune_level=0   # a user's job

Every scenario is validated again with the overlay, so a bad value is the same
clear error a scenario file gets, naming the spec.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from chaos.errors import ScenarioError
from chaos.scenario import safe_yaml
from chaos.scenario.loader import read_text
from chaos.scenario.model import Scenario

HINT = "a spec is `default`, a YAML file (name, cluster, proxy_image) or key=value pairs; docs/compare.md"

# Inline keys -> where they go in a scenario's cluster (or the run's options).
INLINE = {
    "tf": ("cluster", "tf_version"),
    "heartbeat_timeout_s": ("cluster", "training", "heartbeat_timeout_s"),
    "collective_timeout_s": ("cluster", "training", "collective_timeout_s"),
    "restart": ("cluster", "recovery", "restart"),
    "max_restarts": ("cluster", "recovery", "max_restarts"),
    "image": ("cluster", "workload", "image"),
    "cpus": ("cluster", "resources", "cpus"),
    "memory_mb": ("cluster", "resources", "memory_mb"),
    "proxy_image": ("proxy_image",),
}
FILE_KEYS = ("name", "cluster", "proxy_image")
NUMERIC = {
    "heartbeat_timeout_s",
    "collective_timeout_s",
    "max_restarts",
    "cpus",
    "memory_mb",
}  # the others stay text: tf=2.20 is not 2.2


@dataclass(frozen=True)
class ChangeSpec:
    name: str
    cluster: dict[str, Any] = field(default_factory=dict)
    proxy_image: str | None = None

    def apply(self, scenario: Scenario) -> Scenario:
        """``scenario`` with this overlay, validated again."""
        if not self.cluster:
            return scenario
        data = scenario.model_dump(by_alias=True, exclude_unset=True)
        cluster = data.setdefault("cluster", {})
        if "workload" in self.cluster and "workload" not in cluster:
            raise ScenarioError(
                f"spec {self.name}: changes the workload, but scenario {scenario.name} runs the built-in harness",
                hint="compare workload images on scenarios that name your job (or run with --workload)",
            )
        data["cluster"] = _merge(cluster, self.cluster)
        workload, given = data["cluster"].get("workload"), self.cluster.get("workload") or {}
        if isinstance(workload, dict) and given.keys() & {"image", "build"}:
            # the spec's image (or build) replaces the scenario's: a job is one or the other, never both
            workload.pop("build" if "image" in given else "image", None)
        try:
            changed = type(scenario).model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ScenarioError(
                f"spec {self.name} on scenario {scenario.name}: {where}: {first['msg']}", hint=HINT
            ) from None
        changed._source = scenario._source
        return changed


def _merge(base: dict, overlay: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _inline(text: str) -> ChangeSpec:
    cluster: dict[str, Any] = {}
    proxy_image = None
    for pair in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = pair.partition("=")
        if sep and key.startswith("env.") and len(key) > 4:
            cluster.setdefault("env", {})[key[4:]] = value  # every worker, harness or job
            continue
        if not sep or key not in INLINE:
            raise ScenarioError(
                f"spec {text!r}: {pair!r} is not key=value with a known key",
                hint=f"valid keys: {', '.join(INLINE)}, env.NAME; or give a YAML file",
            )
        path = INLINE[key]
        if path == ("proxy_image",):
            proxy_image = value
            continue
        node = cluster
        for part in path[1:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = _scalar(value) if key in NUMERIC else value
    return ChangeSpec(name=text, cluster=cluster, proxy_image=proxy_image)


def _scalar(value: str) -> Any:
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


def load_spec(text: str) -> ChangeSpec:
    """``default``, a YAML file, or inline key=value pairs."""
    if text == "default":
        return ChangeSpec(name="default")
    path = Path(text)
    if path.suffix in (".yaml", ".yml") or path.is_file():
        return _from_file(path)
    return _inline(text)


def _from_file(path: Path) -> ChangeSpec:
    try:
        data, _ = safe_yaml.read(read_text(path))
    except safe_yaml.YamlProblem as exc:
        raise ScenarioError(f"{path}:{exc}", hint=HINT) from None
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: a spec is a mapping (name, cluster, proxy_image)", hint=HINT)
    unknown = [k for k in data if k not in FILE_KEYS]
    if unknown:
        raise ScenarioError(f"{path}: unknown key {unknown[0]!r}", hint=f"valid keys: {', '.join(FILE_KEYS)}")
    cluster = data.get("cluster") or {}
    if not isinstance(cluster, dict):
        raise ScenarioError(f"{path}: cluster: a mapping merged into every scenario's cluster", hint=HINT)
    proxy_image = data.get("proxy_image")
    if proxy_image is not None and not isinstance(proxy_image, str):
        raise ScenarioError(f"{path}: proxy_image: an image name (text)", hint=HINT)
    return ChangeSpec(name=str(data.get("name") or path.stem), cluster=cluster, proxy_image=proxy_image)
