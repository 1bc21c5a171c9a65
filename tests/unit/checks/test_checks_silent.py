"""The checks of silent faults and their recovery, on hand-built timelines:
identical_batches, environment_skew, no_error (symptoms), distinct_batches,
environments_match (recovery); plus slowdown per worker and identical_weights
around a restart with or without a backup before it."""

from timeline_builder import UNAVAILABLE, TimelineBuilder

from chaos.checks import (
    DistinctBatches,
    EnvironmentSkew,
    EnvironmentsMatch,
    IdenticalBatches,
    IdenticalWeights,
    NoError,
    Slowdown,
    Status,
    WeightsDiverged,
    run_check,
)
from chaos.events import StartEvent, StepEvent

HEALTHY_FP = {"pkg:tensorflow-cpu": "2.20.0", "python": "3.11.9", "env:PATH": "/usr/bin"}


class Builder(TimelineBuilder):
    """TimelineBuilder with batch digests, local losses and fingerprints.

    Runner events come a moment after the last step (the window's edges
    include their own instant, so a step stamped with the inject would count).
    """

    def inject(self, *args, **kwargs):
        self.wait(0.01)
        return super().inject(*args, **kwargs)

    def heal(self, *args, **kwargs):
        self.wait(0.01)
        return super().heal(*args, **kwargs)

    def start_with(self, fingerprints, tf_versions=None):
        for w, fp in fingerprints.items():
            tf = (tf_versions or {}).get(w, "2.20")
            self._add(StartEvent(t=self.t, source=f"worker-{w}", tf_version=tf, fingerprint=dict(fp)))
        return self

    def batches(self, first, last, digest, local_loss=lambda w, step: 0.5, dt=0.1, workers=None):
        """Steps whose batch digest and local loss are functions of (worker, step)."""
        for step in range(first, last + 1):
            self.t += dt
            for w in workers if workers is not None else range(self.info.num_workers):
                epoch = (step - 1) // self.info.steps_per_epoch
                self._add(
                    StepEvent(
                        t=self.t,
                        source=f"worker-{w}",
                        epoch=epoch,
                        step=step,
                        loss=0.5,
                        local_loss=local_loss(w, step),
                        batch_digest=digest(w, step),
                    )
                )
        return self


def shared(w, step):
    return f"batch-{step:04d}"


def own(w, step):
    return f"batch-{step:04d}-shard-{w}"


def judge(check, timeline):
    return run_check(check, timeline)


# --- identical_batches -----------------------------------------------------------


def reused_seed_run(digest=shared, local_loss=lambda w, step: 0.25, heal_after=10):
    b = Builder().inject("reused_seed", "all workers").start().batches(1, heal_after, digest, local_loss)
    return b.heal("reused_seed", "all workers").batches(heal_after + 1, 30, own)


def test_identical_batches_passes_when_every_worker_shares_digest_and_local_loss():
    verdict = judge(IdenticalBatches(), reused_seed_run().build())
    assert verdict.status is Status.PASS, verdict.reason
    assert "all 10 steps" in verdict.reason and "batch-0001" in verdict.reason
    assert verdict.evidence[0].kind == "inject"


def test_identical_batches_fails_on_a_healthy_run_with_distinct_digests():
    healthy = Builder().inject("reused_seed", "all workers").start().batches(1, 10, own)
    verdict = judge(IdenticalBatches(), healthy.heal("reused_seed", "all workers").build())
    assert verdict.status is Status.FAIL
    assert "different data" in verdict.reason and "step 1" in verdict.reason
    assert {e.source for e in verdict.evidence} == {"worker-0", "worker-1"}


def test_identical_batches_fails_when_only_the_local_losses_differ():
    verdict = judge(IdenticalBatches(), reused_seed_run(local_loss=lambda w, step: 0.25 + w).build())
    assert verdict.status is Status.FAIL and "local loss" in verdict.reason


