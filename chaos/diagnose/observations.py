"""What ``chaos diagnose`` reads from one worker's log: its errors, exits and
steps as the runner's own events (``chaos.events``; ``chaos.diagnose.read_events``),
each with the line that says it (``Evidence``, the line shown to the user), the
loss values it printed, and the worker's generations (``chaos.diagnose.generations``).
Built by ``chaos.diagnose.observe``; read by the signatures, the attribution and
the renderers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from chaos.events import SourceLine

if TYPE_CHECKING:
    from chaos.diagnose.generations import Generation
    from chaos.diagnose.logs import WorkerLog
    from chaos.events import ErrorEvent, ExitEvent, StepEvent

MAX_EVIDENCE = 4  # lines shown for one symptom
LOSS_KEPT = 200  # loss values kept per name: the first ones, the last ones, and the highest in between


class LossSeries:
    """The loss values one log prints, by name, in order, in bounded memory: the
    first LOSS_KEPT, the last LOSS_KEPT, and the highest of those in between."""

    def __init__(self) -> None:
        self.early: list[tuple[float, Evidence]] = []
        self.peak: tuple[float, Evidence] | None = None
        self.late: list[tuple[float, Evidence]] = []

    def add(self, value: float, evidence: Evidence) -> None:
        if len(self.early) < LOSS_KEPT:
            self.early.append((value, evidence))
            return
        self.late.append((value, evidence))
        if len(self.late) > 2 * LOSS_KEPT:
            for old in self.late[:LOSS_KEPT]:
                if self.peak is None or old[0] > self.peak[0]:
                    self.peak = old
            del self.late[:LOSS_KEPT]

    def values(self) -> list[tuple[float, Evidence]]:
        return self.early + ([self.peak] if self.peak else []) + self.late


@dataclass(frozen=True)
class Evidence(SourceLine):
    """One line of the user's logs: ``where`` (file:line), ``log`` (the worker log's name), ``text``;
    as the events read from it carry it (``Event.evidence``)."""

    def shown(self, width: int = 160) -> str:
        text = " ".join(self.text.split())
        return f"{self.where}  {text[: width - 3] + '...' if len(text) > width else text}"


@dataclass
class WorkerObservations:
    name: str
    index: int | None  # the task index its name gives; 0 is the chief
    generations: list[Generation]
    log: WorkerLog | None = None  # every line, when it was read whole (``observe``)
    flagged: list[tuple[Evidence, tuple[str, ...]]] = field(
        default_factory=list
    )  # lines with known shapes (chaos.diagnose.shapes)
    first: Evidence | None = None  # its first line
    watched: dict[str, list[Evidence]] | None = (
        None  # the lines each watched pattern matched (``Watch``), up to MAX_EVIDENCE
    )
    losses: dict[str, LossSeries] = field(default_factory=dict)  # the loss values it printed, by name
    coordination: list[Evidence] = field(default_factory=list)  # the coordination service's last lines (Observer)

    def shaped(self, names) -> list[Evidence]:
        """The flagged lines that have any of these shapes."""
        wanted = set(names)
        return [e for e, found in self.flagged if wanted.intersection(found)]

    @property
    def texts(self) -> tuple[str, ...]:
        return self.log.lines if self.log is not None else ()

    def evidence(self, i: int) -> Evidence:
        assert self.log is not None
        return Evidence(self.log.where(i), self.name, self.log.lines[i])

    @property
    def lines(self) -> list[Evidence]:
        """Every line as evidence (built on demand: a big log has many)."""
        return [self.evidence(i) for i in range(len(self.texts))]

    @property
    def errors(self) -> list[ErrorEvent]:
        return [e for g in self.generations for e in g.errors]

    @property
    def exits(self) -> list[ExitEvent]:
        return [e for g in self.generations for e in g.exits]

    @property
    def steps(self) -> list[StepEvent]:
        return [s for g in self.generations for s in g.steps]

    @property
    def fingerprint(self) -> dict[str, str] | None:
        return next((g.fingerprint for g in self.generations if g.fingerprint is not None), None)
