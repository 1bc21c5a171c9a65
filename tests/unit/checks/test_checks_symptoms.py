import pytest
from timeline_builder import UNAVAILABLE, TimelineBuilder, killed_and_recovered

from chaos.checks import ErrorRaised, ExitCode, HangAtBringUp, Slowdown, Stall, Status, run_check


def judge(check, timeline):
    return run_check(check, timeline)


# --- error ------------------------------------------------------------------


def test_error_passes_on_short_or_full_class_name_and_message():
    timeline = killed_and_recovered()
    for name in ("UnavailableError", UNAVAILABLE):
        verdict = judge(ErrorRaised(class_=name, message="Connection refused", workers=[0]), timeline)
        assert verdict.status is Status.PASS, verdict.reason
        assert any(e.kind == "error" for e in verdict.evidence)


def test_error_fails_on_wrong_class_message_worker_or_time():
    timeline = killed_and_recovered()
    assert judge(ErrorRaised(class_="DeadlineExceededError"), timeline).status is Status.FAIL
    assert judge(ErrorRaised(class_="UnavailableError", message="timed out"), timeline).status is Status.FAIL
    assert judge(ErrorRaised(class_="UnavailableError", workers=[0, 1]), timeline).status is Status.FAIL
    assert judge(ErrorRaised(class_="UnavailableError", within_s=0.5), timeline).status is Status.FAIL


def test_a_worker_that_raised_nothing_shows_how_it_ended():
    # worker-1 was SIGKILLed: no Python error, exit 137. The failing verdict says so, so a
    # worker that exited without an error is told from one that was slow to raise.
    verdict = judge(ErrorRaised(class_="UnavailableError", workers=[0, 1]), killed_and_recovered())
    assert verdict.status is Status.FAIL
    exits = [e for e in verdict.evidence if e.kind == "exit"]
    assert [(e.worker, e.exit_code) for e in exits] == [(1, 137)]


def test_error_clock_starts_when_the_workers_came_up_with_a_bring_up_fault():
    # Inject at bring-up, TF takes 70 s to import on a busy machine, then worker-1 fails at once.
    slow = (
        TimelineBuilder()
        .inject("tf_config", "worker-1", mode="malformed")
        .wait(70)
        .start()
        .wait(2)
        .error(1, "json.decoder.JSONDecodeError", "Expecting ',' delimiter")
        .build()
    )
    verdict = judge(ErrorRaised(class_="JSONDecodeError", workers=[1], within_s=10), slow)
    assert verdict.status is Status.PASS, verdict.reason
    late = (
        TimelineBuilder()
        .inject("tf_config", "worker-1")
        .wait(70)
        .start()
        .wait(12)
        .error(1, "json.decoder.JSONDecodeError", "x")
        .build()
    )
    verdict = judge(ErrorRaised(class_="JSONDecodeError", within_s=10), late)
    assert verdict.status is Status.FAIL and "of the workers came up with the fault" in verdict.reason


def test_error_clock_is_the_inject_for_a_fault_on_running_workers_even_if_they_restart_after():
    # Mid-training: the error comes 5 s after the inject; the restart after it must not move the clock.
    timeline = (
        TimelineBuilder()
        .start()
        .steps(1, 10)
        .inject("partition", "worker-1")
        .wait(5)
        .error(0, UNAVAILABLE, "Socket closed")
        .wait(30)
        .restart()
        .start()
        .build()
    )
    assert judge(ErrorRaised(class_="UnavailableError", within_s=6), timeline).status is Status.PASS
    assert judge(ErrorRaised(class_="UnavailableError", within_s=4), timeline).status is Status.FAIL


def test_error_is_unknown_when_the_fault_never_reached_the_cluster():
    b = TimelineBuilder().start().steps(1, 30)
    b.error(0, UNAVAILABLE, "Connection refused")  # an error, but no inject
    verdict = judge(ErrorRaised(class_="UnavailableError"), b.build())
    assert verdict.status is Status.UNKNOWN
    assert "never injected" in verdict.reason


def test_error_ignores_errors_before_the_inject():
    b = TimelineBuilder().start().steps(1, 5).error(0, UNAVAILABLE, "early").wait(1).inject()
    assert judge(ErrorRaised(class_="UnavailableError"), b.build()).status is Status.FAIL


def test_error_rejects_a_bad_regex():
    with pytest.raises(ValueError, match="regular expression"):
        ErrorRaised(class_="X", message="([")


# --- exit_code ----------------------------------------------------------------


