"""Faults in what workers are created with: their image, environment, data settings.

Both apply when a worker is created (``applies_at_create``): at ``bring_up``
the workers come up skewed; healing redeploys them with the healthy config.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, field_validator, model_validator

from chaos.backends.abilities import WorkerOverrides
from chaos.backends.base import ClusterControl
from chaos.faults.base import Fault, WorkersFault, register_fault
from chaos.faults.undo import Undo, override_workers
from chaos.images.versions import buildable_version
from chaos.worker.settings import WorkerSettings
from chaos.workload.spec import check_env


@register_fault
class VersionSkew(WorkersFault):
    """Run some workers on another TF version's image (or another image of the job) and/or other environment variables."""

    name: ClassVar[str] = "version_skew"
    applies_at_create: ClassVar[bool] = True
    uses_abilities: ClassVar[tuple[type, ...]] = (WorkerOverrides,)
    workers: list[int] = Field([1], min_length=1, description="the skewed workers; 0 is the chief")
    tf_version: str | None = Field(
        None, pattern=r"^\d+\.\d+(\.\d+)?$", description="their TF version (an image is built for it), quoted: '2.15'"
    )
    image: str | None = Field(
        None, min_length=1, description="or: their image, for a user's job (e.g. the job built on another TF)"
    )
    env: dict[str, str] = Field(default_factory=dict, description="environment variables set on them only")

    @field_validator("tf_version")
    @classmethod
    def _buildable(cls, value: str | None) -> str | None:
        return value if value is None else buildable_version(value)

    @field_validator("env")
    @classmethod
    def _env(cls, value: dict[str, str]) -> dict[str, str]:
        return check_env(value)  # the names cluster.env accepts

    @model_validator(mode="after")
    def _something_differs(self) -> VersionSkew:
        if self.tf_version is not None and self.image is not None:
            raise ValueError("give tf_version (the built-in harness) or image (a user's job), not both")
        if self.tf_version is None and self.image is None and not self.env:
            raise ValueError("give tf_version, image or env: otherwise nothing differs")
        return self

    def hooks(self) -> frozenset[str]:
        # The framework builds an image per TF version of its own harness only.
        return frozenset({"tf_images"}) if self.tf_version else frozenset()

    def tf_versions(self) -> set[str]:
        return {self.tf_version} if self.tf_version else set()

    def images(self) -> set[str]:
        return {self.image} if self.image else set()

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        from chaos.images import worker_image_tag

        image = worker_image_tag(self.tf_version) if self.tf_version else self.image
        override_workers(cluster, undo, self.name, self.workers, image=image, env=self.env)


@register_fault
class ReusedSeed(Fault):
    """Every worker reads the same batches: one shuffle seed and input sharding off."""

    name: ClassVar[str] = "reused_seed"
    uses_hooks: ClassVar[frozenset[str]] = frozenset({"settings"})  # the harness's sharding switch
    applies_at_create: ClassVar[bool] = True
    uses_abilities: ClassVar[tuple[type, ...]] = (WorkerOverrides,)

    @property
    def target(self) -> str:
        return "all workers"

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        # The data of worker i is f(seed, step, shard); shard_data off makes
        # every shard 0, as a shared seed without sharding does in tf.data.
        override_workers(
            cluster, undo, self.name, range(cluster.num_slots), settings=WorkerSettings.change(shard_data=False)
        )
