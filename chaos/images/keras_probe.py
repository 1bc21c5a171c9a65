"""Which Keras a job's image can give, asked of the image before any worker starts.

A scenario asks for a Keras through ``TF_USE_LEGACY_KERAS`` (TF >= 2.16 reads it at
import: truthy is tf-keras, Keras 2; anything else is Keras 3), in the workload's
``env`` or a fault's (``version_skew: {env: ...}``). An image that lacks what is
asked fails in every worker at import or first use; the run is refused instead,
naming the image and what it holds. The probe is one short container of the image
(no network, labelled, removed), run once per image id and process.
"""

from __future__ import annotations

import json

from chaos import LABEL_PROJECT, PROJECT
from chaos.errors import ScenarioError
from chaos.images.plans import LABEL_KIND

VARIABLE = "TF_USE_LEGACY_KERAS"
LEGACY_VALUES = ("true", "True", "1")  # TensorFlow's own test (tensorflow/__init__.py)
DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tf-keras", "keras")
_PROBE = (
    "import importlib.metadata as m, json\n"
    "out = {}\n"
    f"for d in {DISTRIBUTIONS!r}:\n"
    "    try: out[d] = m.version(d)\n"
    "    except m.PackageNotFoundError: pass\n"
    "print(json.dumps(out))\n"
)
_cache: dict[str, dict[str, str] | None] = {}


def packages(client, image: str) -> dict[str, str] | None:
    """Distribution -> version in ``image`` (None: the probe could not run there, e.g. no python3)."""
    key = client.images.get(image).id
    if key not in _cache:
        try:
            out = client.containers.run(
                image,
                ["python3", "-c", _PROBE],
                entrypoint=[],
                network_disabled=True,
                remove=True,
                labels={LABEL_PROJECT: PROJECT, LABEL_KIND: "probe"},
                stdout=True,
                stderr=False,
            )
            _cache[key] = json.loads(out.decode().strip().splitlines()[-1])
        except Exception:  # noqa: BLE001 - no python3, an odd entrypoint: the job shows it when it runs
            _cache[key] = None
    return _cache[key]


def _minor(version: str) -> int:
    parts = version.split(".")
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


def held(found: dict[str, str]) -> str:
    return ", ".join(f"{d} {v}" for d, v in sorted(found.items())) or "none of " + ", ".join(DISTRIBUTIONS)


def problem(image: str, value: str, found: dict[str, str]) -> str | None:
    """Why ``image`` cannot give the Keras ``TF_USE_LEGACY_KERAS=value`` asks for; None if it can."""
    tf = found.get("tensorflow-cpu") or found.get("tensorflow") or ""
    if value in LEGACY_VALUES:
        if "tf-keras" in found:
            return None
        return f"{VARIABLE}={value} asks for tf-keras (Keras 2), but {image} holds {held(found)} and no tf-keras"
    if tf and _minor(tf) < 16:
        return (
            f"{VARIABLE}={value} asks for Keras 3, but {image} holds TensorFlow {tf}, whose tf.keras is its own "
            f"Keras 2 ({held(found)}): Keras 3 is tf.keras from TF 2.16 on"
        )
    if not found.get("keras", "").startswith("3."):
        return f"{VARIABLE}={value} asks for Keras 3, but {image} holds {held(found)}"
    return None


def refuse_missing_keras(client, scenario_name: str, image: str, values: set[str]) -> None:
    """ScenarioError when ``image`` lacks a Keras one of ``values`` (of TF_USE_LEGACY_KERAS) asks for."""
    if not values:
        return
    found = packages(client, image)
    if found is None:
        return
    for value in sorted(values):
        why = problem(image, value, found)
        if why:
            raise ScenarioError(
                f"{scenario_name}: {why}",
                hint="install the Keras it asks for in the image (pip install tf-keras~=<TF's minor>, or a "
                f"TF >= 2.16 with keras 3), or drop {VARIABLE} from the scenario's env",
            )
