"""Grades: the share of an area's criteria the job meets.

    score(area) = criteria met / criteria judged      (each criterion counts once)
    overall     = criteria met / criteria judged, over every area

A criterion that could not be judged ("not measured") is left out of both
counts and listed; an area with none judged is "not graded". The letter is a
name for the share, never an input: A all met, B at least 3 in 4, C at least
half, D some, F none.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from fractions import Fraction

from chaos.audit.findings import AREAS, FINDING, NOT_MEASURED, OK, Finding

# (lowest share, letter), best first.
LETTERS: tuple[tuple[Fraction, str], ...] = (
    (Fraction(1), "A"),
    (Fraction(3, 4), "B"),
    (Fraction(1, 2), "C"),
    (Fraction(0), "D"),
)
NOT_GRADED = "not graded"


def letter(met: int, judged: int) -> str:
    if judged == 0:
        return NOT_GRADED
    if met == 0:
        return "F"
    share = Fraction(met, judged)
    return next(name for lowest, name in LETTERS if share >= lowest)


@dataclass(frozen=True)
class Grade:
    area: str  # an area, or "overall"
    met: int
    judged: int
    not_measured: tuple[str, ...]  # finding ids left out
    letter: str

    @property
    def score(self) -> float | None:
        return self.met / self.judged if self.judged else None

    @property
    def computation(self) -> str:
        if not self.judged:
            return "no criterion could be judged"
        text = f"{self.met} of {self.judged} criteria met = {100 * self.met / self.judged:.0f} %"
        if self.not_measured:
            text += f" ({len(self.not_measured)} not measured, left out)"
        return text

    def to_dict(self) -> dict:
        return {**asdict(self), "score": self.score, "computation": self.computation}


def grade(findings: list[Finding], area: str | None = None) -> Grade:
    chosen = [f for f in findings if area is None or f.area == area]
    met = sum(f.status == OK for f in chosen)
    judged = sum(f.status in (OK, FINDING) for f in chosen)
    skipped = tuple(f.id for f in chosen if f.status == NOT_MEASURED)
    return Grade(area or "overall", met, judged, skipped, letter(met, judged))


def grades(findings: list[Finding]) -> list[Grade]:
    """One grade per area, then the overall one."""
    return [*(grade(findings, a) for a in AREAS), grade(findings)]
