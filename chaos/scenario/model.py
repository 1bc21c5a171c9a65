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
here too (``chaos.scenario.consistency``) and raises ``ScenarioProblems``
listing every problem with its path. Settings that are legal but useless are
not errors: ``scenario.warnings()`` names them.

Numbers are finite and bounded: a timeout or duration of ``1e300`` s would
overflow the event loop's timers, a seed past 2^32 - 1 is refused by numpy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    PrivateAttr,
    ValidationError,
    WithJsonSchema,
    create_model,
    field_validator,
    model_validator,
)

from chaos.backends.spec import Limits
from chaos.checks import RECOVERY_CHECKS, SYMPTOM_CHECKS, Check
from chaos.faults import FAULTS
from chaos.images.versions import DEFAULT_TF_VERSION, buildable_version
from chaos.registry import MAX_SECONDS
from chaos.scenario.consistency import reference_problems, scenario_warnings
from chaos.scenario.entries import FaultStep, check_type, fault_step_type
from chaos.scenario.problems import HINT, Problem, ScenarioProblems
from chaos.scenario.tasks import resolve_tasks, shape_problems
from chaos.text import compiled_regex, shown
from chaos.timeline import RunInfo
from chaos.topology import MAX_PS, MAX_WORKERS, Topology
from chaos.worker.settings import WorkerSettings
from chaos.workload.spec import WorkloadSpec, check_env


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False)


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError(f"must not be blank (got {shown(value)})")
    return value


Text = Annotated[str, AfterValidator(_not_blank)]


