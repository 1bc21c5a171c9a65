"""non_finite_loss and stopped_at_non_finite_loss on hand-built timelines (pass,
fail, unknown; where the NaN began), and identical_weights when the weights every
worker ends with are NaN."""

import dataclasses

from timeline_builder import TimelineBuilder

from chaos.checks import IdenticalWeights, NonFiniteLoss, NonFiniteWeights, Status, StoppedAtNonFiniteLoss, run_check
from chaos.events import StepEvent
from chaos.timeline import Timeline

NAN = float("nan")
INF = float("inf")


class Builder(TimelineBuilder):
    def inject(self, *args, **kwargs):
        self.wait(0.01)
        return super().inject(*args, **kwargs)

    def heal(self, *args, **kwargs):
        self.wait(0.01)
        return super().heal(*args, **kwargs)

    def losses(self, first, last, loss, local_loss, workers=None, dt=0.1):
        """Steps whose global and local losses are functions of (worker, step)."""
        for step in range(first, last + 1):
            self.t += dt
            for w in workers if workers is not None else range(self.info.num_workers):
                self._add(
                    StepEvent(
                        t=self.t,
                        source=f"worker-{w}",
                        epoch=(step - 1) // self.info.steps_per_epoch,
                        step=step,
                        loss=loss(w, step),
                        local_loss=local_loss(w, step),
                        batch_digest=f"b{step}-{w}",
                    )
                )
        return self


POISON_STEP = 14


def spread(w, step):
    return NAN if step >= POISON_STEP else 0.5


def local_spread(w, step):
    # At the poisoned step only worker-1's own loss is NaN; after it, every worker's.
    if step > POISON_STEP or (step == POISON_STEP and w == 1):
        return NAN
    return 0.25 + w


def poisoned(loss=spread, local_loss=local_spread, last=20, workers=None):
    b = Builder().inject("poison_input", "worker-1", worker=1, step=POISON_STEP).start()
    return b.losses(1, last, loss, local_loss, workers=workers)


def judge(check, timeline):
    return run_check(check, timeline)


def test_passes_when_every_worker_turns_nan_and_names_the_step_and_the_poisoned_worker():
    verdict = judge(NonFiniteLoss(), poisoned().build())
    assert verdict.status is Status.PASS, verdict.reason
    assert "at the same step: worker-0 at step 14 (nan), worker-1 at step 14 (nan)" in verdict.reason
    assert "it began on worker-1 (local loss nan, while worker-0's 0.25 was finite)" in verdict.reason
    assert {e.step for e in verdict.evidence if isinstance(e, StepEvent)} == {POISON_STEP}


def test_inf_counts_as_non_finite():
    verdict = judge(NonFiniteLoss(), poisoned(loss=lambda w, s: INF if s >= POISON_STEP else 0.5).build())
    assert verdict.status is Status.PASS, verdict.reason
    assert "worker-0 at step 14 (inf)" in verdict.reason


def test_fails_when_only_one_worker_turns_nan():
    alone = poisoned(loss=lambda w, s: NAN if w == 1 and s >= POISON_STEP else 0.5)
    verdict = judge(NonFiniteLoss(), alone.build())
    assert verdict.status is Status.FAIL
    assert (
        "only worker-1 had a non-finite loss; it stayed finite on worker-0 through step 20 (loss 0.5)" in verdict.reason
    )


def test_fails_when_no_loss_is_non_finite():
    verdict = judge(NonFiniteLoss(), poisoned(loss=lambda w, s: 0.5, local_loss=lambda w, s: 0.5).build())
    assert verdict.status is Status.FAIL
    assert verdict.reason.startswith("every loss stayed finite over 40 step events in the fault window")


def test_steps_after_the_heal_do_not_count():
    b = Builder().inject("poison_input", "worker-1").start().losses(1, 10, lambda w, s: 0.5, lambda w, s: 0.5)
    b.heal("poison_input", "worker-1").losses(11, 20, spread, local_spread)
    verdict = judge(NonFiniteLoss(), b.build())
    assert verdict.status is Status.FAIL and "stayed finite over 20 step events" in verdict.reason


def test_unknown_without_step_events():
    verdict = judge(NonFiniteLoss(), Builder().inject("poison_input", "worker-1").start().build())
    assert verdict.status is Status.UNKNOWN
    assert "no training step in the fault window" in verdict.reason


def test_unknown_when_the_fault_never_fired():
    verdict = judge(NonFiniteLoss(), Builder().start().losses(1, 20, spread, local_spread).build())
    assert verdict.status is Status.UNKNOWN and "never injected" in verdict.reason