def test_exit_code_passes_and_fails():
    timeline = killed_and_recovered()
    assert judge(ExitCode(workers=[1], code=137), timeline).status is Status.PASS
    assert judge(ExitCode(workers=[0, 1]), timeline).status is Status.PASS  # both non-zero
    assert judge(ExitCode(workers=[0], code=137), timeline).status is Status.FAIL
    assert judge(ExitCode(workers=[1], code=137, oom_killed=True), timeline).status is Status.FAIL


def test_exit_code_fails_when_nobody_exited_and_is_unknown_without_inject():
    b = TimelineBuilder().start().steps(1, 10).inject("latency").wait(2).heal("latency")
    assert judge(ExitCode(), b.build()).status is Status.FAIL
    assert judge(ExitCode(), TimelineBuilder().start().steps(1, 3).build()).status is Status.UNKNOWN


def test_exit_code_oom_killed():
    b = TimelineBuilder().start().steps(1, 5).inject("host_oom").wait(1).exit(1, 137, oom=True)
    assert judge(ExitCode(workers=[1], code=137, oom_killed=True), b.build()).status is Status.PASS


# --- stall ----------------------------------------------------------------------


def paused(gap_s=12.0):
    b = TimelineBuilder().start().steps(1, 20).inject("pause_worker").wait(gap_s).heal("pause_worker")
    return b.steps(21, 30).build()


def test_stall_passes_when_no_step_came_for_long_enough():
    verdict = judge(Stall(min_s=10), paused(12))
    assert verdict.status is Status.PASS, verdict.reason
    assert verdict.evidence[0].kind == "inject"


def test_stall_fails_when_steps_kept_coming():
    b = TimelineBuilder().start().steps(1, 20).inject("latency").steps(21, 150, dt=0.1).heal("latency")
    verdict = judge(Stall(min_s=5), b.build())
    assert verdict.status is Status.FAIL
    assert "steps kept coming" in verdict.reason


def test_stall_any_finds_one_stuck_worker():
    b = TimelineBuilder().start().steps(1, 20).inject("pause_worker")
    b.steps(21, 120, workers=[0]).heal("pause_worker")  # worker-1 made no progress
    timeline = b.build()
    assert judge(Stall(min_s=5, scope="any"), timeline).status is Status.PASS
    assert judge(Stall(min_s=5, scope="all"), timeline).status is Status.FAIL


def test_stall_is_unknown_without_steps_or_inject_or_when_window_too_short():
    no_steps = TimelineBuilder().start().inject("pause_worker").wait(20).heal("pause_worker").build()
    assert judge(Stall(min_s=5), no_steps).status is Status.UNKNOWN
    no_inject = TimelineBuilder().start().steps(1, 5).wait(20).steps(6, 8).build()
    assert judge(Stall(min_s=5), no_inject).status is Status.UNKNOWN
    assert judge(Stall(min_s=30), paused(12)).status is Status.UNKNOWN


# --- slowdown -------------------------------------------------------------------


def latency_run(slow_dt):
    b = TimelineBuilder().start().steps(1, 20, dt=0.05).inject("latency").steps(21, 40, dt=slow_dt)
    return b.heal("latency").steps(41, 60, dt=0.05).build()


def test_slowdown_passes_when_steps_got_slower():
    verdict = judge(Slowdown(factor=2), latency_run(0.25))
    assert verdict.status is Status.PASS, verdict.reason
    assert "5.0x" in verdict.reason


def test_slowdown_fails_when_step_times_are_unchanged():
    verdict = judge(Slowdown(factor=2), latency_run(0.05))
    assert verdict.status is Status.FAIL
    assert "1.0x" in verdict.reason


def test_slowdown_is_unknown_without_a_baseline_or_steps_in_the_window():
    b = TimelineBuilder().start().steps(1, 2).inject("latency").steps(3, 20, dt=0.5).heal("latency")
    assert judge(Slowdown(), b.build()).status is Status.UNKNOWN
    assert judge(Slowdown(), paused(12)).status is Status.UNKNOWN  # no step inside the window


# --- hang_at_bring_up -----------------------------------------------------------


def test_hang_at_bring_up_passes_when_no_step_while_blocked():
    b = TimelineBuilder().inject("blocked_port").wait(1).start().wait(25).heal("blocked_port")
    verdict = judge(HangAtBringUp(min_s=15), b.wait(3).steps(1, 30).build())
    assert verdict.status is Status.PASS, verdict.reason


