"""When a fault fires: ``at: bring_up`` | ``{step: N}`` | ``{epoch: N}`` | ``{seconds: S}``.

Counting follows the worker events: ``step`` is the global step, 1-based (the
``step`` field of step events); ``epoch`` is 0-based as Keras counts it, and
fires at the first step of that epoch; ``seconds`` count from the start of
training (the runner's ``training`` phase). ``bring_up`` fires before any
worker starts. The runner asks ``trigger.due(step=..., epoch=..., elapsed_s=...)``
on every event it reads; ``before_start`` tells it to inject before bring-up.

Seconds, here and wherever a scenario gives a duration, are finite and at most
``MAX_SECONDS`` (a day): ``.inf`` or ``1e300`` would overflow the runner's timers.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    WithJsonSchema,
    model_serializer,
)

from chaos.registry import MAX_SECONDS


class Trigger(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    tag: ClassVar[str] = ""
    before_start: ClassVar[bool] = False

    def due(self, *, step: int | None = None, epoch: int | None = None, elapsed_s: float | None = None) -> bool:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


class AtBringUp(Trigger):
    """Before the workers start (they come up with the fault in place)."""

    tag: ClassVar[str] = "bring_up"
    before_start: ClassVar[bool] = True

    def due(self, *, step: int | None = None, epoch: int | None = None, elapsed_s: float | None = None) -> bool:
        return True

    def describe(self) -> str:
        return "at bring-up"

    @model_serializer
    def _as_word(self) -> str:
        return "bring_up"


class AtStep(Trigger):
    """When a worker reports global step ``step`` (1-based)."""

    tag: ClassVar[str] = "step"
    step: int = Field(ge=1, description="global step, 1-based")

    def due(self, *, step: int | None = None, epoch: int | None = None, elapsed_s: float | None = None) -> bool:
        return step is not None and step >= self.step

    def describe(self) -> str:
        return f"at step {self.step}"


class AtEpoch(Trigger):
    """At the first step of epoch ``epoch`` (0-based, as Keras counts)."""

    tag: ClassVar[str] = "epoch"
    epoch: int = Field(ge=0, description="epoch, 0-based")

    def due(self, *, step: int | None = None, epoch: int | None = None, elapsed_s: float | None = None) -> bool:
        return epoch is not None and epoch >= self.epoch

    def describe(self) -> str:
        return f"at epoch {self.epoch}"


class AtSeconds(Trigger):
    """``seconds`` after training started."""

    tag: ClassVar[str] = "seconds"
    seconds: float = Field(ge=0, le=MAX_SECONDS, description="seconds after training started")

    def due(self, *, step: int | None = None, epoch: int | None = None, elapsed_s: float | None = None) -> bool:
        return elapsed_s is not None and elapsed_s >= self.seconds

    def describe(self) -> str:
        return f"{self.seconds:g} s into training"


TRIGGERS: dict[str, type[Trigger]] = {cls.tag: cls for cls in (AtBringUp, AtStep, AtEpoch, AtSeconds)}


def _trigger_tag(value: Any) -> str | None:
    if isinstance(value, Trigger):
        return value.tag
    if isinstance(value, str):
        return value  # only "bring_up" is valid; anything else is reported as an unknown trigger
    if isinstance(value, dict) and len(value) == 1:
        return str(next(iter(value)))
    return None


def _word_to_model(value: Any) -> Any:
    return {} if value == "bring_up" else value


AnyTrigger = Annotated[
    Annotated[
        Annotated[AtBringUp, BeforeValidator(_word_to_model), WithJsonSchema({"const": "bring_up"})], Tag("bring_up")
    ]
    | Annotated[AtStep, Tag("step")]
    | Annotated[AtEpoch, Tag("epoch")]
    | Annotated[AtSeconds, Tag("seconds")],
    Discriminator(_trigger_tag),
]
