from timeline_builder import TimelineBuilder, killed_and_recovered

from chaos.checks import (
    Completed,
    IdenticalWeights,
    LostWork,
    MatchesUninterrupted,
    NormalSpeed,
    RecoveredWithin,
    RestoredSameCheckpoint,
    ResumedFrom,
    Status,
    run_check,
)


def judge(check, timeline):
    return run_check(check, timeline)


def no_restart():
    return TimelineBuilder().start().steps(1, 30).done(0).done(1).build()


# --- restored_same_checkpoint -----------------------------------------------------


def test_restored_same_checkpoint_passes():
    verdict = judge(RestoredSameCheckpoint(), killed_and_recovered())
    assert verdict.status is Status.PASS, verdict.reason
    assert [e.kind for e in verdict.evidence].count("restored") == 2


def test_restored_same_checkpoint_fails_on_different_steps_or_a_missing_worker():
    assert judge(RestoredSameCheckpoint(), killed_and_recovered(restored_steps=(10, 0))).status is Status.FAIL
    b = TimelineBuilder().start().steps(1, 15).inject().restart().wait(5).restored(0, 1, 10)
    verdict = judge(RestoredSameCheckpoint(), b.steps(11, 30).build())
    assert verdict.status is Status.FAIL and "worker-1" in verdict.reason


def test_restored_same_checkpoint_is_unknown_without_a_restart():
    assert judge(RestoredSameCheckpoint(), no_restart()).status is Status.UNKNOWN


def test_only_the_last_restart_round_counts():
    b = TimelineBuilder().start().steps(1, 15).inject().restart().wait(5)
    b.restored(0, 1, 10).restored(1, 0, 0).steps(11, 12)  # first round: out of sync
    b.restart().wait(5).restored(0, 1, 10).restored(1, 1, 10).steps(11, 30)  # second round: in sync
    assert judge(RestoredSameCheckpoint(), b.build()).status is Status.PASS


# --- resumed_from ---------------------------------------------------------------


def test_resumed_from_passes_at_or_after_the_given_point():
    timeline = killed_and_recovered()
    assert judge(ResumedFrom(epoch=1), timeline).status is Status.PASS
    assert judge(ResumedFrom(step=10), timeline).status is Status.PASS
    assert judge(ResumedFrom(), timeline).status is Status.PASS


def test_resumed_from_fails_before_the_given_point_or_from_zero():
    assert judge(ResumedFrom(epoch=2), killed_and_recovered()).status is Status.FAIL
    verdict = judge(ResumedFrom(), killed_and_recovered(restored_steps=(0, 0)))
    assert verdict.status is Status.FAIL and "scratch" in verdict.reason


def test_resumed_from_falls_back_to_the_first_step_without_restored_events():
    b = TimelineBuilder().start().steps(1, 15).inject().restart().wait(5).steps(1, 30)
    assert judge(ResumedFrom(), b.build()).status is Status.FAIL
    b = TimelineBuilder().start().steps(1, 15).inject().restart().wait(5).steps(11, 30)
    assert judge(ResumedFrom(step=10), b.build()).status is Status.PASS


# --- lost_work ------------------------------------------------------------------


def test_lost_work_passes_within_one_save_interval():
    verdict = judge(LostWork(), killed_and_recovered())  # reached 15, resumed 10, interval 10
    assert verdict.status is Status.PASS, verdict.reason
    assert "5 steps lost" in verdict.reason


def test_lost_work_fails_beyond_the_interval():
    verdict = judge(LostWork(), killed_and_recovered(restored_steps=(0, 0)))
    assert verdict.status is Status.FAIL and "15 steps lost" in verdict.reason
    assert judge(LostWork(max_steps=2), killed_and_recovered()).status is Status.FAIL


def test_lost_work_min_steps_fails_when_less_was_lost_than_the_scenario_expects():
    verdict = judge(LostWork(min_steps=6), killed_and_recovered())  # 5 lost
    assert verdict.status is Status.FAIL and "(< 6, the least" in verdict.reason
    verdict = judge(LostWork(min_steps=5), killed_and_recovered())
    assert verdict.status is Status.PASS and "(5..10)" in verdict.reason


def test_lost_work_is_unknown_without_restart():
    assert judge(LostWork(), no_restart()).status is Status.UNKNOWN


# --- identical_weights --------------------------------------------------------------


def test_identical_weights_passes_after_restore_and_at_the_end():
    verdict = judge(IdenticalWeights(), killed_and_recovered())
    assert verdict.status is Status.PASS and "after the restore and at the end" in verdict.reason


def test_identical_weights_fails_on_diverged_final_or_restored_weights():
    assert judge(IdenticalWeights(), killed_and_recovered(final_digests=("a", "b"))).status is Status.FAIL
    assert judge(IdenticalWeights(), killed_and_recovered(restored_digests=("a", "b"))).status is Status.FAIL


