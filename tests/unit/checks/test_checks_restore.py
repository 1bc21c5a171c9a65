"""restore_failed and restarts_exhausted on hand-built timelines: a damaged
backup makes the restore fail, and the runner gives up after max_restarts."""

import pytest
from timeline_builder import UNAVAILABLE, TimelineBuilder, killed_and_recovered

from chaos.checks import CheckpointsDisagree, FellBack, RestartsExhausted, RestoreFailed, Status, run_check
from chaos.checks.symptom_restore import restart_rounds

DATA_LOSS = "tensorflow.python.framework.errors_impl.DataLossError"
CHECKSUM = "TensorBundle at /backup/chief/ckpt-2 shard 0 (2560 bytes): Checksum does not match"


def damaged_restore(rounds=1, *, last_completes=False, workers_failing=(0, 1)):
    """Backup at step 10; kill worker-1 and damage the backup at step 15; every
    restart's restore fails on ``workers_failing`` (the last round completes if asked)."""
    b = TimelineBuilder()
    b.start().steps(1, 10).checkpoint(10).steps(11, 15)
    b.inject("kill_worker", "worker-1", worker=1, signal="SIGKILL")
    b.inject("corrupt_checkpoint", "checkpoint", file="data", mode="flip")
    b.wait(0.2).exit(1, 137).wait(0.8).error(0, UNAVAILABLE, "Socket closed").exit(0, 1)
    for n in range(rounds):
        b.wait(1).restart().wait(5).start()
        if last_completes and n == rounds - 1:
            b.restored(0, 1, 10).restored(1, 1, 10).steps(11, b.info.final_step).done(0).done(1)
            b.exit(0, 0).exit(1, 0)
            break
        for w in workers_failing:
            b.wait(0.3).error(w, DATA_LOSS, CHECKSUM)
        for w in range(2):
            b.exit(w, 1 if w in workers_failing else 0)
    return b.build()


# --- restart rounds ------------------------------------------------------------


def test_restarts_of_one_round_group_together_and_a_failure_starts_the_next():
    timeline = damaged_restore(rounds=3)
    assert [len(r) for r in restart_rounds(timeline.events)] == [2, 2, 2]


# --- restore_failed ---------------------------------------------------------------


def test_restore_failed_passes_when_every_named_worker_fails_before_a_step():
    verdict = run_check(
        RestoreFailed(fault=1, class_="DataLossError", message="Checksum does not match", workers=[0, 1]),
        damaged_restore(),
    )
    assert verdict.status is Status.PASS, verdict.reason
    assert "before any step" in verdict.reason


def test_restore_failed_fails_when_training_resumed():
    verdict = run_check(RestoreFailed(fault=1, class_="DataLossError"), damaged_restore(last_completes=True))
    assert verdict.status is Status.FAIL
    assert "training resumed after the restart" in verdict.reason


def test_restore_failed_fails_on_another_class_or_a_worker_that_did_not_raise_it():
    timeline = damaged_restore(workers_failing=(0,))
    assert run_check(RestoreFailed(fault=1, class_="NotFoundError"), timeline).status is Status.FAIL
    verdict = run_check(RestoreFailed(fault=1, class_="DataLossError", workers=[0, 1]), timeline)
    assert verdict.status is Status.FAIL
    assert "worker-1 raised no DataLossError" in verdict.reason


def test_restore_failed_is_unknown_without_a_restart():
    b = TimelineBuilder().start().steps(1, 10).checkpoint(10).inject("corrupt_checkpoint", "checkpoint")
    verdict = run_check(RestoreFailed(class_="DataLossError"), b.steps(11, 30).build())
    assert verdict.status is Status.UNKNOWN
    assert "no restore was attempted" in verdict.reason


def test_restore_failed_does_not_count_the_kill_symptom_before_the_restart():
    # Only UnavailableError before the restart, and the restore succeeds: not a failed restore.
    verdict = run_check(RestoreFailed(class_="UnavailableError"), killed_and_recovered())
    assert verdict.status is Status.FAIL


# --- restarts_exhausted ---------------------------------------------------------------


def test_restarts_exhausted_passes_when_the_budget_is_spent_and_the_last_generation_failed():
    verdict = run_check(RestartsExhausted(fault=1, restarts=2), damaged_restore(rounds=2))
    assert verdict.status is Status.PASS, verdict.reason
    assert "restarted 2 time(s), then stopped" in verdict.reason