def test_identical_batches_fails_when_one_step_in_the_window_differs():
    def mostly_shared(w, step):
        return own(w, step) if step == 7 else shared(w, step)

    verdict = judge(IdenticalBatches(), reused_seed_run(mostly_shared).build())
    assert verdict.status is Status.FAIL and "step 7" in verdict.reason


def test_identical_batches_judges_only_the_fault_window():
    # Distinct batches before the inject and after the heal do not count.
    b = Builder().start().batches(1, 5, own).inject("reused_seed", "all workers").batches(6, 15, shared)
    timeline = b.heal("reused_seed", "all workers").batches(16, 30, own).build()
    assert judge(IdenticalBatches(), timeline).status is Status.PASS


def test_identical_batches_is_unknown_with_too_few_common_steps():
    verdict = judge(IdenticalBatches(min_steps=5), reused_seed_run(heal_after=3).build())
    assert verdict.status is Status.UNKNOWN and "only 3 steps" in verdict.reason
    # Steps only one worker reported are not comparable.
    b = Builder().inject("reused_seed", "all workers").start().batches(1, 10, shared, workers=[0])
    assert judge(IdenticalBatches(), b.build()).status is Status.UNKNOWN


def test_identical_batches_is_unknown_with_one_worker_or_no_inject():
    one = Builder(workers=1).inject("reused_seed", "all workers").start().batches(1, 10, shared).build()
    assert judge(IdenticalBatches(), one).status is Status.UNKNOWN
    no_inject = Builder().start().batches(1, 10, shared).build()
    assert judge(IdenticalBatches(), no_inject).status is Status.UNKNOWN


# --- distinct_batches ------------------------------------------------------------------


def test_distinct_batches_passes_after_the_fault_healed():
    verdict = judge(DistinctBatches(), reused_seed_run().build())  # shared in the window, own after
    assert verdict.status is Status.PASS, verdict.reason
    assert "all 20 steps" in verdict.reason


def test_distinct_batches_fails_when_workers_still_share_batches_after_recovery():
    b = Builder().inject("reused_seed", "all workers").start().batches(1, 10, shared)
    b.heal("reused_seed", "all workers").restart().wait(2).batches(11, 30, shared)
    verdict = judge(DistinctBatches(), b.build())
    assert verdict.status is Status.FAIL and "shared a batch" in verdict.reason and "step 11" in verdict.reason


def test_distinct_batches_fails_when_two_of_three_workers_share():
    def two_share(w, step):
        return shared(w, step) if w < 2 else own(w, step)

    b = Builder(workers=3).inject("reused_seed", "all workers").start().batches(1, 5, shared)
    b.heal("reused_seed", "all workers").batches(6, 30, two_share)
    assert judge(DistinctBatches(), b.build()).status is Status.FAIL


def test_distinct_batches_is_unknown_without_recovery_or_enough_steps():
    no_recovery = Builder().start().batches(1, 30, own).build()
    assert judge(DistinctBatches(), no_recovery).status is Status.UNKNOWN
    short = judge(DistinctBatches(min_steps=25), reused_seed_run().build())
    assert short.status is Status.UNKNOWN and "only 20 steps" in short.reason


# --- environment_skew --------------------------------------------------------------------


def skewed_bring_up(fp1=None, tf1="2.15", keys_differ=True):
    fp1 = fp1 if fp1 is not None else {**HEALTHY_FP, "pkg:tensorflow-cpu": "2.15.1"}
    b = Builder().inject("version_skew", "worker-1", workers=[1], tf_version="2.15").wait(3)
    b.start_with({0: HEALTHY_FP, 1: fp1}, tf_versions={1: tf1}).batches(1, 10, own)
    return b.heal("version_skew", "worker-1").build()


