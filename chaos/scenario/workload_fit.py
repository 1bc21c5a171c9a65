"""Whether a scenario's faults and checks fit its workload.

A fault that needs a hook inside the training process the workload does not
have (a memory demand sent to the harness, the harness's sharding switch, an
image per TF version of the harness) is an error: it could not act. A check
that needs evidence the workload does not report is a warning: it will be
``unknown``, and ``chaos validate`` says so up front; so is a check that needs
a weights digest from a job whose code at hand runs no Keras fit and makes no
report call (chaos.workload.sources). Trigger units a job without step reports
cannot count (``step``, ``epoch``) are errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from chaos.checks.base import cannot_judge
from chaos.scenario.problems import Problem
from chaos.scenario.triggers import AtEpoch, AtStep
from chaos.workload.evidence import Evidence
from chaos.workload.sources import no_digest_reason

if TYPE_CHECKING:
    from chaos.scenario.model import Scenario

HOOKS = {
    "commands": "a command channel into the training process (the built-in harness's)",
    "settings": "the built-in harness's training settings",
    "tf_images": "the framework's per-TF-version images of the built-in harness (give image: instead)",
}


def evidence_of(scenario: Scenario) -> frozenset[Evidence]:
    workload = scenario.cluster.workload
    return frozenset(Evidence) if workload is None else workload.evidence


def workload_problems(scenario: Scenario) -> list[Problem]:
    workload = scenario.cluster.workload
    if workload is None:
        return []
    problems: list[Problem] = []
    counts_steps = Evidence.STEPS in workload.evidence
    for i, step in enumerate(scenario.faults):
        for hook in sorted(step.fault.hooks()):
            problems.append(
                Problem(
                    ("faults", i, step.name),
                    f"needs {HOOKS.get(hook, hook)}, which a user's job does not have: it cannot act on this workload",
                )
            )
        for key, trigger in (("at", step.at), ("until", step.until)):
            if isinstance(trigger, (AtStep, AtEpoch)) and not counts_steps:
                problems.append(
                    Problem(
                        ("faults", i, key, trigger.tag),
                        "the workload reports no steps (agent: none, no progress pattern): use {seconds: S}, "
                        "or give cluster.workload.progress",
                    )
                )
    return problems


def workload_warnings(scenario: Scenario) -> list[Problem]:
    workload = scenario.cluster.workload
    if workload is None:
        return []
    warnings: list[Problem] = []
    given = scenario.cluster.model_fields_set
    for field in ("training", "tf_version", "tf_versions"):
        if field in given:
            warnings.append(Problem(("cluster", field), "is for the built-in harness; a user's job ignores it"))
    provided = [e.value for e in workload.evidence]
    no_digest: str | None = None
    scanned = False
    for role, checks in (("expect", scenario.expect), ("recover", scenario.recover)):
        for i, check in enumerate(checks):
            why = cannot_judge(check, provided)
            if why:
                warnings.append(
                    Problem(
                        (role, i, check.name),
                        f"will be unknown: {why.removeprefix('not judged: ')} (agent: {workload.agent})",
                    )
                )
            elif Evidence.WEIGHTS.value in check.evidence:
                if not scanned:  # the job's code, read once: can it report a digest at all?
                    no_digest, scanned = no_digest_reason(_based(scenario)), True
                if no_digest:
                    warnings.append(Problem((role, i, check.name), f"will be unknown: {no_digest}"))
    return warnings


def _based(scenario: Scenario):
    """The workload with its build context resolved against the scenario file's folder."""
    workload = scenario.cluster.workload
    if workload.based or scenario.source is None:
        return workload
    return workload.based_at(Path(scenario.source).parent)
