"""`error` with several classes: any one of them matches; each worker listed must raise one."""

from timeline_builder import UNAVAILABLE, TimelineBuilder, killed_and_recovered

from chaos.checks import ErrorRaised, Status, run_check

DEADLINE = "tensorflow.python.framework.errors_impl.DeadlineExceededError"


def test_any_listed_class_matches():
    timeline = killed_and_recovered()  # worker-0 raises UnavailableError
    verdict = run_check(ErrorRaised(class_=["DeadlineExceededError", "UnavailableError"], workers=[0]), timeline)
    assert verdict.status is Status.PASS, verdict.reason
    assert "DeadlineExceededError or UnavailableError" in verdict.reason


def test_no_listed_class_fails_naming_them_all():
    verdict = run_check(ErrorRaised(class_=["DeadlineExceededError", "InternalError"]), killed_and_recovered())
    assert verdict.status is Status.FAIL
    assert "DeadlineExceededError or InternalError" in verdict.reason


def test_each_worker_may_raise_a_different_listed_class():
    b = TimelineBuilder().start().steps(1, 5).inject().wait(1)
    b.error(0, UNAVAILABLE, "Socket closed").error(1, DEADLINE, "timed out")
    both = ErrorRaised(class_=["UnavailableError", "DeadlineExceededError"], workers=[0, 1])
    assert run_check(both, b.build()).status is Status.PASS
    only_one = ErrorRaised(class_=["UnavailableError"], workers=[0, 1])
    assert run_check(only_one, b.build()).status is Status.FAIL