def test_unknown_when_a_worker_reported_no_step():
    verdict = judge(NonFiniteLoss(), poisoned(workers=[1]).build())
    assert verdict.status is Status.UNKNOWN
    assert "worker-0 reported no step in the fault window" in verdict.reason


def test_says_when_the_workers_turned_nan_at_different_steps():
    late = poisoned(loss=lambda w, s: NAN if s >= POISON_STEP + w else 0.5)
    verdict = judge(NonFiniteLoss(), late.build())
    assert verdict.status is Status.PASS
    assert "not at the same step: worker-0 at step 14 (nan), worker-1 at step 15 (nan)" in verdict.reason


def test_when_every_local_loss_is_nan_at_once_the_origin_cannot_be_seen():
    verdict = judge(NonFiniteLoss(), poisoned(local_loss=spread).build())
    assert verdict.status is Status.PASS
    assert (
        "every worker's local loss was non-finite at once (worker-0, worker-1): where it began cannot be seen"
        in verdict.reason
    )


def test_a_workload_without_local_losses_is_judged_without_naming_the_origin():
    timeline = poisoned().build()
    info = dataclasses.replace(timeline.info, evidence=tuple(e for e in timeline.info.evidence if e != "local_loss"))
    verdict = judge(NonFiniteLoss(), Timeline(info, timeline.events))
    assert verdict.status is Status.PASS
    assert "which worker it began on cannot be seen: the workload reports no local loss" in verdict.reason


def test_a_workload_without_steps_is_unknown():
    timeline = poisoned().build()
    info = dataclasses.replace(timeline.info, evidence=("errors",), workload="a user's job (agent: none)")
    verdict = judge(NonFiniteLoss(), Timeline(info, timeline.events))
    assert verdict.status is Status.UNKNOWN and "training steps" in verdict.reason


# --- identical_weights on NaN weights ------------------------------------------------


def redeployed(after_restore):
    """Poisoned at step 14, redeployed at 16; the restored weights give ``after_restore`` losses."""
    b = Builder().inject("poison_input", "worker-1", worker=1, step=POISON_STEP).start()
    b.losses(1, 10, spread, local_spread).checkpoint(10).losses(11, 16, spread, local_spread)
    b.heal("poison_input", "worker-1").restart().wait(1).start()
    b.restored(0, epoch=1, step=10, digest="w-restored").restored(1, epoch=1, step=10, digest="w-restored")
    b.losses(11, 30, after_restore, after_restore)
    return b.done(0, digest="w-final").done(1, digest="w-final").build()


def test_identical_weights_passes_finite_weights_restored_from_before_the_nan():
    verdict = judge(IdenticalWeights(), redeployed(lambda w, s: 0.5))
    assert verdict.status is Status.PASS, verdict.reason


def test_identical_weights_fails_identical_but_nan_weights():
    # The restore read a backup written after the NaN step: every digest agrees, every weight is NaN.
    verdict = judge(IdenticalWeights(), redeployed(lambda w, s: NAN))
    assert verdict.status is Status.FAIL
    assert (
        "every worker has weights w-final after the restore and at the end, but they are not finite" in verdict.reason
    )
    assert "worker-0's last step 30 had loss nan" in verdict.reason


# --- stopped_at_non_finite_loss (TerminateOnNaN) --------------------------------------


def terminated(last=POISON_STEP, codes=(0, 0), done_step=None):
    b = poisoned(last=last)
    for w in range(2):
        b.done(w, step=done_step or last, digest="w-nan")
    b.wait(3)
    for w, code in enumerate(codes):
        if code is not None:
            b.exit(w, code)
    return b.heal("poison_input", "worker-1").build()


def test_stopped_passes_when_every_worker_stops_at_its_first_nan_reports_done_and_exits_0():
    verdict = judge(StoppedAtNonFiniteLoss(), terminated())
    assert verdict.status is Status.PASS, verdict.reason
    assert "worker-0 at step 14 (done, weights w-nan), worker-1 at step 14 (done, weights w-nan)" in verdict.reason
    assert StoppedAtNonFiniteLoss.states_failed_recovery


def test_stopped_fails_when_training_went_on_past_the_nan():
    verdict = judge(StoppedAtNonFiniteLoss(), terminated(last=20))
    assert verdict.status is Status.FAIL
    assert "training went on past the non-finite loss: worker-0 to step 20 (non-finite from step 14)" in verdict.reason


