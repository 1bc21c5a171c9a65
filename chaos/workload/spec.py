"""A user's training job as a workload: what a scenario (or ``--workload FILE``) writes.

    cluster:
      workers: 2
      workload:
        image: acme/trainer:2.4              # an image on the engine, or:
        build: {context: ., dockerfile: Dockerfile}
        command: [python, train.py, --epochs, "4"]
        env: {DATA_DIR: /data}
        checkpoint_dir: /ckpt                # on the run's shared volume
        agent: auto                          # hook Keras fit from outside the job (or: none)
        progress: {step: 'step (?P<step>\\d+) loss (?P<loss>[0-9.e+-]+)'}   # log fallback

No workload means the built-in harness. A workload's relative ``build.context``
is resolved against the folder of the file that declared it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from chaos.workload.evidence import AGENT, LOG_ONLY, Evidence

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Set by the runner for every worker: a job may read, never set them.
RESERVED_ENV = (
    "TF_CONFIG",
    "CHAOS_WORKER_INDEX",
    "CHAOS_AGENT",
    "CHAOS_AGENT_WATCH",
    "CHAOS_CHECKPOINT_DIR",
    "CHAOS_WORKER_SETTINGS",
)


def check_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` unchanged, or ValueError naming a bad or reserved variable.

    The one check of variable names: ``cluster.env``, a workload's ``env`` and
    ``version_skew.env`` all use it. ``fullmatch``: ``$`` alone lets a name
    end in a line break.
    """
    bad = [k for k in env if not ENV_NAME.fullmatch(k)]
    if bad:
        name = bad[0]
        near = name.strip()
        meant = f"; did you mean {near!r}?" if ENV_NAME.fullmatch(near) else ""
        raise ValueError(
            f"{name!r} is not a valid environment variable name (valid: letters, digits and _, "
            f"not starting with a digit){meant}"
        )
    reserved = [k for k in env if k in RESERVED_ENV]
    if reserved:
        raise ValueError(f"{reserved[0]} is set by the framework for every worker; do not set it")
    return env


class _StrictSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BuildSpec(_StrictSpec):
    """Build the job's image from a Dockerfile, offline (no pull)."""

    context: str = Field(description="build context folder, relative to the file that declares it")
    dockerfile: str = Field("Dockerfile", description="Dockerfile path inside the context")
    args: dict[str, str] = Field(default_factory=dict, description="build arguments")


def _regex(value: str, required: tuple[str, ...] = ()) -> str:
    try:
        compiled = re.compile(value)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression: {exc}") from None
    for group in required:
        if group not in compiled.groupindex:
            raise ValueError(f"needs a named group (?P<{group}>...) (got {value!r})")
    return value


class ProgressPattern(_StrictSpec):
    """Read training progress from the job's log lines (for a job without the agent)."""

    step: str = Field(description="regex matching a step line; named groups: step (required), loss, epoch")
    done: str | None = Field(None, description="regex matching the line that says training finished")

    @field_validator("step")
    @classmethod
    def _step(cls, value: str) -> str:
        return _regex(value, ("step",))

    @field_validator("done")
    @classmethod
    def _done(cls, value: str | None) -> str | None:
        return value if value is None else _regex(value)


class WorkloadSpec(_StrictSpec):
    """A user's MultiWorkerMirroredStrategy job: its image and command."""

    image: str | None = Field(None, min_length=1, description="an image present on the Docker engine")
    build: BuildSpec | None = Field(None, description="or: build the image from a Dockerfile (offline)")
    command: list[str] | None = Field(None, min_length=1, description="the job's command; default: the image's own")
    env: dict[str, str] = Field(default_factory=dict, description="environment variables of every worker")
    checkpoint_dir: str = Field(
        description="absolute path where the job writes its backups (BackupAndRestore, CheckpointManager); "
        "the framework mounts the run's shared volume there"
    )
    agent: Literal["auto", "none"] = Field(
        "auto", description="auto: report the job's events by hooking Keras fit from outside its code; none: logs only"
    )
    progress: ProgressPattern | None = Field(
        None, description="log-line patterns for progress without the agent, or where it cannot hook the steps"
    )
    _base_dir: str | None = PrivateAttr(None)  # set by based_at: where the declaring file is

    @model_validator(mode="after")
    def _one_source(self) -> WorkloadSpec:
        if (self.image is None) == (self.build is None):
            raise ValueError("give image (an image on the engine) or build (a Dockerfile), exactly one")
        if not self.checkpoint_dir.startswith("/"):
            raise ValueError(f"checkpoint_dir must be an absolute path in the container (got {self.checkpoint_dir!r})")
        return self

    @field_validator("env")
    @classmethod
    def _env(cls, value: dict[str, str]) -> dict[str, str]:
        return check_env(value)

    def based_at(self, folder: str | Path) -> WorkloadSpec:
        """This spec with relative paths resolved against ``folder``."""
        copy = self.model_copy()
        copy._base_dir = str(folder)
        return copy

    @property
    def based(self) -> bool:
        return self._base_dir is not None

    @property
    def context_dir(self) -> Path | None:
        if self.build is None:
            return None
        context = Path(self.build.context)
        return context if context.is_absolute() else (Path(self._base_dir or ".") / context).resolve()

    @property
    def evidence(self) -> frozenset[Evidence]:
        if self.agent == "auto":
            return AGENT
        found = set(LOG_ONLY)
        if self.progress is not None:
            found.add(Evidence.STEPS)
            if self.progress.done is not None:
                found.add(Evidence.DONE)
        return frozenset(found)

    def judged_as(self, events) -> tuple[frozenset[Evidence], str]:
        """What a run of this job reports, and the words for it in a verdict's reason.

        Its kind's evidence; but a job whose agent said it cannot see its steps (its TF has no
        tf.function the agent can hook: a NoticeEvent of topic STEPS_UNOBSERVED) and that then
        reported none of its own (no step, plan or epoch end but the ones read from its log) is
        judged as ``agent: none`` would judge it: errors, and steps and done from ``progress``,
        and the start events the agent did send. Checks that need more are unknown, naming it."""
        from chaos.events import STEPS_UNOBSERVED, EpochEndEvent, NoticeEvent, PlanEvent, StepEvent

        label = f"agent: {self.agent}"
        if self.agent != "auto":
            return self.evidence, label
        events = [e for e in events if e.worker is not None]
        said = [e for e in events if isinstance(e, NoticeEvent) and e.topic == STEPS_UNOBSERVED]
        reported = any(
            (isinstance(e, StepEvent) and not e.logged) or isinstance(e, (PlanEvent, EpochEndEvent)) for e in events
        )
        if not said or reported:
            return self.evidence, label
        as_none = self.model_copy(update={"agent": "none"}).evidence | {Evidence.START}
        steps = "steps from its progress pattern" if self.progress is not None else "no progress pattern, so no steps"
        return frozenset(as_none), (
            f"agent: auto, judged as agent: none: on {said[0].source} {said[0].text.split(' (')[0]}; {steps}"
        )

    def describe(self) -> str:
        source = self.image if self.image else f"built from {self.build.context}/{self.build.dockerfile}"
        command = " ".join(self.command) if self.command else "its own command"
        return f"{source}, {command}, agent {self.agent}"
