"""A check's result: pass / fail / unknown, one line of reason, the proof.

``unknown`` means the check could not judge: its evidence is absent (the fault
never reached traffic, no step was ever seen) or the check itself raised. It is
never counted as a pass.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any

from chaos.events import Event, event_from_dict


class Status(str, enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    UNKNOWN = "unknown"
    ERROR = "error"  # a Report's only: the run itself broke (a verdict is never "error")


@dataclass(frozen=True)
class Verdict:
    status: Status
    reason: str
    evidence: tuple[Event, ...] = ()
    # Filled in by run_check: which check, from which list, with what parameters.
    check: str = ""
    role: str = ""  # "expect" or "recover"
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.status is Status.PASS

    @property
    def failed(self) -> bool:
        return self.status is Status.FAIL

    def about(self, check: str, role: str, params: dict[str, Any]) -> Verdict:
        return replace(self, check=check, role=role, params=params)

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "role": self.role,
            "params": self.params,
            "status": self.status.value,
            "reason": self.reason,
            "evidence": [e.to_dict() for e in self.evidence],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        return cls(
            status=Status(data["status"]),
            reason=data["reason"],
            evidence=tuple(event_from_dict(e) for e in data.get("evidence", [])),
            check=data.get("check", ""),
            role=data.get("role", ""),
            params=data.get("params", {}),
        )


def passed(reason: str, evidence: list[Event] | tuple[Event, ...] = ()) -> Verdict:
    return Verdict(Status.PASS, reason, tuple(evidence))


def failed(reason: str, evidence: list[Event] | tuple[Event, ...] = ()) -> Verdict:
    return Verdict(Status.FAIL, reason, tuple(evidence))


def unknown(reason: str, evidence: list[Event] | tuple[Event, ...] = ()) -> Verdict:
    return Verdict(Status.UNKNOWN, reason, tuple(evidence))


class Undecidable(Exception):
    """Raised inside a check when its evidence is absent; becomes ``unknown``."""

    def __init__(self, reason: str, evidence: list[Event] | tuple[Event, ...] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.evidence = tuple(evidence)