def test_stopped_fails_on_a_failed_exit_or_no_nan():
    crashed = judge(StoppedAtNonFiniteLoss(), terminated(codes=(0, 1)))
    assert crashed.status is Status.FAIL and "not as a success: worker-1 exit 1" in crashed.reason
    clean = Builder().inject("poison_input", "worker-1").start().losses(1, 10, lambda w, s: 0.5, lambda w, s: 0.5)
    verdict = judge(StoppedAtNonFiniteLoss(), clean.build())
    assert verdict.status is Status.FAIL and "never became non-finite" in verdict.reason


def test_stopped_is_unknown_without_steps_or_exits():
    assert judge(StoppedAtNonFiniteLoss(), Builder().inject("poison_input").start().build()).status is Status.UNKNOWN
    verdict = judge(StoppedAtNonFiniteLoss(), terminated(codes=(0, None)))
    assert verdict.status is Status.UNKNOWN and "worker-1 did not exit in the fault window" in verdict.reason


# --- non_finite_weights (the loss can stay finite: oneDNN's fused ReLU) ----------------


def weights_went(bad_from, last=20, workers=None, loss=lambda w, s: 0.8):
    """Poisoned at step 14; worker w's weights are non-finite from step bad_from(w) on
    (None: never); the loss stays finite, as measured with oneDNN's ops on."""
    b = Builder().inject("poison_input", "worker-1", worker=1, step=POISON_STEP).start()
    for step in range(1, last + 1):
        b.t += 0.1
        for w in workers if workers is not None else range(2):
            start = bad_from(w)
            b._add(
                StepEvent(
                    t=b.t,
                    source=f"worker-{w}",
                    step=step,
                    loss=loss(w, step),
                    local_loss=loss(w, step),
                    weights_finite=start is None or step < start,
                )
            )
    return b


def test_non_finite_weights_passes_when_every_worker_turns_nan_and_says_the_loss_hid_it():
    verdict = judge(NonFiniteWeights(), weights_went(lambda w: POISON_STEP).build())
    assert verdict.status is Status.PASS, verdict.reason
    assert "at the same step: worker-0 after step 14, worker-1 after step 14" in verdict.reason
    assert "the loss did not show it (worker-0's 0.8, worker-1's 0.8: finite)" in verdict.reason
    # The loss check on the same run fails: what a TerminateOnNaN would see.
    assert judge(NonFiniteLoss(), weights_went(lambda w: POISON_STEP).build()).status is Status.FAIL


def test_non_finite_weights_with_a_nan_loss_says_so():
    verdict = judge(NonFiniteWeights(), weights_went(lambda w: POISON_STEP, loss=spread).build())
    assert verdict.status is Status.PASS and "the loss was non-finite there too" in verdict.reason


def test_non_finite_weights_fails_when_the_weights_stay_finite_or_do_not_spread():
    clean = judge(NonFiniteWeights(), weights_went(lambda w: None).build())
    assert clean.status is Status.FAIL
    assert clean.reason.startswith("every worker's weights stayed finite over 40 step events in the fault window")
    alone = judge(NonFiniteWeights(), weights_went(lambda w: POISON_STEP if w == 1 else None).build())
    assert alone.status is Status.FAIL
    assert "only worker-1 had non-finite weights; they stayed finite on worker-0 through step 20" in alone.reason


def test_non_finite_weights_is_unknown_when_no_step_says_or_a_worker_is_silent():
    unreported = judge(NonFiniteWeights(), poisoned().build())  # steps without weights_finite
    assert unreported.status is Status.UNKNOWN and "says whether the weights were finite" in unreported.reason
    silent = judge(NonFiniteWeights(), weights_went(lambda w: POISON_STEP, workers=[1]).build())
    assert silent.status is Status.UNKNOWN and "worker-0 reported no weights check" in silent.reason
    timeline = weights_went(lambda w: POISON_STEP).build()
    info = dataclasses.replace(
        timeline.info, evidence=tuple(e for e in timeline.info.evidence if e != "weights_finite")
    )
    agent = judge(NonFiniteWeights(), Timeline(info, timeline.events))
    assert agent.status is Status.UNKNOWN and "a per-step report that the weights are finite" in agent.reason


def test_identical_weights_fails_nan_weights_behind_a_finite_loss():
    b = Builder().start()
    for step in range(1, 6):
        b.t += 0.1
        for w in range(2):
            b._add(StepEvent(t=b.t, source=f"worker-{w}", step=step, loss=0.8, local_loss=0.8, weights_finite=step < 3))
    verdict = judge(IdenticalWeights(), b.done(0, digest="w-nan").done(1, digest="w-nan").build())
    assert verdict.status is Status.FAIL
    assert "worker-0's last step 5 had loss 0.8 and non-finite weights" in verdict.reason
