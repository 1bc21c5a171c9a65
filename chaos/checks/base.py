"""The Check base, the two registries, and the one way to run a check.

A check is a frozen pydantic model (its fields are its parameters) with
``judge(timeline) -> Verdict``. Symptom checks (``expect:``) are judged over
the window of one fault (``fault``: its index in the scenario's ``faults``,
default 0). Recovery checks (``recover:``) are judged on what happened after
the last heal or restart (``Timeline.after_recovery``).

The runner calls ``run_checks(scenario.expect, timeline, "expect")`` and the
same for ``recover``: a check that raises gives ``unknown`` with the
exception as its reason, never a crash and never a pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from chaos.checks.verdict import Undecidable, Verdict, unknown
from chaos.registry import Registry
from chaos.timeline import FaultWindow, Timeline
from chaos.workload.evidence import Evidence, missing


class Check(BaseModel):
    """Base of every check."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False)

    name: ClassVar[str] = "check"
    role: ClassVar[str] = ""
    # What the run must do for the check to be judged at all; any one of them:
    # "restart" (a restart round), "heal" (a fault healed during training).
    # Validation rejects a check whose needs the scenario can never meet.
    needs: ClassVar[frozenset[str]] = frozenset()
    # Judges step times: its scenario runs alone, never overlapped with other
    # scenarios on the machine's shared cores (chaos.runner.suite).
    timing_sensitive: ClassVar[bool] = False
    # Needs the final weights of an uninterrupted run with the same settings.
    needs_reference: ClassVar[bool] = False
    # What the workload must report for this check to judge (Evidence values);
    # a workload that does not is judged unknown, naming what is missing.
    evidence: ClassVar[frozenset[str]] = frozenset()

    def judge(self, timeline: Timeline) -> Verdict:
        raise NotImplementedError

    def params(self) -> dict:
        return self.model_dump(mode="json", by_alias=True)


class SymptomCheck(Check):
    """A check judged over one fault's window."""

    role: ClassVar[str] = "expect"
    fault: int = Field(0, ge=0, description="index in faults: whose window to judge")

    def window(self, timeline: Timeline) -> FaultWindow:
        window = timeline.fault_window(self.fault)
        if window is None:
            raise Undecidable(
                f"fault {self.fault} was never injected (no inject event): "
                "the fault did not reach the cluster, so its symptom cannot be judged"
            )
        late = timeline.landed_late(window)
        if late:
            raise Undecidable(late, [window.inject])
        return window


class RecoveryCheck(Check):
    """A check judged on what happened after the last heal or restart."""

    role: ClassVar[str] = "recover"

    def recovery_start(self, timeline: Timeline) -> float:
        start = timeline.recovery_start()
        if start is None:
            raise Undecidable("nothing healed and nothing restarted: recovery was not exercised")
        return start


SYMPTOM_CHECKS: Registry[SymptomCheck] = Registry("symptom check")
RECOVERY_CHECKS: Registry[RecoveryCheck] = Registry("recovery check")


def register_check(cls):
    registry = SYMPTOM_CHECKS if issubclass(cls, SymptomCheck) else RECOVERY_CHECKS
    return registry.register(cls)


def cannot_judge(check: Check, provided) -> str | None:
    """Why ``check`` cannot judge a workload that reports only ``provided``, or None."""
    lacking = missing(frozenset(Evidence(e) for e in check.evidence), frozenset(Evidence(e) for e in provided))
    if not lacking:
        return None
    return f"not judged: the workload reports no {' and no '.join(lacking)}"


def run_check(check: Check, timeline: Timeline) -> Verdict:
    why = cannot_judge(check, timeline.info.evidence)
    if why:
        return unknown(f"{why} ({timeline.info.workload})").about(check.name, check.role, check.params())
    # Evidence this kind of job could give but this job does not (e.g. no weights
    # digest from a custom loop without Keras fit or a report call): unknown, with why.
    lacking = [why for evidence, why in timeline.info.unproduced if evidence in check.evidence]
    if lacking:
        return unknown(lacking[0]).about(check.name, check.role, check.params())
    try:
        verdict = check.judge(timeline)
    except Undecidable as exc:
        verdict = unknown(exc.reason, exc.evidence)
    except Exception as exc:  # a broken check is a result, not a crash
        verdict = unknown(f"the check raised {type(exc).__name__}: {exc}")
    return verdict.about(check.name, check.role, check.params())


def run_checks(checks: Iterable[Check], timeline: Timeline) -> list[Verdict]:
    return [run_check(check, timeline) for check in checks]
