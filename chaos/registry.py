"""Name -> class registries for faults and checks, and their self-description.

The bottom of the layers: it imports nothing of chaos but its errors, so faults,
checks and the scenario model all register and look up here.

A registered class is a frozen pydantic model whose fields are its parameters,
with a ``name`` class attribute and a docstring whose first line is its one-line
doc. ``chaos list`` and the docs are generated from here, so a parameter's type,
default and description live in one place: the field.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Generic, Literal, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel

from chaos.errors import ScenarioError

T = TypeVar("T", bound=BaseModel)

# The longest duration a scenario may give anywhere (a trigger, a fault's or a
# check's parameter), finite: ``.inf`` or ``1e300`` would overflow the runner's timers.
MAX_SECONDS = 86_400.0


def did_you_mean(value: object, valid: list[str]) -> str:
    """`` did you mean 'x'?`` or an empty string."""
    matches = difflib.get_close_matches(str(value), valid, n=1, cutoff=0.6)
    return f"; did you mean {matches[0]!r}?" if matches else ""


def one_line(cls: type) -> str:
    return (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""


@dataclass(frozen=True)
class ParamInfo:
    name: str  # as written in YAML (the alias when there is one)
    type: str
    required: bool
    default: object
    doc: str

    def render(self) -> str:
        text = f"{self.name}: {self.type}"
        if not self.required:
            text += f" = {self.default!r}"
        return text


def _type_name(annotation: object) -> str:
    """A short, YAML-minded spelling: ``'a' | 'b'``, ``list[int] | None``."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:  # a constrained type (chaos.faults.base.WorkerIndex): its bounds are not its name
        return _type_name(args[0])
    if origin is Literal:
        return " | ".join(repr(a) for a in args)
    if origin in (Union, types.UnionType):
        return " | ".join(_type_name(a) for a in args)
    if origin is not None and args:
        return f"{getattr(origin, '__name__', origin)}[{', '.join(_type_name(a) for a in args)}]"
    if annotation is type(None):
        return "None"
    return getattr(annotation, "__name__", str(annotation))


def params_of(cls: type[BaseModel]) -> list[ParamInfo]:
    rows = []
    for name, info in cls.model_fields.items():
        rows.append(
            ParamInfo(
                name=info.alias or name,
                type=_type_name(info.annotation),
                required=info.is_required(),
                default=None if info.is_required() else info.get_default(call_default_factory=True),
                doc=info.description or "",
            )
        )
    return rows


class Registry(Generic[T]):
    """Registered classes by name; ``planned`` names are reserved for later."""

    def __init__(self, noun: str, planned: dict[str, str] | None = None) -> None:
        self.noun = noun
        self.planned = dict(planned or {})
        self._classes: dict[str, type[T]] = {}
        self.version = 0  # grows with every registration: the scenario model rebuilds on a change

    def register(self, cls: type[T]) -> type[T]:
        name = cls.name  # type: ignore[attr-defined]
        if name in self._classes:
            if self._classes[name] is cls:
                return cls  # a plugin module imported twice
            raise ValueError(f"{self.noun} {name!r} is registered twice")
        self._classes[name] = cls
        self.planned.pop(name, None)
        self.version += 1
        return cls

    def get(self, name: str) -> type[T]:
        if name in self._classes:
            return self._classes[name]
        if name in self.planned:
            raise ScenarioError(
                f"{self.noun} {name!r} is planned but not implemented yet",
                hint=f"implemented: {', '.join(self.names())}",
            )
        raise ScenarioError(
            f"unknown {self.noun} {name!r}; valid: {', '.join(self.names())}" + did_you_mean(name, self.names()),
            hint="`chaos list` shows every fault and check with its parameters",
        )

    def names(self) -> list[str]:
        return list(self._classes)

    def items(self) -> list[tuple[str, type[T]]]:
        return list(self._classes.items())

    def __contains__(self, name: object) -> bool:
        return name in self._classes

    def __iter__(self) -> Iterator[type[T]]:
        return iter(self._classes.values())
