"""``--workload FILE``: a workload given once for a whole suite.

The file holds what a scenario's ``cluster.workload`` holds (image or build,
command, env, checkpoint_dir, agent, progress). Read with the same limits and
messages as a scenario file; a relative ``build.context`` is relative to this
file's folder.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from chaos.scenario.loader import positions_in, read_yaml
from chaos.scenario.problems import Problem, ScenarioProblems, problems_of
from chaos.workload.spec import WorkloadSpec

HINT = "docs/workloads.md describes a workload: image or build, command, env, checkpoint_dir, agent"


def load_workload(path: str | Path) -> WorkloadSpec:
    path = Path(path)
    source, data, root = read_yaml(path, hint=HINT)
    positions = positions_in(root)
    if not isinstance(data, dict):
        raise ScenarioProblems(
            [Problem((), "a workload is a mapping (image: ..., command: [...], checkpoint_dir: ...)")],
            source=source,
            positions=lambda p: (1, 1),
            hint=HINT,
        )
    try:
        spec = WorkloadSpec.model_validate(data, strict=True)
    except ValidationError as exc:
        problems, more = problems_of(exc, WorkloadSpec)
        raise ScenarioProblems(problems, more=more, source=source, positions=positions, hint=HINT) from None
    return spec.based_at(path.resolve().parent)
