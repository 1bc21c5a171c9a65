"""How faults change a worker's next (re)start, and the environment a worker is
created with: the same on every backend (``WorkerOverrides.override`` and
``StorageWriteLimits.limit_writes``, chaos.backends.abilities).

Per worker index, per owner (a fault's name): an image, environment, harness
settings, a TF_CONFIG text and a write limit, applied in the order they came.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from chaos.agent.batching import WATCH_ENV, watch_text
from chaos.backends.spec import Deployment, WriteLimit
from chaos.worker.cluster_env import cluster_env
from chaos.worker.emit import WORKER_INDEX_ENV
from chaos.worker.settings import WorkerSettings


@dataclass(frozen=True)
class WorkerOverride:
    """How a fault changes a worker's next container (image, environment, settings)."""

    image: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    cluster_config: str | None = None  # TF_CONFIG text in place of the healthy one
    write_limit: WriteLimit | None = None  # set at create only


class Overrides(dict):
    """``{index: {owner: WorkerOverride}}`` for one cluster of ``spec``."""

    def __init__(self, spec: Deployment) -> None:
        super().__init__()
        self.spec = spec

    def set(self, index: int, owner: str, override: WorkerOverride) -> None:
        if override.settings:
            dataclasses.replace(self.spec.settings, **override.settings)  # fail now on a bad field
        self.setdefault(index, {})[owner] = override

    def clear(self, index: int, owner: str) -> None:
        self.get(index, {}).pop(owner, None)

    def of(self, index: int) -> list[WorkerOverride]:
        return list(self.get(index, {}).values())

    def worker_config(self, index: int) -> tuple[str, WorkerSettings, dict[str, str]]:
        """The image, settings and extra environment worker ``index`` is created with."""
        image, settings, env = self.spec.images[index], self.spec.settings, dict(self.spec.env.get(index, {}))
        for o in self.of(index):
            image = o.image or image
            settings = dataclasses.replace(settings, **o.settings)
            env.update(o.env)
        return image, settings, env

    def cluster_config(self, index: int, healthy: str) -> str:
        """The TF_CONFIG text worker ``index`` is created with (a fault's, or ``healthy``)."""
        text = healthy
        for o in self.of(index):
            text = o.cluster_config if o.cluster_config is not None else text
        return text

    def write_limits(self, index: int) -> list[WriteLimit]:
        return [o.write_limit for o in self.of(index) if o.write_limit is not None]

    def environment(self, index: int, healthy_tf_config: str) -> tuple[str, dict[str, str]]:
        """Worker ``index``'s image and the whole environment it is created with: the cluster's
        TF_CONFIG (or a fault's), its index, the harness's settings, the job's and the faults' env."""
        image, settings, extra_env = self.worker_config(index)
        launch = self.spec.launch
        # A user's job reads TF_CONFIG; the harness reads what its resolver setting says.
        resolver = settings.cluster_resolver if launch.harness_settings else "tf_config"
        env = {
            **cluster_env(self.cluster_config(index, healthy_tf_config), resolver),
            WORKER_INDEX_ENV: str(index),
            **(settings.to_env() if launch.harness_settings else {}),
            **({WATCH_ENV: watch_text(self.spec.watched_steps)} if self.spec.watched_steps else {}),
            **launch.env,
            **extra_env,
        }
        return image, env
