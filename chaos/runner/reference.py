"""The uninterrupted run a recovered run must end like.

Computed once per (settings, worker images) on a fresh cluster, and cached on
disk keyed by the image ids, so it is recomputed whenever an image or a
setting changes and never otherwise.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from chaos import interrupts
from chaos.backends.base import Backend
from chaos.backends.spec import Deployment
from chaos.errors import InfrastructureError
from chaos.eventlog import EventLog
from chaos.events import StepEvent
from chaos.runner.training import run_training
from chaos.workload.evidence import Evidence, unproduced

CURVE_POINTS = 240  # enough for a line across a report's figure; the cache stays a few KB


@dataclass(frozen=True)
class Reference:
    digest: str  # "" when the job reports none (``unproduced`` says why)
    final_loss: float | None
    # The chief's progress: (seconds since its first step, global step, loss),
    # what a report draws beside the interrupted run; () in older cache files.
    curve: tuple[tuple[float, int, float | None], ...] = ()
    # (evidence, why) the job did not produce although it trained to its end: a
    # custom loop with no Keras fit and no report call gives no digest, and a check
    # that needs one is unknown with that reason (chaos.workload.evidence.unproduced).
    unproduced: tuple[tuple[str, str], ...] = ()


def progress_curve(events, points: int = CURVE_POINTS) -> tuple[tuple[float, int, float | None], ...]:
    """Worker 0's steps, thinned to at most ``points`` (the last one kept)."""
    steps = [e for e in events if isinstance(e, StepEvent) and e.worker == 0]
    if not steps:
        return ()
    every = max(1, -(-len(steps) // points))
    kept = steps[::every] if steps[::every][-1] is steps[-1] else [*steps[::every], steps[-1]]
    t0 = steps[0].t
    return tuple((round(e.t - t0, 3), e.step, e.loss if math.isfinite(e.loss) else None) for e in kept)


def cache_dir() -> Path:
    root = os.environ.get("TFCHAOS_CACHE") or os.path.join(Path.home(), ".cache", "tfchaos")
    return Path(root) / "reference"


def reference_key(spec: Deployment, image_ids: list[str]) -> str:
    """Keyed on everything that decides the final weights: the images (by id),
    and the harness's settings and the workers' extra environment, or the job's
    command and environment."""
    launch = spec.launch
    if launch.builtin:
        settings = asdict(spec.settings)
        settings.pop("backup_dir", None)
        # The scenario's environment too (TF_ENABLE_ONEDNN_OPTS changes the numerics):
        # once left out, a scenario with it was judged against a run without it.
        what = {
            "settings": settings,
            "env": launch.env,
            "worker_env": {str(i): env for i, env in sorted(spec.env.items()) if env},
        }
    else:
        what = {"command": list(launch.command or ()), "env": launch.env, "checkpoint_dir": launch.checkpoint_dir}
    blob = json.dumps({**what, "images": image_ids}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


@contextlib.contextmanager
def _locked(path: Path):
    """One process computes a given reference; the others wait and read it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with interrupts.file_lock(str(path.with_suffix(".lock"))):  # a stopped run stops waiting
        yield


def _cached(path: Path) -> Reference | None:
    try:
        data = json.loads(path.read_text())
        curve = tuple((float(t), int(step), loss) for t, step, loss in data.get("curve") or ())
        unproduced = tuple((str(e), str(why)) for e, why in data.get("unproduced") or ())
        if not data["digest"] and not unproduced:
            return None  # an empty digest taken for one (report.done() without weights): compute it again
        return Reference(data["digest"], data.get("final_loss"), curve, unproduced)
    except (OSError, ValueError, KeyError, TypeError):
        return None  # absent, or a torn write of a killed run: compute it again


def uninterrupted_reference(
    spec: Deployment, backend: Backend, progress=None, *, stop: EventLog | None = None
) -> Reference:
    image_ids = [backend.image_id(tag) for tag in spec.images]
    path = cache_dir() / f"{reference_key(spec, image_ids)}.json"
    cached = _cached(path)
    if cached is not None:
        return cached
    with _locked(path):
        cached = _cached(path)  # computed by another run while this one waited
        if cached is not None:
            return cached
        if stop is not None:
            stop.raise_if_stopped()  # cancelled while waiting for the lock
        return _compute(spec, backend, path, progress, stop)


def _compute(spec: Deployment, backend: Backend, path: Path, progress, stop: EventLog | None) -> Reference:
    if progress:
        progress("computing the uninterrupted reference run (cached afterwards)")
    # Nothing restarts in an uninterrupted run: no standby containers.
    result = run_training(dataclasses.replace(spec, standby=False), backend, events=EventLog(stopped_with=stop))
    # A job that reports no digest (a custom loop with no Keras fit and no report
    # call) is not a nondeterministic one: the checks that need a digest are
    # unknown, saying why, and the run goes on.
    missing = unproduced(result.events)
    if missing and progress:
        progress(f"the uninterrupted run: {'; '.join(missing.values())}")
    if Evidence.WEIGHTS.value not in missing and not result.identical:
        raise InfrastructureError(
            f"the uninterrupted reference run ended with different weights per worker: {result.digests}",
            hint="the workload is not deterministic on this image; check the worker logs",
        )
    last = max((e.step for e in result.events if isinstance(e, StepEvent)), default=0)
    final = [e for e in result.events if isinstance(e, StepEvent) and e.step == last]
    digest = "" if Evidence.WEIGHTS.value in missing else next(iter(result.digests.values()))
    ref = Reference(
        digest, final[0].loss if final else None, progress_curve(result.events), tuple(sorted(missing.items()))
    )
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(asdict(ref)))
    tmp.replace(path)  # atomic: a reader never sees half a file
    return ref
