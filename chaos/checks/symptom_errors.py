"""Symptoms a worker reports about itself: an error, an exit code."""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, PlainValidator, WithJsonSchema, field_validator

from chaos.checks.base import SymptomCheck, register_check
from chaos.checks.select import first_by_worker, names, short_class
from chaos.checks.verdict import Verdict, failed, passed
from chaos.events import ErrorEvent, ExitEvent
from chaos.registry import MAX_SECONDS
from chaos.text import compiled_regex, kind_of, shown
from chaos.timeline import Timeline

CLASS_NAME = r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*"
_CLASS_NAME = re.compile(CLASS_NAME)


def _class_names(value: Any) -> str | list[str]:
    """One exception class name, or a non-empty list of them. ``A|B`` is refused, not
    taken as a class name that no error could ever have."""
    names_ = list(value) if isinstance(value, (list, tuple)) else [value]
    if not names_:
        raise ValueError("must name at least one class (got [])")
    for name in names_:
        if not isinstance(name, str):
            raise ValueError(f"must be an exception class name or a list of them (got {kind_of(name)})")
        if _CLASS_NAME.fullmatch(name):
            continue
        parts = [p for p in re.split(r"[|,\s]+", name) if p]
        if len(parts) > 1 and all(_CLASS_NAME.fullmatch(p) for p in parts[:20]):
            raise ValueError(
                f"names several classes in one text (got {shown(name)}), which no error's class can equal; "
                f"give a list: class: [{', '.join(parts[:4])}{', ...' if len(parts) > 4 else ''}]"
            )
        raise ValueError(
            f"is not an exception class name (got {shown(name)}); e.g. UnavailableError, "
            "tensorflow.python.framework.errors_impl.UnavailableError, or a list of them"
        )
    return value if isinstance(value, str) else names_


ClassNames = Annotated[
    str | list[str],
    PlainValidator(_class_names),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "pattern": f"^{CLASS_NAME}$"},
                {"type": "array", "items": {"type": "string", "pattern": f"^{CLASS_NAME}$"}, "minItems": 1},
            ]
        }
    ),
]


def _exit_code(value: Any) -> int | str:
    if value == "nonzero" or (isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 255):
        return value
    raise ValueError(f"must be an exit code 0..255 or nonzero (got {shown(value)})")


ExitCodeValue = Annotated[
    int | Literal["nonzero"],
    PlainValidator(_exit_code),
    WithJsonSchema({"anyOf": [{"const": "nonzero"}, {"type": "integer", "minimum": 0, "maximum": 255}]}),
]


@register_check
class ErrorRaised(SymptomCheck):
    """An error of a class whose message matches a regex, on given workers, soon after the inject."""

    name: ClassVar[str] = "error"
    evidence: ClassVar[frozenset[str]] = frozenset({"errors"})
    class_: ClassNames = Field(
        alias="class", description="exception class: short (UnavailableError) or full name, or a list of them (any one)"
    )
    message: str = Field(".*", description="regular expression searched for in the message")
    workers: list[int] | None = Field(
        None, min_length=1, description="each of these must raise it; default: any worker"
    )
    within_s: float = Field(
        60.0,
        gt=0,
        le=MAX_SECONDS,
        description="seconds after the fault's inject (for a fault workers are created with: after they came up with it)",
    )

    @field_validator("message")
    @classmethod
    def _compiles(cls, value: str) -> str:
        return compiled_regex(value)

    @property
    def classes(self) -> tuple[str, ...]:
        return (self.class_,) if isinstance(self.class_, str) else tuple(self.class_)

    def matches(self, event: ErrorEvent) -> bool:
        same_class = any(c in (event.error_class, short_class(event.error_class)) for c in self.classes)
        return same_class and re.search(self.message, event.message) is not None

    def judge(self, timeline: Timeline) -> Verdict:
        window = self.window(timeline)
        clock = timeline.acting_from(window)
        since = "the inject" if clock == window.start else "the workers came up with the fault"
        seen = [e for e in timeline.errors() if window.start <= e.t <= clock + self.within_s]
        hits = [e for e in seen if self.matches(e)]
        wanted = f"{' or '.join(self.classes)} matching /{self.message}/"
        if self.workers is None:
            if hits:
                first = hits[0]
                return passed(
                    f"worker-{first.worker} raised {wanted} {first.t - clock:.1f} s after {since}",
                    [window.inject, first],
                )
            return failed(
                f"no {wanted} within {self.within_s:g} s of {since} ({len(seen)} other errors)",
                [window.inject, *seen[:3]],
            )
        missing = [w for w in self.workers if not any(h.worker == w for h in hits)]
        proof = [window.inject, *[next(h for h in hits if h.worker == w) for w in self.workers if w not in missing]]
        if missing:
            # What the missing workers did instead: their other errors, and how they ended
            # (an exit with no Python error is a different failure from a slow one).
            ended = first_by_worker(
                [e for e in timeline.exits() if e.worker in missing and window.start <= e.t <= clock + self.within_s]
            )
            return failed(
                f"{names(missing)} raised no {wanted} within {self.within_s:g} s of {since}",
                proof + [e for e in seen if e.worker in missing][:3] + list(ended.values()),
            )
        return passed(f"{names(self.workers)} raised {wanted} after the inject", proof)


@register_check
class ExitCode(SymptomCheck):
    """Given workers exited with a given code (or any non-zero), optionally OOM-killed."""

    name: ClassVar[str] = "exit_code"
    workers: list[int] | None = Field(None, min_length=1, description="each of these must exit so; default: any worker")
    code: ExitCodeValue = Field("nonzero", description="the exit code (0..255), or nonzero")
    oom_killed: bool | None = Field(None, description="also require (true) or exclude (false) an OOM kill")

    def matches(self, event: ExitEvent) -> bool:
        code_ok = event.exit_code != 0 if self.code == "nonzero" else event.exit_code == self.code
        oom_ok = self.oom_killed is None or event.oom_killed == self.oom_killed
        return code_ok and oom_ok

    def judge(self, timeline: Timeline) -> Verdict:
        window = self.window(timeline)
        exits = [e for e in timeline.exits() if window.contains(e.t)]
        hits = [e for e in exits if self.matches(e)]
        wanted = f"exit code {self.code}" + ("" if self.oom_killed is None else f", oom_killed={self.oom_killed}")
        targets = self.workers
        if targets is None:
            if hits:
                return passed(f"worker-{hits[0].worker} exited with {hits[0].exit_code}", [window.inject, hits[0]])
            return failed(f"no worker exited with {wanted} in the fault window", [window.inject, *exits[:3]])
        missing = [w for w in targets if not any(h.worker == w for h in hits)]
        if missing:
            return failed(f"{names(missing)} did not exit with {wanted}", [window.inject, *exits[:3]])
        return passed(f"{names(targets)} exited with {wanted}", [window.inject, *hits[:3]])
