from timeline_builder import killed_and_recovered

from chaos.checks import RECOVERY_CHECKS, SYMPTOM_CHECKS, Completed, Status, run_check, run_checks
from chaos.checks.base import RecoveryCheck
from chaos.registry import one_line


class Exploding(RecoveryCheck):
    """Raises."""

    name = "exploding"

    def judge(self, timeline):
        raise RuntimeError("boom")


def test_a_check_that_raises_gives_unknown_with_the_exception():
    verdict = run_check(Exploding(), killed_and_recovered())
    assert verdict.status is Status.UNKNOWN
    assert "RuntimeError: boom" in verdict.reason
    assert verdict.check == "exploding" and verdict.role == "recover"


def test_run_checks_labels_each_verdict():
    (verdict,) = run_checks([Completed()], killed_and_recovered())
    assert verdict.passed and verdict.check == "completed" and verdict.role == "recover"
    assert verdict.params == {}


def test_every_check_has_a_one_line_doc_and_documented_params():
    for registry in (SYMPTOM_CHECKS, RECOVERY_CHECKS):
        for cls in registry:
            assert one_line(cls), cls
            for name, field in cls.model_fields.items():
                assert field.description, f"{cls.name}.{name} has no description"


def test_verdict_round_trips_through_json():
    from chaos.checks.verdict import Verdict

    verdict = run_check(Completed(), killed_and_recovered())
    assert Verdict.from_dict(verdict.to_dict()) == verdict