def _save_freq(value: Any) -> str | int:
    if value == "epoch" or (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
        return value
    raise ValueError(f"must be 'epoch' or a number of steps >= 1 (got {shown(value)})")


SaveFreq = Annotated[
    Literal["epoch"] | int,
    PlainValidator(_save_freq),
    WithJsonSchema({"anyOf": [{"const": "epoch"}, {"type": "integer", "minimum": 1}]}),
]


def _version_text(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise ValueError(
            f"quote the version: YAML reads it as the number {shown(value)} (2.20 becomes 2.2); got {shown(value)}"
        )
    return value


TfVersion = Annotated[
    str,
    BeforeValidator(_version_text),
    Field(pattern=r"^\d+\.\d+(\.\d+)?$"),
    AfterValidator(buildable_version),
]


class Explain(_Strict):
    """For an engineer who meets this failure in production."""

    symptom: Text = Field(min_length=1, description="what it looks like in the logs (exact messages)")
    cause: Text = Field(min_length=1, description="why it happens")
    fix: Text = Field(min_length=1, description="how to fix or prevent it")


class LogSignature(_Strict):
    """A log line that points to this scenario's failure, for `chaos diagnose`
    (beyond what the checks under expect: already say)."""

    pattern: str = Field(min_length=1, max_length=500, description="regular expression searched for in each log line")
    why: Text | None = Field(None, description="what the line means, shown beside the evidence")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        return compiled_regex(value)


class _Training(_Strict):
    """Training settings; field names match ``chaos.worker.settings.WorkerSettings``."""

    def to_worker_settings(self) -> WorkerSettings:
        return WorkerSettings(**self.model_dump())

    # Derived counts come from WorkerSettings, so the worker and the checks agree.
    @property
    def total_steps(self) -> int:
        return self.to_worker_settings().total_steps

    @property
    def save_interval_steps(self) -> int:
        return self.to_worker_settings().save_interval_steps


def _training_field(setting: Any) -> tuple[Any, Any]:
    """A WorkerSettings field as a scenario types it: same name, default and bounds."""
    bounds = setting.metadata["bounds"]
    if setting.name == "save_freq":
        annotation: Any = SaveFreq
    elif bounds.choices:
        annotation = Literal[bounds.choices]
    else:
        annotation = type(setting.default)
    limits = {k: getattr(bounds, k) for k in ("ge", "gt", "le", "lt") if getattr(bounds, k) is not None}
    return annotation, Field(setting.default, description=bounds.doc or None, **limits)


# One declaration of each setting (chaos.worker.settings): the YAML's cluster.training is built from it.
TrainingSpec = create_model(
    "TrainingSpec",
    __base__=_Training,
    __module__=__name__,
    **{f.name: _training_field(f) for f in WorkerSettings.scenario_fields()},
)
TrainingSpec.__doc__ = _Training.__doc__


class RecoveryPolicy(_Strict):
    restart: Literal["all", "failed", "none"] = Field(
        "all", description="which workers the runner restarts when one exits"
    )
    max_restarts: int = Field(1, ge=0, le=10)
    # Who restarts them: the runner (every backend), or the orchestrator's own restart
    # policy (Swarm's on-failure, as Kubernetes restarts a failed pod): then only workers
    # that exit with a failure come back, so it goes with restart: failed (consistency.py).
    by: Literal["runner", "orchestrator"] = Field(
        "runner",
        description="who restarts failed workers: the runner, or the orchestrator's own restart policy "
        "(--backend swarm; needs restart: failed)",
    )


class WorkerResources(_Strict):
    """Container limits every worker is created with (what a pod's resources
    say): a smaller or larger machine is a change `chaos compare` validates."""

    cpus: float | None = Field(None, gt=0, le=64, description="CPU time, in cores (a CFS quota); default: no limit")
    memory_mb: int | None = Field(
        None, ge=256, le=1 << 20, description="memory limit (swap included), MB; default: no limit"
    )

    def limits(self) -> Limits | None:
        """What every worker is created with; None: no limit at all."""
        if self.cpus is None and self.memory_mb is None:
            return None
        return Limits(self.cpus, None if self.memory_mb is None else self.memory_mb << 20)


class ClusterSpec(_Strict):
    workers: int = Field(2, ge=1, le=MAX_WORKERS)
    tf_version: TfVersion = Field(
        DEFAULT_TF_VERSION, description="every worker's image, unless tf_versions says otherwise"
    )
    tf_versions: list[TfVersion] | None = Field(None, description="one TF version per worker index")
    training: TrainingSpec = TrainingSpec()
    recovery: RecoveryPolicy = RecoveryPolicy()
    workload: WorkloadSpec | None = Field(
        None, description="a user's training job (image, command, checkpoint_dir); default: the built-in harness"
    )
    env: dict[str, str] = Field(
        default_factory=dict,
        description="environment variables of every worker (the harness or a user's job; the job's own env wins)",
    )
    resources: WorkerResources = Field(
        WorkerResources(), description="container limits of every worker: {cpus, memory_mb}; default: none"
    )
    traffic: Literal["proxy", "direct"] = Field(
        "proxy",
        description="how the workers reach each other: through the proxy (every network fault acts there), or "
        "direct, worker to worker (for node_link, a link between two nodes; faults on the proxy are refused)",
    )
    ps: int = Field(
        0,
        ge=0,
        le=MAX_PS,
        description=f"parameter servers (with training.strategy: parameter_server, which needs 1..{MAX_PS}); the cluster "
        "is then a chief + the workers + the ps, each task a container (name it in a fault with task:)",
    )

    @field_validator("env")
    @classmethod
    def _env(cls, value: dict[str, str]) -> dict[str, str]:
        return check_env(value)

    def tf_version_of(self, worker: int) -> str:
        return self.tf_versions[worker] if self.tf_versions else self.tf_version

    def topology(self) -> Topology:
        """Names, slots and TF_CONFIG of every container (chaos.topology)."""
        return Topology(
            self.workers,
            num_ps=self.ps if self.training.strategy == "parameter_server" else 0,
            direct=self.traffic == "direct",
        )

    @property
    def containers(self) -> int:
        """Containers of the cluster: the workers, or chief + workers + ps."""
        return self.topology().num_slots

    @property
    def reporters(self) -> int:
        """Containers that report training (slots 0..n-1): every MWMS worker, or the PS coordinator."""
        return 1 if self.topology().parameter_server else self.workers

    def worker_settings(self) -> dict[str, Any]:
        """Keyword arguments for ``chaos.worker.settings.WorkerSettings``."""
        return self.training.model_dump()


class Timeouts(_Strict):
    bring_up: float = Field(120.0, gt=0, le=MAX_SECONDS, description="seconds for every worker to start")
    symptom: float = Field(60.0, gt=0, le=MAX_SECONDS, description="seconds from the inject for the symptom to show")
    total: float = Field(300.0, gt=0, le=MAX_SECONDS, description="seconds for the whole run")


FaultStepField = fault_step_type(FAULTS)
SymptomCheckField = check_type(SYMPTOM_CHECKS)
RecoveryCheckField = check_type(RECOVERY_CHECKS)
_BUILT_FOR = (FAULTS.version, SYMPTOM_CHECKS.version, RECOVERY_CHECKS.version)


class Scenario(_Strict):
    """A cluster shape, faults with their triggers, and the checks to judge them."""

    name: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", max_length=200, description="kebab-case; the file's name")
    description: Text = Field(min_length=1)
    explain: Explain
    cluster: ClusterSpec = ClusterSpec()
    faults: list[FaultStepField] = Field(default_factory=list)
    expect: list[SymptomCheckField] = Field(default_factory=list, description="symptom checks")
    recover: list[RecoveryCheckField] = Field(default_factory=list, description="recovery checks")
    signatures: list[LogSignature] = Field(
        default_factory=list, max_length=20, description="log lines `chaos diagnose` also matches this failure by"
    )
    timeouts: Timeouts = Timeouts()
    _source: Path | None = PrivateAttr(None)

    @model_validator(mode="after")
    def _references(self) -> Scenario:
        # A fault's task: becomes its container index before anything reads it.
        steps, problems = resolve_tasks(self)
        self.__dict__["faults"] = steps
        problems = [*shape_problems(self), *problems, *reference_problems(self)]
        if problems:
            raise ScenarioProblems(problems)
        return self

    def __eq__(self, other: object) -> bool:
        """Equal when they say the same; the file one was loaded from does not count."""
        if not isinstance(other, Scenario):
            return NotImplemented
        # As written, not as typed: a scenario validated after a plugin registered
        # (chaos.scenario.model.current_model) is of a subclass with other entry classes.
        return self.to_dict() == other.to_dict()

    @property
    def source(self) -> Path | None:
        """The file it was loaded from; None when built in Python or from a dict."""
        return self._source

    def warnings(self) -> list[str]:
        """Settings that are legal but have no effect or cannot matter, each as ``field.path: why``."""
        return [str(w) for w in scenario_warnings(self)]

    def with_workload(self, workload: WorkloadSpec | None) -> Scenario:
        """This scenario run against ``workload`` (``chaos run --workload``), validated again."""
        if workload is None:
            return self
        data = self.model_dump(by_alias=True, exclude_unset=True, exclude={"cluster": {"workload"}})
        data.setdefault("cluster", {})
        data["cluster"]["workload"] = workload
        try:
            copy = type(self).model_validate(data)
        except ValidationError as exc:  # cannot happen for a valid scenario; said plainly if it does
            raise ScenarioProblems([Problem(("cluster", "workload"), str(exc).splitlines()[0])]) from None
        copy._source = self._source
        return copy

    def tf_versions(self) -> list[str]:
        """Every TF version whose worker image this scenario needs (cluster and faults)."""
        if self.cluster.workload is not None:
            return sorted({v for step in self.faults for v in step.fault.tf_versions()})
        versions = {self.cluster.tf_version_of(i) for i in range(self.cluster.workers)}
        for step in self.faults:
            versions |= step.fault.tf_versions()
        return sorted(versions)

    @property
    def checks(self) -> list[Check]:
        return [*self.expect, *self.recover]

    def run_info(
        self,
        reference_digest: str | None = None,
        reference_final_loss: float | None = None,
        reference_curve: tuple = (),
    ) -> RunInfo:
        training = self.cluster.training
        return RunInfo(
            num_workers=self.cluster.reporters,
            steps_per_epoch=training.steps_per_epoch,
            epochs=training.epochs,
            save_interval_steps=training.save_interval_steps,
            reference_digest=reference_digest,
            reference_final_loss=reference_final_loss,
            reference_curve=reference_curve,
        )

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


# The model for each state of the registries: Scenario itself for the classes
# registered at import, a subclass for every later state (plugins).
_MODELS: dict[tuple[int, int, int], type[Scenario]] = {_BUILT_FOR: Scenario}


def current_model() -> type[Scenario]:
    """``Scenario`` with every fault and check registered so far, plugins
    included: a class registered after import is valid YAML too. The scenario is
    validated against the registries as they are now (a subclass whose tagged
    unions hold every registered class); ``Scenario`` itself is never changed."""
    from chaos import plugins

    plugins.load()
    versions = (FAULTS.version, SYMPTOM_CHECKS.version, RECOVERY_CHECKS.version)
    if versions not in _MODELS:
        _MODELS[versions] = _with_registered_classes()
    return _MODELS[versions]


def _with_registered_classes() -> type[Scenario]:
    def entries(name: str, annotation: Any) -> tuple[Any, Any]:
        return annotation, Field(default_factory=list, description=Scenario.model_fields[name].description)

    model = create_model(
        "Scenario",
        __base__=Scenario,
        __module__=__name__,
        faults=entries("faults", list[fault_step_type(FAULTS)]),
        expect=entries("expect", list[check_type(SYMPTOM_CHECKS)]),
        recover=entries("recover", list[check_type(RECOVERY_CHECKS)]),
    )
    model.__doc__ = Scenario.__doc__
    return model


__all__ = [
    "HINT",
    "ClusterSpec",
    "Explain",
    "FaultStep",
    "RecoveryPolicy",
    "Scenario",
    "Timeouts",
    "TrainingSpec",
]