@pytest.mark.parametrize("rounds, word", [(3, "kept restarting"), (1, "stopped early")])
def test_restarts_exhausted_fails_on_a_loop_or_an_early_stop(rounds, word):
    verdict = run_check(RestartsExhausted(fault=1, restarts=2), damaged_restore(rounds=rounds))
    assert verdict.status is Status.FAIL
    assert word in verdict.reason


def test_restarts_exhausted_fails_when_training_completed():
    verdict = run_check(RestartsExhausted(fault=1, restarts=1), damaged_restore(rounds=1, last_completes=True))
    assert verdict.status is Status.FAIL
    assert "the restart budget was not what stopped it" in verdict.reason


# --- checkpoints_disagree ---------------------------------------------------------------


def stale_restore(worker1=(20, "ckpt-1")):
    """worker-1 restores ``worker1`` (step, checkpoint), or nothing (None), while the chief restores ckpt-3 at step 60."""
    b = TimelineBuilder(steps_per_epoch=20, epochs=5)
    b.start().steps(1, 20).checkpoint(20).inject("stale_checkpoint", "worker-1", worker=1, backup="older")
    b.steps(21, 60).checkpoint(60).inject("kill_worker", "worker-1", worker=1).exit(1, 137).exit(0, 1)
    b.wait(1).restart().wait(5).start().restored(0, 3, 60, checkpoint="ckpt-3")
    if worker1 is None:
        b.steps(1, 1, workers=[1])
    else:
        b.restored(1, worker1[0] // 20, worker1[0], checkpoint=worker1[1])
    return b.build()


def test_checkpoints_disagree_names_each_workers_backup():
    verdict = run_check(CheckpointsDisagree(), stale_restore())
    assert verdict.status is Status.PASS, verdict.reason
    assert "worker-0: ckpt-3 at step 60; worker-1: ckpt-1 at step 20" in verdict.reason


def test_checkpoints_disagree_counts_a_worker_that_started_from_step_0():
    verdict = run_check(CheckpointsDisagree(), stale_restore(worker1=None))
    assert verdict.status is Status.PASS, verdict.reason
    assert "worker-1: no backup (started at step 0)" in verdict.reason


def test_checkpoints_disagree_fails_when_every_worker_restored_the_same_backup():
    verdict = run_check(CheckpointsDisagree(), stale_restore(worker1=(60, "ckpt-3")))
    assert verdict.status is Status.FAIL
    assert "every worker restored the same backup" in verdict.reason


def test_checkpoints_disagree_fails_when_the_workers_never_said_where_they_resumed():
    verdict = run_check(CheckpointsDisagree(fault=1), damaged_restore())
    assert verdict.status is Status.FAIL
    assert "fewer than two workers" in verdict.reason


# --- fell_back (recovery) ---------------------------------------------------------------


def killed_in_save(restored_step):
    """Backups at steps 10 and 20 (the one at 20 written but never named), the chief
    killed in that save; both workers restore ``restored_step``."""
    b = TimelineBuilder()
    b.start().steps(1, 10).checkpoint(10, workers=[0]).steps(11, 20)
    b.inject("kill_during_save", "worker-0", worker=0).checkpoint(20, workers=[0])
    b.exit(0, 137).error(1, UNAVAILABLE, "Socket closed").exit(1, 1)
    b.wait(1).restart().wait(5).start()
    b.restored(0, restored_step // 10, restored_step).restored(1, restored_step // 10, restored_step)
    return b.steps(restored_step + 1, b.info.final_step).done(0).done(1).build()


def test_fell_back_passes_when_the_restore_is_older_than_the_newest_backup_written():
    verdict = run_check(FellBack(), killed_in_save(restored_step=10))
    assert verdict.status is Status.PASS, verdict.reason
    assert "resumed at step 10, before the newest backup written (ckpt-20, step 20)" in verdict.reason


def test_fell_back_fails_when_the_newest_backup_was_restored():
    verdict = run_check(FellBack(), killed_in_save(restored_step=20))
    assert verdict.status is Status.FAIL
    assert "no fallback" in verdict.reason


def test_fell_back_is_unknown_with_no_backup_before_the_restart():
    b = TimelineBuilder().start().steps(1, 5).inject().exit(1, 137).exit(0, 1).wait(1).restart().wait(2).start()
    verdict = run_check(FellBack(), b.steps(1, 30).done(0).done(1).build())
    assert verdict.status is Status.UNKNOWN
    assert "nothing to fall back from" in verdict.reason
