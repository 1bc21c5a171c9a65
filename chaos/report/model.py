"""The Report of one scenario run: what was tested, what was judged, how long
each phase took, where the artifacts are, and the one command to run it again.

The runner builds it with ``build_report`` once the checks have run (or with
``error=`` when the run itself broke, e.g. an InfrastructureError).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field, replace
from typing import Any

from chaos.checks.verdict import Status, Verdict
from chaos.events import AddressEvent, NoticeEvent
from chaos.timeline import Timeline

# A notice that is the run's diagnosis (chaos.runner.diagnosis_notes), not a warning: shown as it is.
ROOT_CAUSE = "root_cause"


@dataclass(frozen=True)
class PhaseTimings:
    """Seconds; None when the phase did not happen or cannot be measured."""

    bring_up_s: float | None = None  # bring-up phase start -> training started
    time_to_symptom_s: float | None = None  # first inject -> first sign of the symptom
    time_to_recover_s: float | None = None  # heal/restart -> first step after it
    total_s: float | None = None  # first event -> last event


@dataclass(frozen=True)
class Report:
    scenario: str
    file: str  # as given to the runner, e.g. scenarios/<name>.yaml
    description: str
    explain: dict[str, str]  # symptom, cause, fix
    verdicts: list[Verdict]
    timeline: Timeline
    timings: PhaseTimings = PhaseTimings()
    artifacts: dict[str, str] = field(default_factory=dict)  # label -> path
    error: str | None = None  # why the run itself broke (infrastructure), if it did
    proxy_image: str | None = None  # a proxy image given with --proxy-image (None: ours)
    incomplete: str | None = None  # why training did not complete, if it did not
    backend: str | None = None  # where it ran when not the default (one Docker host): e.g. swarm

    def with_artifacts(self, artifacts: dict[str, str]) -> Report:
        return replace(self, artifacts={**self.artifacts, **artifacts})

    @property
    def reproduce(self) -> str:
        command = f"chaos run {self.file}"
        if self.proxy_image:
            command += f" --proxy-image {shlex.quote(self.proxy_image)}"
        if self.backend:
            command += f" --backend {shlex.quote(self.backend)}"
        return command

    @property
    def status(self) -> Status:
        """error if the run itself broke; fail if any check failed; unknown if
        training did not complete with recovery checks to judge, no check ran,
        or any check could not judge; pass only when every check passed."""
        if self.error:
            return Status.ERROR
        statuses = {v.status for v in self.verdicts}
        if Status.FAIL in statuses:
            return Status.FAIL
        unfinished = self.incomplete and any(v.role == "recover" for v in self.verdicts)
        if unfinished or not self.verdicts or Status.UNKNOWN in statuses:
            return Status.UNKNOWN
        return Status.PASS

    def notices(self) -> list:
        """What the runner noticed during the run (late faults, failed heals, teardown leftovers)."""
        return self.timeline.of(NoticeEvent)

    def placement(self) -> str:
        """Where each worker ran on a backend of several nodes: ``worker-0 on node-2, worker-1 on
        node-3``, then each later start on another node (``worker-1 moved to node-1``); empty on
        one host (no node is said)."""
        where: dict[str, str] = {}
        first, moves = [], []
        for e in self.timeline.of(AddressEvent):
            if not e.node:
                continue
            if e.task not in where:
                first.append(f"{e.task} on {e.node}")
            elif where[e.task] != e.node:
                moves.append(f"{e.task} moved to {e.node}")
            where[e.task] = e.node
        first.sort(key=_worker_order)  # in worker order, whichever container came up first
        return "; ".join(filter(None, [", ".join(first), ", ".join(moves)]))

    def numbered(self) -> list[tuple[str, Verdict]]:
        """(``expect[0] error``-style label, verdict), in scenario order."""
        counters: dict[str, int] = {}
        out = []
        for verdict in self.verdicts:
            index = counters.get(verdict.role, 0)
            counters[verdict.role] = index + 1
            out.append((f"{verdict.role}[{index}] {verdict.check}", verdict))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "file": self.file,
            "description": self.description,
            "explain": dict(self.explain),
            "status": self.status.value,
            "reproduce": self.reproduce,
            "error": self.error,
            "incomplete": self.incomplete,
            "proxy_image": self.proxy_image,
            "backend": self.backend,
            "timings": vars(self.timings).copy(),
            "verdicts": [v.to_dict() for v in self.verdicts],
            "artifacts": dict(self.artifacts),
            "timeline": self.timeline.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        return cls(
            scenario=data["scenario"],
            file=data["file"],
            description=data.get("description", ""),
            explain=data.get("explain", {}),
            verdicts=[Verdict.from_dict(v) for v in data.get("verdicts", [])],
            timeline=Timeline.from_dict(data["timeline"]),
            timings=PhaseTimings(**data.get("timings", {})),
            artifacts=data.get("artifacts", {}),
            error=data.get("error"),
            proxy_image=data.get("proxy_image"),
            incomplete=data.get("incomplete"),
            backend=data.get("backend"),
        )


def _worker_order(text: str) -> tuple[str, int]:
    """``worker-10 on node-2`` after ``worker-9 on ...``: by the task's kind, then its number."""
    task = text.split(" ", 1)[0]
    kind, _, number = task.rpartition("-")
    return (kind, int(number)) if number.isdigit() else (task, -1)
