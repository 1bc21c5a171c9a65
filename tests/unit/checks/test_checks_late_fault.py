"""A fault that reached the cluster after its target finished cannot be judged:
every symptom check of its window is unknown with the reason, never fail or pass."""

from __future__ import annotations

import pytest
from timeline_builder import UNAVAILABLE, TimelineBuilder

from chaos.checks import ErrorRaised, ExitCode, NoError, Stall, Status, run_check
from chaos.events import RUNNER, InjectEvent


def late_kill_of_the_chief():
    """The chief reports done at the last step; the SIGKILL lands 0.05 s later."""
    b = TimelineBuilder().start().steps(1, 30).done(0).done(1).wait(0.05)
    b._add(
        InjectEvent(
            t=b.t - 0.06, source=RUNNER, fault="kill_worker", target="worker-0", params={"worker": 0}, completed_t=b.t
        )
    )
    return b.exit(0, 137).exit(1, 0).build()


@pytest.mark.parametrize(
    "check",
    [
        ErrorRaised(class_="UnavailableError"),
        ExitCode(workers=[0], code=137),
        NoError(),
        Stall(min_s=5),
    ],
)
def test_every_symptom_check_of_a_late_fault_is_unknown_with_the_reason(check):
    verdict = run_check(check, late_kill_of_the_chief())
    assert verdict.status is Status.UNKNOWN, verdict.reason
    assert "after worker-0 had finished training" in verdict.reason
    assert verdict.evidence and verdict.evidence[0].kind == "inject"


def test_a_fault_on_a_worker_still_training_is_judged():
    b = TimelineBuilder().start().steps(1, 15).done(0)  # the chief is done, worker-1 is not
    b._add(InjectEvent(t=b.t, source=RUNNER, fault="kill_worker", target="worker-1", params={}, completed_t=b.t + 0.01))
    b.wait(0.2).exit(1, 137).error(0, UNAVAILABLE, "Socket closed")
    verdict = run_check(ErrorRaised(class_="UnavailableError"), b.build())
    assert verdict.status is Status.PASS, verdict.reason


def test_a_restarted_worker_counts_as_running_again():
    b = TimelineBuilder().start().steps(1, 30).done(1).exit(1, 0).wait(1).restart([1]).wait(1).start([1])
    b._add(InjectEvent(t=b.t, source=RUNNER, fault="kill_worker", target="worker-1", params={}, completed_t=b.t))
    b.wait(0.1).exit(1, 137)
    verdict = run_check(ExitCode(workers=[1], code=137), b.build())
    assert verdict.status is Status.PASS, verdict.reason


def test_the_kills_own_exit_while_the_docker_call_returns_is_not_a_finished_worker():
    """Under load the kill's Docker call returned 2 s after the exit it caused was seen."""
    b = TimelineBuilder().start().steps(1, 15)
    inject_t = b.t
    b.wait(0.05).exit(1, 137).error(0, UNAVAILABLE, "Socket closed").wait(2)
    b._add(InjectEvent(t=inject_t, source=RUNNER, fault="kill_worker", target="worker-1", params={}, completed_t=b.t))
    timeline = b.build()
    for check in (ErrorRaised(class_="UnavailableError"), ExitCode(workers=[1], code=137)):
        verdict = run_check(check, timeline)
        assert verdict.status is Status.PASS, verdict.reason


def test_a_pause_that_lands_as_the_last_step_ends_is_late_though_done_comes_after_it():
    """Measured: a 40-step run paused 'at epoch 1' under load; both workers had
    reported step 40 when the pause landed; worker-1's done came after the unpause."""
    b = TimelineBuilder(steps_per_epoch=10, epochs=3).start().steps(1, 30).done(0)
    b._add(
        InjectEvent(t=b.t, source=RUNNER, fault="pause_worker", target="worker-1", params={}, completed_t=b.t + 0.05)
    )
    b.wait(35).done(1).exit(0, 0).exit(1, 0)
    verdict = run_check(ErrorRaised(class_="UnavailableError"), b.build())
    assert verdict.status is Status.UNKNOWN and "after worker-1 had finished training" in verdict.reason
