"""The failure policy from measured runs (chaos.audit.policy): which exit codes a restart fixed."""

from __future__ import annotations

from dataclasses import replace

from audit_reports import (
    killed_worker_report,
    preempted_report,
    recovered_verdicts,
    reference_report,
    report,
    silent_report,
    verdict,
)
from timeline_builder import UNAVAILABLE, TimelineBuilder

from chaos.audit.battery import (
    EMPTY_CHECKPOINT,
    KILLED_CHIEF,
    KILLED_WORKER,
    PEER_BLACKHOLED,
    PEER_PAUSED,
    PREEMPTION,
    REFERENCE,
)
from chaos.audit.measure import measure, not_measured
from chaos.audit.policy import HANG, NOT_RECOVERED, RECOVERED, derive, describe, signal_name
from chaos.events import RestartEvent


def unrecovered_report():
    """The empty-checkpoint case gone wrong: worker-1 killed at step 15, both restart, find no
    backup and crash with exit 3 (the job's own error), and the run never completes."""
    b = TimelineBuilder().start().steps(1, 10).checkpoint(10).steps(11, 15)
    b.inject("kill_worker", "worker-1", worker=1, signal="SIGKILL")
    b.wait(0.2).exit(1, 137).wait(0.5).error(0, UNAVAILABLE, "Socket closed").exit(0, 1)
    b.wait(1).restart().wait(4).start().error(0, "FileNotFoundError", "no checkpoint").exit(0, 3)
    b.wait(0.3).error(1, "FileNotFoundError", "no checkpoint").exit(1, 3)
    b.wait(5).exit(1, 137)  # no error of its own: the teardown of a failed run, not the job's
    return report(
        b.build(),
        [verdict("completed", "fail"), verdict("identical_weights", "unknown")],
        name="audit-empty-checkpoint-dir",
    )


def watchdog_report():
    """A blackholed peer: nothing noticed, the runner's stall watchdog killed both (137) and restarted."""
    b = TimelineBuilder().start().steps(1, 10).checkpoint(10).steps(11, 15)
    b.inject("blocked_port", "worker-1", worker=1, mode="blackholed")
    b.wait(43).exit(0, 137).exit(1, 137)
    b.events += [RestartEvent(t=b.t, source=f"worker-{w}", reason="no progress for 40s") for w in (0, 1)]
    b.wait(3).start().restored(0, 1, 10).restored(1, 1, 10).steps(11, 30).done(0).done(1)
    return report(b.build(), recovered_verdicts(), name="audit-peer-blackholed")


def runs():
    return [
        measure(REFERENCE, reference_report(), 40),
        measure(KILLED_WORKER, killed_worker_report(), 30),
        measure(PEER_PAUSED, silent_report(10.0), 40),
        measure(PREEMPTION, preempted_report(0.5), 40),
        measure(EMPTY_CHECKPOINT, unrecovered_report(), 40),
        not_measured(KILLED_CHIEF, "refused for this workload: reasons"),
    ]


def test_the_measures_carry_the_job_s_own_exit_codes():
    _, killed, _, _, broken, _ = runs()
    assert killed.exit_codes == {"worker-1": 137, "worker-0": 1}
    assert killed.exit_codes_after_restart == {}
    assert broken.exit_codes_after_restart == {"worker-0": 3, "worker-1": 3}  # not the teardown's 137


def test_a_stall_watchdog_kill_is_no_exit_code_of_the_job():
    run = measure(PEER_BLACKHOLED, watchdog_report(), 40)
    assert run.exit_codes == {}
    policy = derive([run])
    assert policy.faults[0].outcome == HANG and policy.retryable == ()
    assert any("no process exited" in n and "activeDeadlineSeconds" in n for n in policy.notes)


def test_codes_a_restart_recovered_from_are_retried_and_the_others_fail_the_job():
    policy = derive(runs())
    assert policy.retryable == (1, 42, 137)
    assert policy.not_fixed == (3,)
    by_key = {f.key: f for f in policy.faults}
    assert set(by_key) == {"killed-worker", "peer-paused", "preemption", "empty-checkpoint-dir"}
    assert by_key["killed-worker"].outcome == RECOVERED and by_key["killed-worker"].codes == (1, 137)
    assert by_key["empty-checkpoint-dir"].outcome == NOT_RECOVERED and by_key["empty-checkpoint-dir"].after == (3,)
    assert policy.workers == 2 and not policy.missing
    assert any("OOM killer" in n for n in policy.notes)  # 137 retried: said what else gives 137


def test_a_code_seen_recovered_and_not_stays_retryable():
    policy = derive(
        [measure(KILLED_WORKER, killed_worker_report(), 30), measure(EMPTY_CHECKPOINT, unrecovered_report(), 40)]
    )
    # 1 and 137 ended the recovered killed-worker run and the unrecovered one: never FailJob.
    assert policy.not_fixed == (3,) and 1 in policy.retryable and 137 in policy.retryable
    assert any("kept retryable" in n for n in policy.notes)


def test_repeats_merge_into_one_row_and_an_unrecovered_repeat_marks_it():
    again = measure(KILLED_WORKER, unrecovered_report(), 30)
    again = replace(again, key="killed-worker#2")
    policy = derive([measure(KILLED_WORKER, killed_worker_report(), 30), again])
    (row,) = policy.faults
    assert row.key == "killed-worker" and row.runs == 2 and row.outcome == NOT_RECOVERED


def test_no_failure_run_means_no_policy_and_says_why():
    policy = derive([measure(REFERENCE, reference_report(), 40)])
    assert policy.missing and "no failure run" in policy.missing


def test_exit_codes_are_named_with_their_signal():
    assert signal_name(137) == "SIGKILL" and signal_name(143) == "SIGTERM"
    assert signal_name(1) == "" and signal_name(42) == ""
    assert describe(137) == "137 (SIGKILL)" and describe(3) == "3"
