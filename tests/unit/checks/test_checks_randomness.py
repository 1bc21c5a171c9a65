"""identical_initial_weights, distinct_dropout_masks (symptoms), identical_dropout_masks
(recovery), unequal_local_batches (symptom) and equal_local_batches (recovery) on
hand-built timelines: pass, fail and unknown for each; and identical_batches /
distinct_batches across the replicas of one worker (MirroredStrategy)."""

from timeline_builder import TimelineBuilder

from chaos.checks import (
    DistinctBatches,
    DistinctDropoutMasks,
    EqualLocalBatches,
    IdenticalBatches,
    IdenticalDropoutMasks,
    IdenticalInitialWeights,
    Status,
    UnequalLocalBatches,
    run_check,
)
from chaos.events import PlanEvent, StepEvent


class Builder(TimelineBuilder):
    """Plan events (weights digest, batch per step) and steps with dropout mask hashes."""

    def inject(self, *args, **kwargs):
        self.wait(0.01)
        return super().inject(*args, **kwargs)

    def heal(self, *args, **kwargs):
        self.wait(0.01)
        return super().heal(*args, **kwargs)

    def plan(self, digest=lambda w: "w-init", batch=lambda w: 32, workers=None):
        for w in workers if workers is not None else range(self.info.num_workers):
            self._add(PlanEvent(t=self.t, source=f"worker-{w}", weights_digest=digest(w), local_batch=batch(w)))
        return self

    def masked(self, first, last, mask=lambda w, step: f"m{step}", after_first=lambda w: "w-step1", workers=None):
        for step in range(first, last + 1):
            self.t += 0.1
            for w in workers if workers is not None else range(self.info.num_workers):
                self._add(
                    StepEvent(
                        t=self.t,
                        source=f"worker-{w}",
                        epoch=(step - 1) // self.info.steps_per_epoch,
                        step=step,
                        dropout_mask=mask(w, step),
                        weights_digest=after_first(w) if step == first else "",
                    )
                )
        return self


def own_mask(w, step):
    return f"m{step}-w{w}"


def judge(check, b):
    return run_check(check, b.build())


def seeded_apart(plan_digest=lambda w: "w-init", after_first=lambda w: "w-step1", mask=own_mask, healed_mask=None):
    b = Builder().inject("seed_skew", "all workers").start().plan(plan_digest).masked(1, 10, mask, after_first)
    b.heal("seed_skew", "all workers").restart().wait(1).start().plan()
    return b.masked(11, 30, healed_mask or (lambda w, step: f"m{step}"))


# --- identical_initial_weights ------------------------------------------------------


def test_identical_initial_weights_passes_when_plans_and_first_steps_agree():
    verdict = judge(IdenticalInitialWeights(), seeded_apart())
    assert verdict.status is Status.PASS, verdict.reason
    assert "began from weights w-init" in verdict.reason and "w-step1 after step 1" in verdict.reason


def test_identical_initial_weights_fails_when_workers_begin_apart():
    verdict = judge(IdenticalInitialWeights(), seeded_apart(plan_digest=lambda w: f"w-init-{w}"))
    assert verdict.status is Status.FAIL
    assert "began training from different weights" in verdict.reason and "worker-1 w-init-1" in verdict.reason


def test_identical_initial_weights_fails_when_the_first_step_leaves_them_apart():
    verdict = judge(IdenticalInitialWeights(), seeded_apart(after_first=lambda w: f"w-step1-{w}"))
    assert verdict.status is Status.FAIL and "after their first step" in verdict.reason


def test_identical_initial_weights_is_unknown_without_digests_one_worker_or_inject():
    no_plan = Builder().inject("seed_skew", "all workers").start().masked(1, 10)
    verdict = judge(IdenticalInitialWeights(), no_plan)
    assert verdict.status is Status.UNKNOWN and "worker-0, worker-1" in verdict.reason
    one = Builder(workers=1).inject("seed_skew", "all workers").start().plan().masked(1, 10)
    assert judge(IdenticalInitialWeights(), one).status is Status.UNKNOWN
    assert judge(IdenticalInitialWeights(), Builder().start().plan().masked(1, 10)).status is Status.UNKNOWN


# --- distinct_dropout_masks / identical_dropout_masks ----------------------------------


def test_distinct_dropout_masks_passes_when_every_worker_draws_its_own():
    verdict = judge(DistinctDropoutMasks(), seeded_apart())
    assert verdict.status is Status.PASS, verdict.reason
    assert "all 10 steps" in verdict.reason and "worker-1 mask m1-w1" in verdict.reason


def test_distinct_dropout_masks_fails_on_one_shared_mask_in_the_window():
    verdict = judge(DistinctDropoutMasks(), seeded_apart(mask=lambda w, step: "m7" if step == 7 else own_mask(w, step)))
    assert verdict.status is Status.FAIL and "step 7" in verdict.reason


def test_distinct_dropout_masks_is_unknown_without_dropout_or_with_too_few_steps():
    no_dropout = seeded_apart(mask=lambda w, step: "")
    verdict = judge(DistinctDropoutMasks(), no_dropout)
    assert verdict.status is Status.UNKNOWN and "cluster.training.dropout" in verdict.reason
    assert judge(DistinctDropoutMasks(min_steps=11), seeded_apart()).status is Status.UNKNOWN


