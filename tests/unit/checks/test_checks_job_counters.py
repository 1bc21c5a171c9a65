"""job_counters_differ / _agree, job_counters_changed_by_restore / _restored: the job's own
counters between workers and across a restore, from hand-built timelines shaped as the
agent reports a custom loop (docs/findings.md, "A counter variable under each aggregation")."""

from __future__ import annotations

from timeline_builder import TimelineBuilder

from chaos.checks import JobCountersAgree, JobCountersChangedByRestore, JobCountersDiffer, JobCountersRestored
from chaos.checks.base import run_check
from chaos.checks.verdict import Status
from chaos.events import CheckpointEvent, RestoredEvent


def save(b, step, path, counters=None, parts=None):
    """Every worker reports a save; ``counters``/``parts``: one dict per worker."""
    for w in range(b.info.num_workers):
        b._add(
            CheckpointEvent(
                t=b.t,
                source=f"worker-{w}",
                step=step,
                path=path,
                job_counters=(counters or [{}] * 2)[w],
                job_counter_parts=(parts or [{}] * 2)[w],
            )
        )
    return b


def restore(b, step, path, counters=None, parts=None):
    for w in range(b.info.num_workers):
        b._add(
            RestoredEvent(
                t=b.t,
                source=f"worker-{w}",
                step=step,
                checkpoint=path,
                job_counters=(counters or [{}] * 2)[w],
                job_counter_parts=(parts or [{}] * 2)[w],
            )
        )
    return b


def plain_then_summed():
    """A plain tf.Variable count (each worker's own) redeployed at step 30 as aggregation=SUM."""
    b = TimelineBuilder(steps_per_epoch=20).inject("version_skew", "worker-0,worker-1").start().steps(1, 20)
    save(b, 20, "ckpt-1", [{"positives": 341, "epoch": 1}, {"positives": 331, "epoch": 1}])
    b.steps(21, 30).heal("version_skew", "worker-0,worker-1").restart().wait(5).start()
    restore(b, 20, "ckpt-1", [{"positives": 341, "epoch": 1}, {"positives": 341, "epoch": 1}])
    b.steps(21, 40)
    save(b, 40, "ckpt-2", [{"positives": 1013, "epoch": 2}, {"positives": 1013, "epoch": 2}])
    return b.build()


def test_a_plain_variables_count_differs_per_worker_in_the_window_and_agrees_after_the_fix():
    timeline = plain_then_summed()
    differ = JobCountersDiffer(counters=["positives"]).judge(timeline)
    assert differ.status is Status.PASS, differ.reason
    assert "positives read worker-0 341, worker-1 331 at ckpt-1 (step 20)" in differ.reason
    agree = JobCountersAgree().judge(timeline)
    assert agree.status is Status.PASS and "at all 1 saves (at ckpt-2: epoch 2, positives 1013)" in agree.reason


def test_counters_that_differ_after_recovery_fail_agree_and_name_the_aggregation():
    b = TimelineBuilder().start().steps(1, 10).inject().restart().wait(1).start().steps(11, 20)
    save(b, 20, "ckpt-2", [{"positives": 9}, {"positives": 8}])
    verdict = JobCountersAgree().judge(b.build())
    assert verdict.status is Status.FAIL
    assert "positives read worker-0 9, worker-1 8 at ckpt-2 (step 20)" in verdict.reason
    assert "aggregation NONE or ONLY_FIRST_REPLICA" in verdict.reason


def test_counters_that_agree_in_the_window_fail_differ():
    b = TimelineBuilder().inject("version_skew", "worker-0").start().steps(1, 10)
    save(b, 10, "ckpt-1", [{"positives": 5}, {"positives": 5}])
    b.heal("version_skew", "worker-0")
    verdict = JobCountersDiffer().judge(b.build())
    assert verdict.status is Status.FAIL and "at all 1 saves" in verdict.reason


def on_read_killed():
    """An on-read SUM count: parts 252 + 255 saved at ckpt-1; SIGKILL worker-1 at step 20; after the
    restart both restore 253, read 506."""
    b = TimelineBuilder(steps_per_epoch=15).start().steps(1, 15)
    save(b, 15, "ckpt-1", parts=[{"positives": 252}, {"positives": 255}])
    b.steps(16, 20).inject("kill_worker", "worker-1").exit(1, 137).exit(0, 1).restart().wait(5).start()
    restore(b, 15, "ckpt-1", parts=[{"positives": 253}, {"positives": 253}])
    b.steps(16, 30)
    save(b, 30, "ckpt-2", parts=[{"positives": 505}, {"positives": 508}])
    return b.build()


def test_an_on_read_sum_cut_by_the_restore_after_the_kill_is_its_symptom_and_fails_restored():
    timeline = on_read_killed()
    cut = JobCountersChangedByRestore(counters=["positives"]).judge(timeline)
    assert cut.status is Status.PASS, cut.reason
    assert (
        "the restore after the restart changed the job's counter: positives was 507 at the save of ckpt-1, "
        "506 on the workers' parts summed after its restore" in cut.reason
    )
    restored = JobCountersRestored().judge(timeline)  # the catching check, on the same run
    assert restored.status is Status.FAIL and "507 at the save of ckpt-1, 506" in restored.reason


