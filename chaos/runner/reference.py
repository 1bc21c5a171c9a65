"""The uninterrupted run a recovered run must end like.

Computed once per (settings, worker images) on a fresh cluster, and cached on
disk keyed by the image ids, so it is recomputed whenever an image or a
setting changes and never otherwise.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from chaos.cluster.docker_cluster import ClusterSpec
from chaos.cluster.training import run_training
from chaos.errors import InfrastructureError
from chaos.events import StepEvent


@dataclass(frozen=True)
class Reference:
    digest: str
    final_loss: float | None


def cache_dir() -> Path:
    root = os.environ.get("TFCHAOS_CACHE") or os.path.join(Path.home(), ".cache", "tfchaos")
    return Path(root) / "reference"


def reference_key(spec: ClusterSpec, image_ids: list[str]) -> str:
    settings = asdict(spec.settings)
    settings.pop("backup_dir", None)
    blob = json.dumps({"settings": settings, "images": image_ids}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def uninterrupted_reference(spec: ClusterSpec, client, progress=None) -> Reference:
    image_ids = [client.images.get(tag).id for tag in spec.images]
    path = cache_dir() / f"{reference_key(spec, image_ids)}.json"
    if path.exists():
        data = json.loads(path.read_text())
        return Reference(data["digest"], data.get("final_loss"))
    if progress:
        progress("computing the uninterrupted reference run (cached afterwards)")
    result = run_training(spec)
    if not result.identical:
        raise InfrastructureError(
            f"the uninterrupted reference run ended with different weights per worker: {result.digests}",
            hint="the workload is not deterministic on this image; check the worker logs",
        )
    final = [e for e in result.events if isinstance(e, StepEvent) and e.step == spec.settings.total_steps]
    ref = Reference(next(iter(result.digests.values())), final[0].loss if final else None)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(ref)))
    return ref
