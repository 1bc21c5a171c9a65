"""The YAML shape of a fault step and a check: one key that names it.

In YAML a fault step is ``{kill_worker: {worker: 1}, at: {epoch: 2}, for: 5}``
and a check is ``{error: {class: UnavailableError}}``. Pydantic parses them
through a tagged union of one small model per registered name (built here
from the registries), so errors point at the exact field and the JSON Schema
lists every fault and check. After parsing, the union yields plain values:
``FaultStep`` for a fault step, the ``Check`` itself for a check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    PlainSerializer,
    Tag,
    create_model,
    model_validator,
)

from chaos.checks.base import Check
from chaos.faults.base import Fault
from chaos.registry import MAX_SECONDS, Registry
from chaos.scenario.triggers import AnyTrigger, Trigger

STEP_KEYS = ("at", "for", "until")


@dataclass(frozen=True)
class FaultStep:
    """One fault with its trigger; healed ``for_s`` seconds after it fired, or
    when ``until`` is due (neither: the runner heals it when it restarts
    failed workers and at teardown; a kill needs no heal)."""

    fault: Fault
    at: Trigger
    for_s: float | None = None
    until: Trigger | None = None

    @property
    def timed(self) -> bool:
        """Healed on its own schedule (``for`` or ``until``), not by a failure."""
        return self.for_s is not None or self.until is not None

    @property
    def name(self) -> str:
        return self.fault.name

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {self.fault.name: self.fault.params(), "at": self.at.model_dump(mode="json")}
        if self.for_s is not None:
            data["for"] = self.for_s
        if self.until is not None:
            data["until"] = self.until.model_dump(mode="json")
        return data


class _FaultEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False)
    tag: ClassVar[str] = ""

    at: AnyTrigger = Field(description="bring_up, {step: N}, {epoch: N} or {seconds: S}")
    for_: float | None = Field(
        None, alias="for", gt=0, le=MAX_SECONDS, description="heal this many seconds after it fired"
    )
    until: AnyTrigger | None = Field(
        None, description="heal when this is due: {step: N}, {epoch: N} or {seconds: S} (of training)"
    )

    @model_validator(mode="before")
    @classmethod
    def _from_step(cls, value: Any) -> Any:
        if isinstance(value, FaultStep):
            return {value.name: value.fault, "at": value.at, "for": value.for_s, "until": value.until}
        return value

    @model_validator(mode="after")
    def _one_schedule(self) -> Any:
        if self.for_ is not None and self.until is not None:
            raise ValueError("give 'for' (seconds) or 'until' (a trigger), not both")
        if self.until is not None and self.until.before_start:
            raise ValueError(
                "'until: bring_up' would heal before training starts; use {step: N}, {epoch: N} or {seconds: S}"
            )
        return self

    def step(self) -> FaultStep:
        return FaultStep(getattr(self, self.tag), self.at, self.for_, self.until)


class _CheckEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    tag: ClassVar[str] = ""

    @model_validator(mode="before")
    @classmethod
    def _from_check(cls, value: Any) -> Any:
        return {value.name: value} if isinstance(value, Check) else value

    def check(self) -> Check:
        return getattr(self, self.tag)


def _none_to_empty(value: Any) -> Any:
    return {} if value is None else value  # `completed:` with nothing after it


def _discriminator(registry: Registry, reserved: tuple[str, ...]):
    def tag(value: Any) -> str | None:
        if isinstance(value, FaultStep):
            return value.name
        if isinstance(value, (Fault, Check)):
            return value.name
        if isinstance(value, dict):
            keys = [str(k) for k in value if k not in reserved]
            known = [k for k in keys if k in registry]
            return (known or keys or [None])[0]
        return None

    return tag


def _union(registry: Registry, base: type[BaseModel], reserved: tuple[str, ...], suffix: str) -> Any:
    members = []
    for name, cls in registry.items():
        annotation = Annotated[cls | None, BeforeValidator(_none_to_empty)] if base is _CheckEntry else cls
        model = create_model(f"{cls.__name__}{suffix}", __base__=base, **{name: (annotation, ...)})
        model.tag = name
        members.append(Annotated[model, Tag(name)])
    return Union[tuple(members)], Discriminator(  # noqa: UP007 - a union built at run time
        _discriminator(registry, reserved)
    )


def fault_step_type(registry: Registry) -> Any:
    union, discriminator = _union(registry, _FaultEntry, STEP_KEYS, "Step")
    return Annotated[
        union,
        discriminator,
        AfterValidator(lambda entry: entry.step()),
        PlainSerializer(lambda step: step.to_dict()),
    ]


def check_type(registry: Registry) -> Any:
    union, discriminator = _union(registry, _CheckEntry, (), "Entry")
    return Annotated[
        union,
        discriminator,
        AfterValidator(lambda entry: entry.check()),
        PlainSerializer(lambda check: {check.name: check.params()}),
    ]