def test_identical_dropout_masks_passes_after_the_redeploy_with_one_seed():
    verdict = judge(IdenticalDropoutMasks(), seeded_apart())
    assert verdict.status is Status.PASS, verdict.reason
    assert "all 20 steps after recovery" in verdict.reason


def test_identical_dropout_masks_fails_when_masks_still_differ_after_recovery():
    verdict = judge(IdenticalDropoutMasks(), seeded_apart(healed_mask=own_mask))
    assert verdict.status is Status.FAIL and "different dropout masks" in verdict.reason and "step 11" in verdict.reason


def test_identical_dropout_masks_is_unknown_without_recovery_or_masks():
    never_healed = Builder().inject("seed_skew", "all workers").start().plan().masked(1, 10)
    assert judge(IdenticalDropoutMasks(), never_healed).status is Status.UNKNOWN
    verdict = judge(IdenticalDropoutMasks(), seeded_apart(healed_mask=lambda w, step: ""))
    assert verdict.status is Status.UNKNOWN and "after recovery" in verdict.reason


# --- unequal_local_batches / equal_local_batches ----------------------------------------


def batch_skewed(skewed=lambda w: 8 if w == 1 else 32, healed=lambda w: 32):
    b = Builder().inject("batch_size_skew", "worker-1").start().plan(batch=skewed).masked(1, 10)
    return b.heal("batch_size_skew", "worker-1").restart().wait(1).start().plan(batch=healed).masked(11, 30)


def test_unequal_local_batches_passes_when_the_skewed_worker_trains_another_batch():
    verdict = judge(UnequalLocalBatches(workers=[1]), batch_skewed())
    assert verdict.status is Status.PASS, verdict.reason
    assert verdict.reason == "batch per step: worker-0 32, worker-1 8"


def test_unequal_local_batches_fails_when_the_skew_did_not_reach_the_worker():
    verdict = judge(UnequalLocalBatches(workers=[1]), batch_skewed(skewed=lambda w: 32))
    assert verdict.status is Status.FAIL and "worker-1 trained with the others' batch" in verdict.reason


def test_unequal_local_batches_is_unknown_without_batch_sizes_or_others():
    no_size = batch_skewed(skewed=lambda w: 0)
    assert judge(UnequalLocalBatches(workers=[1]), no_size).status is Status.UNKNOWN
    verdict = judge(UnequalLocalBatches(workers=[0, 1]), batch_skewed())
    assert verdict.status is Status.UNKNOWN and "a worker to compare with" in verdict.reason


def test_equal_local_batches_after_recovery_pass_fail_unknown():
    assert judge(EqualLocalBatches(), batch_skewed()).status is Status.PASS
    still = judge(EqualLocalBatches(), batch_skewed(healed=lambda w: 8 if w == 1 else 32))
    assert still.status is Status.FAIL and "worker-0 32, worker-1 8" in still.reason
    assert judge(EqualLocalBatches(), batch_skewed(healed=lambda w: 0)).status is Status.UNKNOWN
    never_healed = Builder().inject("batch_size_skew", "worker-1").start().plan().masked(1, 10)
    assert judge(EqualLocalBatches(), never_healed).status is Status.UNKNOWN


# --- identical_batches / distinct_batches across the replicas of one worker ------------


def replica_steps(b, first, last, digests, losses=None):
    for step in range(first, last + 1):
        b.t += 0.1
        b._add(
            StepEvent(
                t=b.t,
                source="worker-0",
                epoch=(step - 1) // b.info.steps_per_epoch,
                step=step,
                batch_digest=digests(0, step),
                replica_batch_digests=[digests(r, step) for r in range(2)],
                replica_local_losses=[(losses or (lambda r, s: 0.25))(r, step) for r in range(2)],
            )
        )
    return b


def mirrored_run(during, after=lambda r, step: f"b{step}-r{r}", losses=None):
    b = Builder(workers=1).inject("reused_seed", "all workers").start()
    replica_steps(b, 1, 10, during, losses).heal("reused_seed", "all workers").restart().wait(1).start()
    return replica_steps(b, 11, 30, after).build()


def test_identical_batches_compares_the_replicas_of_one_worker():
    verdict = run_check(IdenticalBatches(), mirrored_run(lambda r, step: f"b{step}"))
    assert verdict.status is Status.PASS, verdict.reason
    assert "worker-0 replica-0 batch b1" in verdict.reason and "worker-0 replica-1 batch b1" in verdict.reason
    apart = run_check(IdenticalBatches(), mirrored_run(lambda r, step: f"b{step}-r{r}"))
    assert apart.status is Status.FAIL and "worker-0 replica-1 batch b1-r1" in apart.reason
    losses = run_check(IdenticalBatches(), mirrored_run(lambda r, step: f"b{step}", losses=lambda r, s: 0.25 + r))
    assert losses.status is Status.FAIL


def test_distinct_batches_compares_the_replicas_after_recovery():
    assert run_check(DistinctBatches(), mirrored_run(lambda r, step: f"b{step}")).status is Status.PASS
    shared = run_check(DistinctBatches(), mirrored_run(lambda r, step: f"b{step}", after=lambda r, step: f"b{step}"))
    assert shared.status is Status.FAIL and "shared a batch" in shared.reason


def test_one_worker_with_one_replica_is_still_unknown():
    b = Builder(workers=1).inject("reused_seed", "all workers").start().masked(1, 10)
    verdict = run_check(IdenticalBatches(), b.build())
    assert verdict.status is Status.UNKNOWN and "one replica" in verdict.reason