def test_environment_skew_passes_naming_the_worker_and_the_key():
    check = EnvironmentSkew(workers=[1], keys=["tf_version", "pkg:tensorflow-cpu"])
    verdict = judge(check, skewed_bring_up())
    assert verdict.status is Status.PASS, verdict.reason
    assert "worker-1 differs from worker-0" in verdict.reason
    assert "tf_version: 2.15 vs 2.20" in verdict.reason
    assert "pkg:tensorflow-cpu: 2.15.1 vs 2.20.0" in verdict.reason
    assert {e.source for e in verdict.evidence if e.kind == "start"} == {"worker-0", "worker-1"}


def test_environment_skew_fails_when_fingerprints_are_equal():
    verdict = judge(EnvironmentSkew(workers=[1]), skewed_bring_up(fp1=HEALTHY_FP, tf1="2.20"))
    assert verdict.status is Status.FAIL
    assert "worker-1 has the same environment as worker-0" in verdict.reason


def test_environment_skew_fails_when_the_named_key_is_not_among_the_differences():
    verdict = judge(EnvironmentSkew(workers=[1], keys=["env:LD_LIBRARY_PATH"]), skewed_bring_up())
    assert verdict.status is Status.FAIL
    assert "but not in env:LD_LIBRARY_PATH" in verdict.reason
    assert "tf_version" in verdict.reason  # what did differ is said too


def test_environment_skew_of_an_environment_variable():
    fp1 = {**HEALTHY_FP, "env:LD_LIBRARY_PATH": "/opt/vendor-cuda-11/lib64"}
    verdict = judge(EnvironmentSkew(workers=[1], keys=["env:LD_LIBRARY_PATH"]), skewed_bring_up(fp1, tf1="2.20"))
    assert verdict.status is Status.PASS, verdict.reason
    assert "env:LD_LIBRARY_PATH: /opt/vendor-cuda-11/lib64 vs <absent>" in verdict.reason


def test_environment_skew_of_the_chief_compares_with_another_worker():
    b = Builder().inject("version_skew", "worker-0").start_with({0: {"env:A": "1"}, 1: {}}).batches(1, 3, own)
    verdict = judge(EnvironmentSkew(workers=[0], keys=["env:A"]), b.build())
    assert verdict.status is Status.PASS and "worker-0 differs from worker-1" in verdict.reason


def test_environment_skew_counts_only_start_events_in_the_fault_window():
    # The skewed worker started before the inject: the fault did not make it so.
    b = Builder().start_with({0: HEALTHY_FP, 1: {"env:A": "1"}}).batches(1, 5, own)
    b.inject("version_skew", "worker-1").batches(6, 10, own).heal("version_skew", "worker-1")
    verdict = judge(EnvironmentSkew(workers=[1]), b.build())
    assert verdict.status is Status.UNKNOWN and "no start event" in verdict.reason


def test_environment_skew_is_unknown_without_inject():
    b = Builder().start_with({0: HEALTHY_FP, 1: {"env:A": "1"}}).batches(1, 5, own)
    assert judge(EnvironmentSkew(workers=[1]), b.build()).status is Status.UNKNOWN


# --- environments_match ----------------------------------------------------------------


def skew_then_redeploy(after_fp1):
    b = Builder().inject("version_skew", "worker-1").start_with({0: HEALTHY_FP, 1: {"env:A": "1"}}).batches(1, 10, own)
    b.heal("version_skew", "worker-1").restart().wait(2)
    return b.start_with({0: HEALTHY_FP, 1: after_fp1}).batches(11, 30, own).done(0).done(1).build()


def test_environments_match_passes_when_the_redeploy_made_them_equal():
    verdict = judge(EnvironmentsMatch(), skew_then_redeploy(HEALTHY_FP))
    assert verdict.status is Status.PASS, verdict.reason
    assert "all 2 workers" in verdict.reason


def test_environments_match_fails_naming_worker_and_key():
    verdict = judge(EnvironmentsMatch(), skew_then_redeploy({**HEALTHY_FP, "env:LD_LIBRARY_PATH": "/x"}))
    assert verdict.status is Status.FAIL
    assert "worker-1 differs from worker-0" in verdict.reason and "env:LD_LIBRARY_PATH" in verdict.reason