def test_hang_at_bring_up_names_the_peer_tfs_coordination_service_waits_for():
    b = TimelineBuilder().inject("tf_config").wait(1).start().wait(2)
    b.log(0, "Waiting for 1/2 tasks to connect.", "Example stragglers:", "/job:worker/replica:0/task:1")
    b.wait(1).log(
        0,
        "task:1 has connected",
        "Waiting for 1/3 tasks to connect.",
        "Example stragglers:",
        "/job:worker/replica:0/task:2",
    )
    b.wait(25).heal("tf_config").wait(1)
    # The redeployed generation's normal start-up line must not count.
    b.log(0, "Example stragglers:", "/job:worker/replica:0/task:1").wait(2).start()
    verdict = judge(HangAtBringUp(min_s=15), b.wait(3).steps(1, 30).build())
    assert verdict.status is Status.PASS, verdict.reason
    assert "worker-0's coordination service was still waiting for worker-2" in verdict.reason
    assert any("Example stragglers" in getattr(e, "text", "") for e in verdict.evidence)


def test_hang_at_bring_up_with_missing_judges_the_named_peers():
    def run(logged_task, **kwargs):
        b = TimelineBuilder().inject("tf_config").wait(1).start().wait(2)
        if logged_task is not None:
            b.log(0, "Example stragglers:", f"/job:worker/replica:0/task:{logged_task}")
        return judge(HangAtBringUp(min_s=15, **kwargs), b.wait(25).heal("tf_config").wait(3).steps(1, 30).build())

    assert run(1, missing=[1]).status is Status.PASS
    wrong = run(2, missing=[1])
    assert wrong.status is Status.FAIL and "expected worker-1" in wrong.reason
    assert "waiting for worker-2 (nothing from it: listed in the cluster, but no such worker ran)" in wrong.reason
    assert run(None, missing=[1]).status is Status.UNKNOWN  # nobody said: cannot be judged
    assert run(None).status is Status.PASS  # missing not asked: not judged


def test_hang_at_bring_up_judges_the_generation_it_hung_in_not_the_one_restarted_after():
    """A rehearsal (2026-11-27): worker-0, made ahead, said it started before the inject;
    nothing trained until the heal, the runner restarted both, and the check took the
    restarted generation's start for the bring-up and called 3.7 s to its first step "no hang"."""
    b = TimelineBuilder().start([0]).inject("blocked_port").wait(2).start([1]).wait(20).heal("blocked_port")
    b.wait(22).restart().wait(28).start().wait(3.7).steps(1, 30)
    verdict = judge(HangAtBringUp(min_s=15), b.build())
    assert verdict.status is Status.PASS, verdict.reason
    assert "no step for 20.0 s after the workers started" in verdict.reason


def test_hang_at_bring_up_fails_when_training_started_anyway():
    b = TimelineBuilder().inject("blocked_port").wait(1).start().wait(2).steps(1, 30).wait(20).heal("blocked_port")
    verdict = judge(HangAtBringUp(min_s=15), b.build())
    assert verdict.status is Status.FAIL
    assert "no hang" in verdict.reason


def test_hang_at_bring_up_fails_when_the_workers_crashed_instead():
    # Measured: a port refused at bring-up makes TF 2.20 fail fast, not hang;
    # "no step" alone must not pass for a hang.
    b = TimelineBuilder().inject("blocked_port").wait(1).start().wait(1)
    b.error(0, UNAVAILABLE, "Connection refused").exit(0, 1).wait(25).heal("blocked_port")
    verdict = judge(HangAtBringUp(min_s=15), b.build())
    assert verdict.status is Status.FAIL
    assert "not a hang" in verdict.reason


def test_hang_at_bring_up_is_unknown_without_start_or_inject_or_long_enough_fault():
    no_start = TimelineBuilder().inject("blocked_port").wait(30).heal("blocked_port").build()
    assert judge(HangAtBringUp(min_s=15), no_start).status is Status.UNKNOWN
    no_inject = TimelineBuilder().start().wait(30).steps(1, 3).build()
    assert judge(HangAtBringUp(min_s=15), no_inject).status is Status.UNKNOWN
    short = TimelineBuilder().inject("blocked_port").start().wait(5).heal("blocked_port").wait(20).steps(1, 3).build()
    assert judge(HangAtBringUp(min_s=15), short).status is Status.UNKNOWN


def test_symptom_checks_judge_the_window_of_the_fault_they_name():
    b = TimelineBuilder().start().steps(1, 10).inject("latency").wait(1).heal("latency").steps(11, 20)
    b.inject("pause_worker").wait(12).heal("pause_worker").steps(21, 30)
    timeline = b.build()
    assert judge(Stall(min_s=10, fault=0), timeline).status is Status.UNKNOWN  # window of 1 s
    assert judge(Stall(min_s=10, fault=1), timeline).status is Status.PASS
    assert judge(Stall(min_s=10, fault=2), timeline).status is Status.UNKNOWN
