"""tolerated: a lost worker under parameter servers (the coordinator, worker-0, trains on)."""

from timeline_builder import TimelineBuilder

from chaos.checks import Status, Tolerated, run_check


def coordinator_run():
    # Only the coordinator (container 0) reports steps; container 2 is a worker task.
    return TimelineBuilder(workers=1).start().steps(1, 10).wait(0.01).inject(target="worker-2")


def test_passes_when_the_lost_worker_exited_and_the_coordinator_stepped_on():
    tl = coordinator_run().wait(0.5).exit(2, 137).steps(11, 20)
    verdict = run_check(Tolerated(lost=[2]), tl.build())
    assert verdict.status is Status.PASS, verdict.reason
    assert "exited 137" in verdict.reason


def test_fails_when_the_coordinator_raised():
    tl = coordinator_run().wait(0.5).exit(2, 137).error(0, "tensorflow.UnavailableError", "failed to connect")
    verdict = run_check(Tolerated(lost=[2]), tl.steps(11, 12).build())
    assert verdict.status is Status.FAIL
    assert "UnavailableError" in verdict.reason


def test_fails_when_the_fault_did_not_hit():
    verdict = run_check(Tolerated(lost=[2]), coordinator_run().steps(11, 20).build())
    assert verdict.status is Status.FAIL
    assert "did not hit" in verdict.reason


def test_unknown_when_no_step_came_after_the_loss():
    verdict = run_check(Tolerated(lost=[2]), coordinator_run().wait(0.5).exit(2, 137).build())
    assert verdict.status is Status.UNKNOWN
