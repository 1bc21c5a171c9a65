"""The typed scenario: what a YAML file parses into, or what Python builds.

    Scenario(
        name="killed-worker-recovers-from-checkpoint",
        description="...",
        explain=Explain(symptom="...", cause="...", fix="..."),
        faults=[FaultStep(KillWorker(worker=1), AtEpoch(epoch=2))],
        expect=[ErrorRaised(class_="UnavailableError", workers=[0])],
        recover=[RestoredSameCheckpoint(), Completed()],
    )

Validation of references between fields (a worker index beyond the cluster,
a check naming a fault that does not exist, a trigger past the last step) runs
here too and raises ``ScenarioError`` listing every problem with its path.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, PlainValidator, WithJsonSchema, model_validator

from chaos.checks import RECOVERY_CHECKS, SYMPTOM_CHECKS, Check
from chaos.errors import ScenarioError
from chaos.faults import FAULTS
from chaos.images.versions import buildable_version
from chaos.scenario.entries import FaultStep, check_type, fault_step_type
from chaos.scenario.triggers import AtBringUp, AtEpoch, AtStep
from chaos.timeline import RunInfo
from chaos.worker.settings import WorkerSettings

MAX_WORKERS = 4
DEFAULT_TF_VERSION = "2.20"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def _save_freq(value: Any) -> str | int:
    if value == "epoch" or (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
        return value
    raise ValueError(f"must be 'epoch' or a number of steps >= 1 (got {value!r})")


SaveFreq = Annotated[
    Union[Literal["epoch"], int],
    PlainValidator(_save_freq),
    WithJsonSchema({"anyOf": [{"const": "epoch"}, {"type": "integer", "minimum": 1}]}),
]


def _version_text(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise ValueError(f"quote the version: YAML reads it as the number {value!r} (2.20 becomes 2.2); got {value!r}")
    return value


TfVersion = Annotated[
    str,
    BeforeValidator(_version_text),
    Field(pattern=r"^\d+\.\d+(\.\d+)?$"),
    AfterValidator(buildable_version),
]


class Explain(_Strict):
    """For an engineer who meets this failure in production."""

    symptom: str = Field(min_length=1, description="what it looks like in the logs (exact messages)")
    cause: str = Field(min_length=1, description="why it happens")
    fix: str = Field(min_length=1, description="how to fix or prevent it")


class TrainingSpec(_Strict):
    """Training settings; field names match ``chaos.worker.settings.WorkerSettings``."""

    epochs: int = Field(5, ge=1, le=1000)
    steps_per_epoch: int = Field(20, ge=1, le=100_000)
    global_batch: int = Field(64, ge=1)
    features: int = Field(20, ge=1)
    hidden: int = Field(32, ge=1)
    seed: int = Field(42, ge=0)
    save_freq: SaveFreq = Field("epoch", description="'epoch', or back up every N steps")
    heartbeat_timeout_s: float = Field(10.0, gt=0, description="coordination service heartbeat timeout")
    collective_timeout_s: float = Field(0.0, ge=0, description="per-collective timeout; 0 = none")
    learning_rate: float = Field(0.05, gt=0)
    device_memory_mb: int = Field(
        0, ge=0, description="device memory per worker, MB (0: all); GPU: logical device limit, CPU: address space"
    )

    def to_worker_settings(self) -> WorkerSettings:
        return WorkerSettings(**self.model_dump())

    # Derived counts come from WorkerSettings, so the worker and the checks agree.
    @property
    def total_steps(self) -> int:
        return self.to_worker_settings().total_steps

    @property
    def save_interval_steps(self) -> int:
        return self.to_worker_settings().save_interval_steps


class RecoveryPolicy(_Strict):
    restart: Literal["all", "failed", "none"] = Field(
        "all", description="which workers the runner restarts when one exits"
    )
    max_restarts: int = Field(1, ge=0, le=10)


class ClusterSpec(_Strict):
    workers: int = Field(2, ge=1, le=MAX_WORKERS)
    tf_version: TfVersion = Field(DEFAULT_TF_VERSION, description="every worker's image, unless tf_versions says otherwise")
    tf_versions: Optional[list[TfVersion]] = Field(None, description="one TF version per worker index")
    training: TrainingSpec = TrainingSpec()
    recovery: RecoveryPolicy = RecoveryPolicy()

    def tf_version_of(self, worker: int) -> str:
        return self.tf_versions[worker] if self.tf_versions else self.tf_version

    def worker_settings(self) -> dict[str, Any]:
        """Keyword arguments for ``chaos.worker.settings.WorkerSettings``."""
        return self.training.model_dump()


class Timeouts(_Strict):
    bring_up: float = Field(120.0, gt=0, description="seconds for every worker to start")
    symptom: float = Field(60.0, gt=0, description="seconds from the inject for the symptom to show")
    total: float = Field(300.0, gt=0, description="seconds for the whole run")


FaultStepField = fault_step_type(FAULTS)
SymptomCheckField = check_type(SYMPTOM_CHECKS)
RecoveryCheckField = check_type(RECOVERY_CHECKS)


class Scenario(_Strict):
    """A cluster shape, faults with their triggers, and the checks to judge them."""

    name: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", description="kebab-case; the file's name")
    description: str = Field(min_length=1)
    explain: Explain
    cluster: ClusterSpec = ClusterSpec()
    faults: list[FaultStepField] = Field(default_factory=list)
    expect: list[SymptomCheckField] = Field(default_factory=list, description="symptom checks")
    recover: list[RecoveryCheckField] = Field(default_factory=list, description="recovery checks")
    timeouts: Timeouts = Timeouts()

    @model_validator(mode="after")
    def _references(self) -> Scenario:
        problems = reference_problems(self)
        if problems:
            raise ScenarioError(render_problems(problems), hint=HINT)
        return self

    def tf_versions(self) -> list[str]:
        """Every TF version whose worker image this scenario needs (cluster and faults)."""
        versions = {self.cluster.tf_version_of(i) for i in range(self.cluster.workers)}
        for step in self.faults:
            versions |= step.fault.tf_versions()
        return sorted(versions)

    @property
    def checks(self) -> list[Check]:
        return [*self.expect, *self.recover]

    def run_info(self, reference_digest: str | None = None, reference_final_loss: float | None = None) -> RunInfo:
        training = self.cluster.training
        return RunInfo(
            num_workers=self.cluster.workers,
            steps_per_epoch=training.steps_per_epoch,
            epochs=training.epochs,
            save_interval_steps=training.save_interval_steps,
            reference_digest=reference_digest,
            reference_final_loss=reference_final_loss,
        )

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


HINT = "docs/scenarios.md describes the format; `chaos list` shows every fault and check with its parameters"


def render_problems(problems: list[str]) -> str:
    if len(problems) == 1:
        return problems[0]
    return f"{len(problems)} problems:\n" + "\n".join(f"  {p}" for p in problems)


def reference_problems(scenario: Scenario) -> list[str]:
    """Problems that span fields: each as ``path: message``."""
    problems: list[str] = []
    workers = scenario.cluster.workers
    training = scenario.cluster.training
    valid_workers = f"valid: 0..{workers - 1} (cluster.workers is {workers})"
    if scenario.cluster.tf_versions is not None and len(scenario.cluster.tf_versions) != workers:
        problems.append(f"cluster.tf_versions: lists {len(scenario.cluster.tf_versions)} versions for {workers} workers")
    if training.global_batch % workers:
        problems.append(f"cluster.training.global_batch: {training.global_batch} is not divisible by {workers} workers")
    started = False
    for i, step in enumerate(scenario.faults):
        here = f"faults[{i}]"
        worker = getattr(step.fault, "worker", None)
        if worker is not None and worker >= workers:
            problems.append(f"{here}.{step.name}.worker: {worker} is out of range; {valid_workers}")
        for w in getattr(step.fault, "workers", None) or []:
            if not 0 <= w < workers:
                problems.append(f"{here}.{step.name}.workers: {w} is out of range; {valid_workers}")
        if isinstance(step.at, AtStep) and step.at.step > training.total_steps:
            problems.append(f"{here}.at.step: {step.at.step} is past the last step ({training.total_steps})")
        if isinstance(step.at, AtEpoch) and step.at.epoch >= training.epochs:
            problems.append(f"{here}.at.epoch: {step.at.epoch} is past the last epoch ({training.epochs - 1}, 0-based)")
        until = step.until
        if isinstance(until, AtStep) and until.step > training.total_steps:
            problems.append(f"{here}.until.step: {until.step} is past the last step ({training.total_steps}): it would never heal")
        if isinstance(until, AtEpoch) and until.epoch >= training.epochs:
            problems.append(f"{here}.until.epoch: {until.epoch} is past the last epoch ({training.epochs - 1}, 0-based): it would never heal")
        if isinstance(until, AtStep) and isinstance(step.at, AtStep) and until.step <= step.at.step:
            problems.append(f"{here}.until.step: {until.step} is not after at.step {step.at.step}: the fault would heal as it fires")
        if isinstance(until, AtEpoch) and isinstance(step.at, AtEpoch) and until.epoch <= step.at.epoch:
            problems.append(f"{here}.until.epoch: {until.epoch} is not after at.epoch {step.at.epoch}: the fault would heal as it fires")
        if isinstance(step.at, AtBringUp) and started:
            problems.append(f"{here}.at: bring_up must come before faults that fire during training")
        started = started or not isinstance(step.at, AtBringUp)
    if scenario.expect and not scenario.faults:
        problems.append("expect: symptom checks are judged over a fault's window, but faults is empty")
    for role, checks in (("expect", scenario.expect), ("recover", scenario.recover)):
        for i, check in enumerate(checks):
            here = f"{role}[{i}].{check.name}"
            for w in getattr(check, "workers", None) or []:
                if not 0 <= w < workers:
                    problems.append(f"{here}.workers: {w} is out of range; {valid_workers}")
            index = getattr(check, "fault", None)
            if index is not None and scenario.faults and index >= len(scenario.faults):
                problems.append(f"{here}.fault: {index} is out of range; valid: 0..{len(scenario.faults) - 1}")
    return problems


__all__ = [
    "ClusterSpec",
    "Explain",
    "FaultStep",
    "RecoveryPolicy",
    "Scenario",
    "Timeouts",
    "TrainingSpec",
]