def test_an_odd_count_kept_on_write_restores_whole_and_is_no_symptom():
    # The fix, as measured: the plain variable's 341 (the chief's) restored into aggregation=SUM on write.
    timeline = plain_then_summed()
    restored = JobCountersRestored().judge(timeline)
    assert restored.status is Status.PASS and "(after ckpt-1: epoch 1, positives 341)" in restored.reason
    b = TimelineBuilder().start().steps(1, 10)
    save(b, 10, "ckpt-1", [{"n": 7}, {"n": 7}])
    b.inject().exit(1, 137).restart().wait(1).start()
    restore(b, 10, "ckpt-1", [{"n": 7}, {"n": 7}])
    verdict = JobCountersChangedByRestore().judge(b.build())
    assert verdict.status is Status.FAIL and "read as saved after the restore" in verdict.reason


def test_no_restart_after_the_fault_leaves_the_restore_symptom_unknown():
    b = TimelineBuilder().start().steps(1, 10).inject("latency", "worker-1")
    save(b, 10, "ckpt-1", [{"n": 7}, {"n": 7}])
    verdict = run_check(JobCountersChangedByRestore(), b.build())
    assert verdict.status is Status.UNKNOWN and "nothing was restarted after the fault" in verdict.reason


def test_a_cut_after_recovery_fails_restored_and_says_why():
    b = TimelineBuilder().start().steps(1, 10)
    save(b, 10, "ckpt-1", parts=[{"n": 4}, {"n": 5}])
    b.inject().exit(1, 137).restart().wait(1).start()
    restore(b, 10, "ckpt-1", parts=[{"n": 4}, {"n": 4}])
    verdict = JobCountersRestored().judge(b.build())
    assert verdict.status is Status.FAIL
    assert "n was 9 at the save of ckpt-1, 8 on the workers' parts summed" in verdict.reason
    assert "the sum divided by the workers" in verdict.reason


def test_a_worker_restored_off_the_chiefs_save_fails_restored():
    b = TimelineBuilder().start().steps(1, 10)
    save(b, 10, "ckpt-1", [{"n": 7}, {"n": 7}])
    b.inject().restart().wait(1).start()
    restore(b, 10, "ckpt-1", [{"n": 7}, {"n": 3}])
    verdict = JobCountersRestored().judge(b.build())
    assert verdict.status is Status.FAIL and "n was 7 at the save of ckpt-1, 3 on worker-1" in verdict.reason


def test_no_counters_are_unknown_never_a_pass():
    b = TimelineBuilder().inject("version_skew", "worker-0").start().steps(1, 10).checkpoint(10)
    b.heal("version_skew", "worker-0").restart().wait(1).start().restored(0, 1, 10).steps(11, 20).checkpoint(20)
    timeline = b.build()
    for check in (JobCountersDiffer(), JobCountersAgree(), JobCountersChangedByRestore(), JobCountersRestored()):
        verdict = run_check(check, timeline)
        assert verdict.status is Status.UNKNOWN and "no worker reported a counter" in verdict.reason, verdict


def test_a_named_counter_no_worker_reported_is_unknown_not_a_vacuous_pass():
    timeline = plain_then_summed()
    for check in (JobCountersAgree(counters=["tokens"]), JobCountersRestored(counters=["tokens"])):
        verdict = run_check(check, timeline)
        assert verdict.status is Status.UNKNOWN and "no worker reported the counter tokens" in verdict.reason


def redeployed_on_the_save():
    """As CI measured: the redeploy due at step 30 landed on the save at step 40, after the chief wrote
    ckpt-2 (682, its own count) and before it reported it; worker-1 reported its own 662."""
    b = TimelineBuilder(steps_per_epoch=20).inject("version_skew", "worker-0,worker-1").start().steps(1, 20)
    save(b, 20, "ckpt-1", [{"positives": 341}, {"positives": 331}])
    b.steps(21, 40)
    b._add(CheckpointEvent(t=b.t, source="worker-1", step=40, path="ckpt-2", job_counters={"positives": 662}))
    b.heal("version_skew", "worker-0,worker-1").restart().wait(5).start()
    restore(b, 40, "ckpt-2", [{"positives": 682}, {"positives": 682}])
    return b


def test_a_restore_of_a_save_the_chief_did_not_report_is_not_judged_by_another_workers_copy():
    verdict = run_check(JobCountersRestored(), redeployed_on_the_save().build())
    assert verdict.status is Status.UNKNOWN, verdict
    assert "no save restored was reported by the workers that tell what it holds" in verdict.reason
    # The same run, restored off the chief's value where the chief did report (a later restore): judged.
    b = redeployed_on_the_save().steps(41, 60)
    save(b, 60, "ckpt-3", [{"positives": 1000}, {"positives": 1000}])
    b.inject().exit(1, 137).restart().wait(1).start()
    restore(b, 60, "ckpt-3", [{"positives": 1000}, {"positives": 999}])
    verdict = run_check(JobCountersRestored(), b.build())
    assert (
        verdict.status is Status.FAIL and "positives was 1000 at the save of ckpt-3, 999 on worker-1" in verdict.reason
    )


def test_parts_of_a_save_one_worker_did_not_report_are_not_summed():
    b = TimelineBuilder().start().steps(1, 10)
    b._add(CheckpointEvent(t=b.t, source="worker-0", step=10, path="ckpt-1", job_counter_parts={"n": 4}))
    b.inject().exit(1, 137).restart().wait(1).start()
    restore(b, 10, "ckpt-1", parts=[{"n": 4}, {"n": 4}])
    verdict = run_check(JobCountersRestored(), b.build())
    assert verdict.status is Status.UNKNOWN and "every worker for an on-read SUM counter" in verdict.reason