def test_environments_match_fails_when_a_worker_did_not_start_after_recovery():
    b = Builder().inject("version_skew", "worker-1").start_with({0: HEALTHY_FP, 1: HEALTHY_FP}).batches(1, 10, own)
    b.heal("version_skew", "worker-1").restart().wait(2).start_with({0: HEALTHY_FP})
    verdict = judge(EnvironmentsMatch(), b.build())
    assert verdict.status is Status.FAIL and "worker-1 did not start after recovery" in verdict.reason


def test_environments_match_is_unknown_when_nothing_recovered():
    b = Builder().start_with({0: HEALTHY_FP, 1: HEALTHY_FP}).batches(1, 10, own)
    assert judge(EnvironmentsMatch(), b.build()).status is Status.UNKNOWN


# --- no_error ------------------------------------------------------------------------


def throttled(between=lambda b: b):
    b = Builder().start().batches(1, 10, own).inject("cpu_throttle", "worker-1", worker=1).batches(11, 20, own, dt=0.5)
    between(b)
    return b.heal("cpu_throttle", "worker-1").batches(21, 30, own)


def test_no_error_passes_when_steps_came_and_nothing_failed():
    verdict = judge(NoError(), throttled().build())
    assert verdict.status is Status.PASS, verdict.reason
    assert "20 step events" in verdict.reason  # 10 steps x 2 workers


def test_no_error_fails_on_an_error_in_the_window():
    verdict = judge(NoError(), throttled(lambda b: b.error(0, UNAVAILABLE, "Socket closed")).build())
    assert verdict.status is Status.FAIL and "from worker-0" in verdict.reason
    assert any(e.kind == "error" for e in verdict.evidence)


def test_no_error_fails_on_a_non_zero_exit_in_the_window_but_not_a_clean_one():
    assert judge(NoError(), throttled(lambda b: b.exit(1, 137)).build()).status is Status.FAIL
    assert judge(NoError(), throttled(lambda b: b.exit(1, 0)).build()).status is Status.PASS


def test_no_error_ignores_errors_outside_the_window():
    timeline = throttled().error(0, UNAVAILABLE, "after the heal").exit(0, 1).build()
    assert judge(NoError(), timeline).status is Status.PASS


def test_no_error_is_unknown_without_steps_in_the_window():
    b = (
        Builder()
        .start()
        .batches(1, 10, own)
        .inject("pause_worker", "worker-1")
        .wait(20)
        .heal("pause_worker", "worker-1")
    )
    verdict = judge(NoError(), b.build())
    assert verdict.status is Status.UNKNOWN and "silence proves nothing" in verdict.reason


# --- slowdown per worker -----------------------------------------------------------------


def straggler(dt0, dt1):
    """Steps 1-20 fast on both; in the window worker-0 steps every dt0, worker-1 every dt1."""
    b = TimelineBuilder().start().steps(1, 20, dt=0.05).inject("cpu_throttle", "worker-1")
    b.steps(21, 40, dt=dt0, workers=[0]).steps(21, 40, dt=dt1, workers=[1])
    return b.heal("cpu_throttle", "worker-1").build()


def test_slowdown_per_worker_passes_when_each_worker_slowed():
    verdict = judge(Slowdown(factor=2, workers=[0, 1]), straggler(0.25, 0.25))
    assert verdict.status is Status.PASS, verdict.reason
    assert "worker-0: median" in verdict.reason and "worker-1: median" in verdict.reason


def test_slowdown_per_worker_fails_naming_the_worker_that_did_not_slow():
    timeline = straggler(0.05, 0.25)
    verdict = judge(Slowdown(factor=2, workers=[0, 1]), timeline)
    assert verdict.status is Status.FAIL
    assert verdict.reason.startswith("worker-0: ") and "1.0x" in verdict.reason
    assert judge(Slowdown(factor=2, workers=[1]), timeline).status is Status.PASS
    # Pooled over all workers the same timeline passes: the parameter matters.
    assert judge(Slowdown(factor=2), timeline).status is Status.PASS


