import pytest

from chaos.audit.findings import FINDING, NOT_MEASURED, OK, Finding
from chaos.audit.grading import NOT_GRADED, grade, grades, letter


@pytest.mark.parametrize(
    "met, judged, expected",
    [(4, 4, "A"), (3, 4, "B"), (5, 6, "B"), (2, 4, "C"), (1, 3, "D"), (0, 3, "F"), (0, 0, NOT_GRADED)],
)
def test_letter_is_a_name_for_the_share_met(met, judged, expected):
    assert letter(met, judged) == expected


def f(id, area, status):
    return Finding(id, area, "t", status, "m", "w", "")


def test_not_measured_criteria_are_left_out_and_listed():
    findings = [
        f("a", "detection", OK),
        f("b", "detection", NOT_MEASURED),
        f("c", "recovery", FINDING),
        f("d", "recovery", OK),
    ]
    detection = grade(findings, "detection")
    assert (detection.met, detection.judged, detection.not_measured, detection.letter) == (1, 1, ("b",), "A")
    assert "1 of 1 criteria met = 100 %" in detection.computation and "1 not measured" in detection.computation
    overall = grades(findings)[-1]
    assert (overall.area, overall.met, overall.judged, overall.letter) == ("overall", 2, 3, "C")
    assert [g.area for g in grades(findings)] == ["detection", "recovery", "checkpointing", "overall"]
    assert grades(findings)[2].letter == NOT_GRADED
