"""A fault's ``task:`` (a TF task name) resolved to its container through the topology.

Faults act on containers by index (``worker``); a parameter-server cluster's
containers are chief, workers and ps (chaos.topology), so a scenario
names them by task (``task: ps-0``) and validation turns that name into the
index, or refuses a task the cluster does not have, naming the valid ones.
"""

from __future__ import annotations

from typing import Any

from chaos.scenario.problems import Problem
from chaos.topology import MAX_PS


def resolve_tasks(scenario: Any) -> tuple[list[Any], list[Problem]]:
    """The fault steps with every ``task`` resolved to ``worker``, and the problems."""
    topology = scenario.cluster.topology()
    names = topology.task_names()
    steps, problems = [], []
    for i, step in enumerate(scenario.faults):
        task = getattr(step.fault, "task", None)
        if task is None:
            steps.append(step)
            continue
        here = ("faults", i, step.name, "task")
        if task not in names:
            problems.append(Problem(here, f"{task!r} is not a task of this cluster; valid: {', '.join(names)}"))
            steps.append(step)
            continue
        slot = topology.slot_of(task)
        if step.fault.worker is not None and step.fault.worker != slot:
            problems.append(Problem(here, f"{task} is worker {slot}, but worker says {step.fault.worker}: give one"))
            steps.append(step)
            continue
        fault = step.fault.model_copy(update={"worker": slot})
        steps.append(type(step)(fault, step.at, step.for_s, step.until))
    return steps, problems


def shape_problems(scenario: Any) -> list[Problem]:
    """The parameter-server shape's own rules (``cluster.ps`` and the strategy agree)."""
    c = scenario.cluster
    ps_strategy = c.training.strategy == "parameter_server"
    here = ("cluster",)
    if ps_strategy and c.ps < 1:
        return [
            Problem(
                (*here, "ps"), f"training.strategy parameter_server needs parameter servers: valid 1..{MAX_PS} (got 0)"
            )
        ]
    if not ps_strategy and c.ps:
        return [
            Problem(
                (*here, "ps"),
                f"{c.ps} parameter servers need training.strategy: parameter_server "
                f"(got {c.training.strategy}); valid here: 0",
            )
        ]
    problems = []
    if ps_strategy and c.workload is not None:
        problems.append(
            Problem((*here, "workload"), "parameter_server runs the built-in harness only (chaos.worker.ps_harness)")
        )
    if ps_strategy and c.tf_versions is not None:
        problems.append(Problem((*here, "tf_versions"), "parameter_server clusters run one TF version: use tf_version"))
    return problems