def test_identical_weights_fails_when_a_worker_never_finished():
    b = TimelineBuilder().start().steps(1, 30).done(0)
    assert judge(IdenticalWeights(), b.build()).status is Status.FAIL


def test_identical_weights_is_unknown_without_digests():
    b = TimelineBuilder().start().steps(1, 30).done(0, digest="").done(1, digest="")
    assert judge(IdenticalWeights(), b.build()).status is Status.UNKNOWN


# --- matches_uninterrupted ------------------------------------------------------------


def test_matches_uninterrupted_passes_bit_exact():
    timeline = killed_and_recovered(TimelineBuilder(reference_digest="w-final"))
    verdict = judge(MatchesUninterrupted(), timeline)
    assert verdict.status is Status.PASS and "bit-exact" in verdict.reason


def test_matches_uninterrupted_fails_when_the_resumed_run_ends_elsewhere():
    timeline = killed_and_recovered(TimelineBuilder(reference_digest="w-uninterrupted"))
    verdict = judge(MatchesUninterrupted(), timeline)
    assert verdict.status is Status.FAIL and "differ" in verdict.reason


def test_matches_uninterrupted_tolerance_compares_final_loss_and_says_so():
    close = killed_and_recovered(TimelineBuilder(reference_digest="w-x", reference_loss=0.5001))
    verdict = judge(MatchesUninterrupted(tolerance=0.001), close)
    assert verdict.status is Status.PASS and "not bit-exact" in verdict.reason
    far = killed_and_recovered(TimelineBuilder(reference_digest="w-x", reference_loss=0.9))
    assert judge(MatchesUninterrupted(tolerance=0.001), far).status is Status.FAIL
    no_loss = killed_and_recovered(TimelineBuilder(reference_digest="w-x"))
    assert judge(MatchesUninterrupted(tolerance=0.001), no_loss).status is Status.UNKNOWN


def test_matches_uninterrupted_is_unknown_without_a_reference():
    verdict = judge(MatchesUninterrupted(), killed_and_recovered())
    assert verdict.status is Status.UNKNOWN and "reference" in verdict.reason


# --- completed -------------------------------------------------------------------------


def test_completed_passes_and_fails():
    assert judge(Completed(), killed_and_recovered()).status is Status.PASS
    early = TimelineBuilder().start().steps(1, 20).done(0, step=20).done(1, step=20).build()
    assert judge(Completed(), early).status is Status.FAIL
    one = TimelineBuilder().start().steps(1, 30).done(0).build()
    assert judge(Completed(), one).status is Status.FAIL
    assert judge(Completed(), TimelineBuilder().build()).status is Status.FAIL


# --- recovered_within ------------------------------------------------------------------


def test_recovered_within_passes_and_fails():
    timeline = killed_and_recovered()  # restart, then 5.5 s to the first step
    assert judge(RecoveredWithin(max_s=10), timeline).status is Status.PASS
    assert judge(RecoveredWithin(max_s=2), timeline).status is Status.FAIL


def test_recovered_within_fails_when_no_step_came_back_and_is_unknown_without_heal():
    b = TimelineBuilder().start().steps(1, 15).inject().restart().wait(60)
    assert judge(RecoveredWithin(max_s=10), b.build()).status is Status.FAIL
    assert judge(RecoveredWithin(max_s=10), no_restart()).status is Status.UNKNOWN


# --- normal_speed ----------------------------------------------------------------------


def test_normal_speed_passes_when_steps_are_fast_again_and_fails_when_not():
    def run(after_dt):
        b = TimelineBuilder().start().steps(1, 10, dt=0.05).inject("latency").steps(11, 20, dt=0.5)
        return b.heal("latency").steps(21, 30, dt=after_dt).build()

    assert judge(NormalSpeed(), run(0.05)).status is Status.PASS
    assert judge(NormalSpeed(), run(0.5)).status is Status.FAIL
    assert judge(NormalSpeed(), no_restart()).status is Status.UNKNOWN


def test_normal_speed_lets_a_few_ms_of_scheduler_noise_pass_but_not_a_slowdown_left_behind():
    def run(before_dt, after_dt):
        b = TimelineBuilder().start().steps(1, 10, dt=before_dt).inject("cpu_throttle").steps(11, 20, dt=0.032)
        return b.heal("cpu_throttle").steps(21, 30, dt=after_dt).build()

    assert judge(NormalSpeed(factor=2), run(0.007, 0.015)).status is Status.PASS  # 2.1x but 8 ms
    assert judge(NormalSpeed(factor=2, slack_ms=0), run(0.007, 0.015)).status is Status.FAIL
    verdict = judge(NormalSpeed(factor=2), run(0.006, 0.030))  # still throttled: 5x and 24 ms
    assert verdict.status is Status.FAIL and "or 10 ms slower" in verdict.reason