# --- identical_weights around a restart ---------------------------------------------------


def crashed_at_first_collective(checkpoint_before):
    """Both workers fail at step 5 and restart; the new generation trains 1..30."""
    b = TimelineBuilder().start().steps(1, 5)
    if checkpoint_before:
        b.checkpoint(5)
    b.inject("version_skew", "worker-1").error(0, "InternalError", "Collective instance").exit(0, 1).exit(1, 1)
    b.wait(1).restart().wait(3).start()
    return b


def test_identical_weights_passes_on_final_weights_when_no_backup_existed_before_the_restart():
    b = crashed_at_first_collective(checkpoint_before=False)
    b.steps(1, 10).checkpoint(10).steps(11, 30).done(0).done(1)  # backups of the new run do not count
    verdict = judge(IdenticalWeights(), b.build())
    assert verdict.status is Status.PASS, verdict.reason
    assert "no backup existed before the restart" in verdict.reason


def test_identical_weights_without_a_backup_still_fails_on_different_final_weights():
    b = crashed_at_first_collective(checkpoint_before=False).steps(1, 30).done(0, digest="a").done(1, digest="b")
    verdict = judge(IdenticalWeights(), b.build())
    assert verdict.status is Status.FAIL and "final weights differ" in verdict.reason


def test_identical_weights_fails_when_a_backup_existed_but_no_worker_restored():
    b = crashed_at_first_collective(checkpoint_before=True).steps(1, 30).done(0).done(1)
    verdict = judge(IdenticalWeights(), b.build())
    assert verdict.status is Status.FAIL
    assert "worker-0, worker-1 emitted no restored event after the restart" in verdict.reason


def test_identical_weights_fails_when_a_backup_existed_and_one_worker_did_not_restore():
    b = crashed_at_first_collective(checkpoint_before=True).restored(0, 0, 5).steps(6, 30).done(0).done(1)
    verdict = judge(IdenticalWeights(), b.build())
    assert verdict.status is Status.FAIL and "worker-1 emitted no restored event" in verdict.reason


def test_identical_weights_passes_when_a_backup_existed_and_every_worker_restored():
    b = crashed_at_first_collective(checkpoint_before=True).restored(0, 0, 5).restored(1, 0, 5)
    verdict = judge(IdenticalWeights(), b.steps(6, 30).done(0).done(1).build())
    assert verdict.status is Status.PASS and "after the restore and at the end" in verdict.reason


# --- weights_diverged --------------------------------------------------------------------


def trained_apart(digests, heal_after_done=True):
    b = Builder(epochs=1).start().inject("tf_config", "worker-0,worker-1", mode="set_after_strategy")
    b.batches(1, 10, own)
    if not heal_after_done:
        b.heal("tf_config", "worker-0,worker-1").wait(1)
    for w, digest in enumerate(digests):
        b.done(w, digest=digest)
    if heal_after_done:
        b.heal("tf_config", "worker-0,worker-1")
    return b.build()


def test_weights_diverged_passes_when_workers_finished_with_different_weights():
    verdict = judge(WeightsDiverged(), trained_apart(["aaaa1111", "bbbb2222"]))
    assert verdict.status is Status.PASS, verdict.reason
    assert "worker-0 aaaa1111" in verdict.reason and "worker-1 bbbb2222" in verdict.reason


def test_weights_diverged_fails_when_every_worker_has_the_same_weights():
    verdict = judge(WeightsDiverged(), trained_apart(["same", "same"]))
    assert verdict.status is Status.FAIL and "trained together" in verdict.reason


def test_weights_diverged_is_unknown_when_the_workers_finished_after_the_heal():
    verdict = judge(WeightsDiverged(), trained_apart(["aaaa", "bbbb"], heal_after_done=False))
    assert verdict.status is Status.UNKNOWN and "0 worker(s) finished" in verdict.reason
