"""The orchestration policy, branch by branch: decide(plan, state, seen, now).

Each row gives what the scenario asks (plan), what the runner did (state),
what the current generation's events show (seen) and the time, and the
actions the policy must decide. No cluster, no clock.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from chaos.events import DoneEvent, ErrorEvent, ExitEvent, StepEvent
from chaos.runner.policy import (
    Abort,
    AwaitRestart,
    FaultPlan,
    FaultStatus,
    Finish,
    Heal,
    Inject,
    Plan,
    Redeploy,
    Restart,
    Seen,
    State,
    decide,
    heal_due,
)
from chaos.scenario.triggers import AtBringUp, AtEpoch, AtSeconds, AtStep

T0 = 1000.0  # training started


def fault(at=None, *, for_s=None, until=None, create=False, name="f"):
    return FaultPlan(name, at or AtStep(step=5), for_s, until, create)


def plan(*faults, workers=2, restart="all", max_restarts=1, symptom=60.0, total=300.0):
    return Plan(workers, tuple(faults), symptom, total, restart, max_restarts)


def state(
    p, *, injected=None, healed=(), last_progress=T0, first_failure=None, restarts=0, generation_start=T0, stepped=True
):
    """Mid-training by default (a step was seen); ``stepped=False``: before the first step."""
    injected = injected or {}
    faults = tuple(FaultStatus(injected.get(i), i in healed) for i in range(len(p.faults)))
    return State(T0, generation_start, last_progress, faults, first_failure, restarts, stepped)


def seen(step=0, epoch=0, last_step_t=None, done=(), exited=(), failed=(), last_done_t=None):
    if done and last_done_t is None:
        last_done_t = T0 + 4  # just before the times the tests decide at
    return Seen(step, epoch, last_step_t, frozenset(done), frozenset(exited), frozenset(failed), last_done_t)


def actions(p, st, sn, now):
    return list(decide(p, st, sn, now).actions)


# --- faults fire in order at their triggers ----------------------------------------------


@pytest.mark.parametrize(
    "trigger, sn, now, fires",
    [
        (AtStep(step=5), seen(step=4), T0 + 1, False),
        (AtStep(step=5), seen(step=5), T0 + 1, True),
        (AtStep(step=5), seen(step=9), T0 + 1, True),  # a step skipped between polls still fires
        (AtEpoch(epoch=2), seen(step=39, epoch=1), T0 + 1, False),
        (AtEpoch(epoch=2), seen(step=41, epoch=2), T0 + 1, True),
        (AtSeconds(seconds=10), seen(), T0 + 9.9, False),
        (AtSeconds(seconds=10), seen(), T0 + 10, True),
    ],
)
def test_a_fault_fires_when_its_trigger_is_due(trigger, sn, now, fires):
    p = plan(fault(trigger))
    assert actions(p, state(p), sn, now) == ([Inject(0)] if fires else [])


def test_faults_fire_in_order_the_next_only_after_the_previous():
    p = plan(fault(AtStep(step=10)), fault(AtStep(step=2)))
    assert actions(p, state(p), seen(step=5), T0 + 1) == []  # the second is due, the first is not
    assert actions(p, state(p), seen(step=10), T0 + 1) == [Inject(0), Inject(1)]
    assert actions(p, state(p, injected={0: T0}), seen(step=10), T0 + 1) == [Inject(1)]


def test_a_fault_fired_at_bring_up_is_not_fired_again():
    p = plan(fault(AtBringUp()))
    assert actions(p, state(p, injected={0: T0 - 5}), seen(step=3), T0 + 1) == []


# --- heals -------------------------------------------------------------------------------


def test_heal_after_for_seconds_since_the_inject():
    f = fault(for_s=5)
    assert not heal_due(f, FaultStatus(100.0), seen(step=50, epoch=9), 104.9, 0.0)
    assert heal_due(f, FaultStatus(100.0), seen(), 105.0, 0.0)


@pytest.mark.parametrize(
    "until, due, not_due",
    [
        (AtStep(step=8), (seen(step=8), 0.0), (seen(step=7, epoch=2), 1e9)),
        (AtEpoch(epoch=2), (seen(epoch=2), 0.0), (seen(step=99, epoch=1), 1e9)),
        (AtSeconds(seconds=30), (seen(), T0 + 30), (seen(step=99, epoch=9), T0 + 29)),
    ],
)
def test_heal_when_until_is_due(until, due, not_due):
    f = fault(until=until)
    assert heal_due(f, FaultStatus(T0), due[0], due[1], T0)
    assert not heal_due(f, FaultStatus(T0), not_due[0], not_due[1], T0)


def test_never_healed_on_its_own_without_for_or_until_nor_twice_nor_before_it_fired():
    assert not heal_due(fault(), FaultStatus(T0), seen(step=10**6), 1e12, T0)
    assert not heal_due(fault(for_s=1), FaultStatus(T0, healed=True), seen(), 1e12, T0)
    assert not heal_due(fault(for_s=1), FaultStatus(None), seen(), 1e12, T0)


def test_a_due_heal_is_decided():
    p = plan(fault(for_s=5))
    assert actions(p, state(p, injected={0: T0 + 1}), seen(step=6), T0 + 6) == [Heal(0)]


# --- redeploys of create-time faults --------------------------------------------------------


def test_a_create_time_fault_fired_mid_training_redeploys_and_its_heal_too():
    p = plan(fault(AtStep(step=3), until=AtStep(step=8), create=True, name="reused_seed"))
    assert actions(p, state(p), seen(step=3), T0 + 1) == [Inject(0), Redeploy("redeploy: reused_seed injected")]
    assert actions(p, state(p, injected={0: T0 + 1}), seen(step=8), T0 + 2) == [
        Heal(0),
        Redeploy("redeploy: reused_seed healed"),
    ]


def test_a_fault_that_is_not_create_time_never_redeploys():
    p = plan(fault(AtStep(step=3), until=AtStep(step=8)))
    assert actions(p, state(p), seen(step=3), T0 + 1) == [Inject(0)]


# --- the end -------------------------------------------------------------------------------


def test_every_worker_done_and_exited_zero_finishes_completed():
    p = plan()
    assert actions(p, state(p), seen(step=100, done={0, 1}, exited={0, 1}), T0 + 5) == [Finish(True)]


def test_done_but_not_yet_exited_waits():
    p = plan()
    d = decide(p, state(p), seen(step=100, done={0, 1}, exited={0}), T0 + 5)
    assert d.actions == () and d.waiting == "training done; waiting for the workers to exit"


def test_a_worker_lingering_after_done_finishes_completed_with_a_notice_never_a_restart():
    # Measured in CI: a restart here trained the finished job again from step 0
    # (the chief had deleted its backup), and the recovery checks judged that run.
    p = plan(fault(), symptom=30)
    st = state(p, injected={0: T0 + 1}, healed={0}, last_progress=T0 + 4)
    sn = seen(step=500, done={0, 1}, exited={0}, last_done_t=T0 + 4)
    assert decide(p, st, sn, T0 + 33).actions == ()
    assert actions(p, st, sn, T0 + 35) == [
        Finish(True, notice="worker-1 reported done but did not exit within 30s (timeouts.symptom)")
    ]


def test_an_error_exit_after_done_finishes_completed_with_a_notice():
    p = plan(fault())
    st = state(p, injected={0: T0 + 1}, healed={0})
    sn = seen(step=500, done={0, 1}, exited={0, 1}, failed={1})
    assert actions(p, st, sn, T0 + 5) == [Finish(True, notice="worker-1 exited with an error after reporting done")]


def test_a_failure_before_every_worker_reported_done_still_restarts():
    p = plan(fault())
    st = state(p, injected={0: T0 + 1}, healed={0}, first_failure=T0 + 2)
    sn = seen(step=499, done={0}, exited={0, 1}, failed={1})
    assert actions(p, st, sn, T0 + 5) == [Restart((0, 1), "worker-1 failed")]


def test_the_total_timeout_finishes_incomplete():
    p = plan(total=30)
    assert actions(p, state(p), seen(step=3), T0 + 31) == [Finish(False, "total timeout of 30s reached")]


# --- failures: settle, then restart by the policy -------------------------------------------


def test_a_first_failure_is_remembered_and_the_symptom_left_to_settle():
    p = plan(fault())
    d = decide(p, state(p, injected={0: T0}), seen(step=5, exited={1}, failed={1}), T0 + 10)
    assert d.actions == () and d.waiting == "waiting for the symptom to settle"
    assert d.state.first_failure == T0 + 10


def test_once_every_worker_exited_the_failed_run_restarts_every_worker_healing_first():
    p = plan(fault())
    st = state(p, injected={0: T0}, first_failure=T0 + 10)
    assert actions(p, st, seen(step=5, exited={0, 1}, failed={0, 1}), T0 + 11) == [
        Heal(0),
        Restart((0, 1), "worker-0, worker-1 failed"),
    ]


def test_a_survivor_that_never_exits_is_restarted_after_the_symptom_timeout():
    p = plan(fault(), symptom=20)
    st = state(p, injected={0: T0 + 5}, healed={0}, first_failure=T0 + 10, last_progress=T0 + 10)
    assert actions(p, st, seen(step=5, exited={1}, failed={1}), T0 + 29) == []
    assert actions(p, st, seen(step=5, exited={1}, failed={1}), T0 + 30.5) == [Restart((0, 1), "worker-1 failed")]


def test_restart_failed_restarts_only_the_failed_workers():
    p = plan(fault(), restart="failed", workers=3)
    st = state(p, injected={0: T0 - 1}, healed={0}, first_failure=T0)
    assert actions(p, st, seen(exited={0, 1, 2}, failed={2}), T0 + 1) == [Restart((2,), "worker-2 failed")]


@pytest.mark.parametrize(
    "restart, max_restarts, used", [("none", 1, 0), ("all", 1, 1), ("all", 0, 0), ("failed", 2, 2)]
)
def test_when_the_policy_allows_no_further_restart_the_run_finishes_incomplete(restart, max_restarts, used):
    p = plan(fault(), restart=restart, max_restarts=max_restarts)
    st = state(p, injected={0: T0 - 1}, healed={0}, first_failure=T0, restarts=used)
    assert actions(p, st, seen(exited={0, 1}, failed={1}), T0 + 1) == [
        Finish(False, "worker-1 failed; recovery policy allows no (further) restart")
    ]


def test_a_stall_restarts_every_worker_even_with_restart_failed():
    p = plan(fault(), restart="failed", symptom=20)
    st = state(p, injected={0: T0 + 1}, last_progress=T0 + 1)
    assert actions(p, st, seen(step=5, last_step_t=T0 + 1), T0 + 21) == []
    assert actions(p, st, seen(step=5, last_step_t=T0 + 1), T0 + 21.5) == [
        Heal(0),
        Restart((0, 1), "no progress for 20s"),
    ]


def test_a_step_is_progress():
    p = plan(symptom=20)
    d = decide(p, state(p), seen(step=9, last_step_t=T0 + 30), T0 + 45)
    assert d.actions == () and d.state.last_progress == T0 + 30


def test_a_timed_fault_still_active_holds_back_restarts():
    p = plan(fault(for_s=30), symptom=20)
    st = state(p, injected={0: T0}, first_failure=T0 + 1)
    d = decide(p, st, seen(exited={0, 1}, failed={0, 1}), T0 + 25)
    assert d.actions == () and d.waiting == "a timed fault is still active"
    # Once it healed, the failure is handled.
    assert actions(p, st, seen(exited={0, 1}, failed={0, 1}), T0 + 31) == [
        Heal(0),
        Restart((0, 1), "worker-0, worker-1 failed"),
    ]


def test_a_fault_healed_at_a_step_does_not_hold_back_the_restart_of_a_job_with_no_live_worker():
    """`until: {step: 35}` on a job whose every worker exited: no step can come, so waiting for it
    hung the run; the fault is healed with the failure handling and the job restarted."""
    p = plan(fault(AtStep(step=3), until=AtStep(step=35)), fault(AtStep(step=20), name="kill"), symptom=20)
    st = state(p, injected={0: T0, 1: T0 + 5}, first_failure=T0 + 6)
    assert actions(p, st, seen(step=20, exited={0, 1}, failed={0, 1}), T0 + 30) == [
        Heal(0),
        Heal(1),
        Restart((0, 1), "worker-0, worker-1 failed"),
    ]
    # While a worker lives it may still reach the step: the fault holds, as a timed one does.
    d = decide(p, st, seen(step=20, exited={0}, failed={0}), T0 + 30)
    assert d.actions == () and d.waiting == "a timed fault is still active"
    # A time-healed fault still waits for its time, live worker or not.
    q = plan(fault(for_s=30), symptom=20)
    d = decide(q, state(q, injected={0: T0}, first_failure=T0 + 1), seen(exited={0, 1}, failed={0, 1}), T0 + 25)
    assert d.waiting == "a timed fault is still active"


# --- transitions ------------------------------------------------------------------------------


def test_state_transitions():
    p = plan(fault(), fault())
    st = State.start(p, T0, {0: T0 - 3})
    assert st.next_fault == 1 and st.faults[0].active
    st = st.injected(1, T0 + 5)
    assert st.next_fault == 2 and st.last_progress == T0 + 5
    st = st.healed(0, T0 + 6)
    assert not st.faults[0].active and st.faults[1].active and st.last_progress == T0 + 6
    st = st.new_generation(T0 + 9, failure_restart=True)
    assert (st.generation_start, st.restarts, st.first_failure) == (T0 + 9, 1, None)
    assert st.new_generation(T0 + 10, failure_restart=False).restarts == 1


def test_seen_reads_the_generation_events():
    events = [
        StepEvent(t=1.0, source="worker-0", epoch=0, step=1),
        StepEvent(t=2.0, source="worker-1", epoch=1, step=21),
        DoneEvent(t=3.0, source="worker-0"),
        ExitEvent(t=3.1, source="worker-0", exit_code=0),
        ExitEvent(t=3.2, source="worker-1", exit_code=137),
    ]
    assert Seen.of(events) == Seen(
        21, 1, 2.0, frozenset({0}), frozenset({0, 1}), frozenset({1}), 3.0, exit_codes=((1, 137),)
    )


def test_seen_keeps_the_non_zero_exit_codes_in_order_and_each_workers_last_error():
    events = [
        ErrorEvent(
            t=1.0,
            source="worker-1",
            error_class="tensorflow.python.framework.errors_impl.UnavailableError",
            message="Collective ops is aborted by: ...",
        ),
        ErrorEvent(
            t=0.5,
            source="worker-0",
            error_class="tensorflow.python.framework.errors_impl.PermissionDeniedError",
            message="/shared/backup/workertemp_1; Permission denied",
        ),
        ExitEvent(t=2.0, source="worker-0", exit_code=1),
        ExitEvent(t=2.5, source="worker-1", exit_code=1),
        ErrorEvent(t=0.1, source="runner", error_class="X", message="not a worker's"),
    ]
    sn = Seen.of(events)
    assert sn.exit_codes == ((0, 1), (1, 1))
    assert sn.errors == (
        (0, "PermissionDeniedError: /shared/backup/workertemp_1; Permission denied"),
        (1, "UnavailableError: Collective ops is aborted by: ..."),
    )


# --- a workload broken by itself ---------------------------------------------------------------


def test_a_crash_before_the_first_step_with_no_fault_is_the_workloads_own():
    p = plan(fault(AtStep(step=5)))
    (abort,) = actions(p, state(p, stepped=False), seen(exited={1}, failed={1}), T0 + 2)
    assert isinstance(abort, Abort) and "worker-1 exited with an error before the first training step" in abort.reason


PERMISSION = ((0, "PermissionDeniedError: /shared/backup/workertemp_1; Permission denied"),)
NO_DONE = Plan(2, (fault(AtStep(step=40), name="kill_worker"),), reports_done=False)
KILL_AT_40 = plan(fault(AtStep(step=40), name="kill_worker"))
STEPPED = dict(max_step=20, epoch=0, last_step_t=T0 + 10)


# (why, plan, state, seen, what the run must say: an Abort's words, or None for "not an abort")
OWN_FAILURES = [
    (
        "the job breaks at its first save, before the step-40 kill",
        KILL_AT_40,
        state(KILL_AT_40),
        Seen(**STEPPED, exited=frozenset({0}), failed=frozenset({0}), exit_codes=((0, 1),), errors=PERMISSION),
        "worker-0 (exit code 1) exited with an error at step 20, with no fault injected (fault 0, kill_worker, "
        "was due at step 40): the workload itself fails, not from a fault; its error: worker-0: PermissionDeniedError: "
        "/shared/backup/workertemp_1; Permission denied",
    ),
    (
        "a job's error that dumps a tensor is quoted in one line (Keras 3's fit under MWMS)",
        KILL_AT_40,
        state(KILL_AT_40),
        Seen(
            **STEPPED,
            exited=frozenset({0}),
            failed=frozenset({0}),
            exit_codes=((0, 1),),
            errors=(
                (
                    0,
                    "ValueError: Attempt to convert a value (PerReplica:{\n  0: "
                    "<tf.Tensor: shape=(32, 20), dtype=float32, numpy=\narray([[1.0, "
                    + "2.0, " * 500
                    + "]])>}) with an unsupported type",
                ),
            ),
        ),
        "its error: worker-0: ValueError: Attempt to convert a value (PerReplica:{ ... (the whole of it: the worker's log)",
    ),
    (
        "the first to exit is named first, every failed worker with its code",
        KILL_AT_40,
        state(KILL_AT_40),
        Seen(**STEPPED, exited=frozenset({0, 1}), failed=frozenset({0, 1}), exit_codes=((1, 1), (0, 137))),
        "worker-1 (exit code 1), worker-0 (exit code 137) exited with an error at step 20, with no fault injected",
    ),
    (
        "before the first step, as before",
        KILL_AT_40,
        state(KILL_AT_40, stepped=False),
        Seen(exited=frozenset({1}), failed=frozenset({1}), exit_codes=((1, 2),)),
        "worker-1 (exit code 2) exited with an error before the first training step, with no fault injected",
    ),
    (
        "a job without done events, exiting 1 on its own",
        NO_DONE,
        state(NO_DONE),
        Seen(**STEPPED, exited=frozenset({0, 1}), failed=frozenset({1}), exit_codes=((1, 1),)),
        "worker-1 (exit code 1) exited with an error at step 20, with no fault injected",
    ),
    (
        "a scenario of no faults says no fault was due",
        plan(),
        state(plan()),
        Seen(**STEPPED, exited=frozenset({1}), failed=frozenset({1}), exit_codes=((1, 1),)),
        "with no fault injected: the workload itself fails",
    ),
    (
        "a create-time fault fired at bring-up (tf_config, version_skew): a symptom",
        plan(fault(AtBringUp(), create=True)),
        state(plan(fault(AtBringUp(), create=True)), injected={0: T0 - 1}),
        Seen(**STEPPED, exited=frozenset({1}), failed=frozenset({1}), exit_codes=((1, 1),)),
        None,
    ),
    (
        "a port blocked at bring-up (fired after the workers started): a symptom",
        plan(fault(AtBringUp())),
        state(plan(fault(AtBringUp())), injected={0: T0 + 0.5}, stepped=False),
        Seen(exited=frozenset({1}), failed=frozenset({1}), exit_codes=((1, 1),)),
        None,
    ),
    (
        "a failure after the fault fired: a symptom",
        plan(fault()),
        state(plan(fault()), injected={0: T0 + 5}),
        Seen(**STEPPED, exited=frozenset({1}), failed=frozenset({1}), exit_codes=((1, 137),)),
        None,
    ),
    (
        "the first of two faults fired and healed, the second not yet: still after a fault",
        plan(fault(), fault(AtStep(step=90))),
        state(plan(fault(), fault(AtStep(step=90))), injected={0: T0 + 5}, healed={0}),
        Seen(**STEPPED, exited=frozenset({1}), failed=frozenset({1}), exit_codes=((1, 1),)),
        None,
    ),
    (
        "an error exit after every worker reported done stays a notice of the completed run",
        KILL_AT_40,
        state(KILL_AT_40),
        Seen(
            **STEPPED,
            done=frozenset({0, 1}),
            exited=frozenset({0, 1}),
            failed=frozenset({1}),
            last_done_t=T0 + 9,
            exit_codes=((1, 1),),
        ),
        None,
    ),
]


@pytest.mark.parametrize("why, p, st, sn, says", OWN_FAILURES, ids=[row[0] for row in OWN_FAILURES])
def test_a_job_that_fails_with_no_fault_injected_is_an_error_not_a_verdict(why, p, st, sn, says):
    acts = actions(p, st, sn, T0 + 12)
    aborts = [a for a in acts if isinstance(a, Abort)]
    if says is None:
        assert not aborts, acts
    else:
        assert acts == aborts and len(aborts) == 1, acts
        assert says in aborts[0].reason


def test_a_crash_after_a_fault_fired_is_a_symptom_not_an_abort():
    p = plan(fault(AtBringUp()))
    d = decide(p, state(p, injected={0: T0 - 1}, stepped=False), seen(exited={1}, failed={1}), T0 + 2)
    assert not any(isinstance(a, Abort) for a in d.actions)


def test_no_first_step_within_bring_up_with_no_fault_aborts_but_not_for_a_job_without_step_reports():
    p = plan(fault(AtSeconds(seconds=200)), symptom=250)
    assert actions(p, state(p, stepped=False), seen(), T0 + 119) == []
    (abort,) = actions(p, state(p, stepped=False), seen(), T0 + 121)
    assert isinstance(abort, Abort) and "no training step within 120s" in abort.reason
    quiet = Plan(2, p.faults, reports_steps=False, reports_done=False)
    assert not [a for a in actions(quiet, state(quiet, stepped=False), seen(), T0 + 121) if isinstance(a, Abort)]


def test_a_job_without_done_events_has_finished_when_every_worker_exited_zero():
    p = Plan(2, (), reports_done=False)
    assert actions(p, state(p), seen(step=3, exited={0, 1}), T0 + 5) == [Finish(True)]


def test_a_generation_still_coming_up_gets_the_bring_up_time_before_it_counts_as_stalled():
    p = plan(symptom=20)  # bring_up_s 120
    restarted = state(p, last_progress=T0 + 50, generation_start=T0 + 50)
    assert actions(p, restarted, seen(), T0 + 50 + 21) == []  # TF still importing after a restart
    assert actions(p, restarted, seen(), T0 + 50 + 121) == [Restart((0, 1), "no progress for 120s")]
    stepping = seen(step=3, last_step_t=T0 + 51)
    assert actions(p, restarted, stepping, T0 + 51 + 21) == [Restart((0, 1), "no progress for 20s")]


def test_a_job_with_the_agent_that_exits_zero_everywhere_without_done_has_finished_and_says_so():
    """A custom loop with no report call (issue 27): waiting for its done events stalled
    the run for timeouts.symptom, then called the finished job 'no progress'."""
    p = Plan(2, (fault(AtSeconds(seconds=5), name="kill_worker"),))
    st = state(p, injected={0: T0 + 5}, restarts=1, stepped=False)
    (finish,) = actions(p, st, seen(exited={0, 1}), T0 + 90)
    assert isinstance(finish, Finish) and finish.completed
    assert finish.notice == (
        "worker-0, worker-1 exited 0 without reporting done: the job ended (a job with no "
        "Keras fit and no report.done call reports none)"
    )
    # One worker's done is missing: the same.
    (finish,) = actions(p, st, seen(exited={0, 1}, done={0}), T0 + 90)
    assert finish.completed and finish.notice.startswith("worker-1 exited 0 without reporting done")
    # Not while a worker still runs.
    assert actions(p, st, seen(exited={0}), T0 + 20) == []


# --- a restart loop ends the run instead of restarting ------------------------------------------

LOOP = (
    "stop retrying: restart loop: IndexError: Read less bytes than requested on every worker again after each "
    "of the last 2 restarts, with no step of progress"
)


def looping(**kw) -> Seen:
    """Both workers failed the restore again: the generation settled, at the point a restart is decided."""
    return replace(seen(exited={0, 1}, failed={0, 1}), **kw)


@pytest.mark.parametrize(
    "used, max_restarts, budget",
    [
        (2, 5, "3 of max_restarts 5 left unused"),
        (2, 3, "1 of max_restarts 3 left unused"),
        (2, 2, "max_restarts spent too"),
    ],
)
def test_a_restart_loop_seen_ends_the_run_instead_of_the_next_restart(used, max_restarts, budget):
    p = plan(fault(), max_restarts=max_restarts)
    st = state(p, injected={0: T0 - 1}, healed={0}, first_failure=T0, restarts=used, stepped=True)
    without = actions(p, st, looping(), T0 + 1)
    if used < max_restarts:
        assert without == [Restart((0, 1), "worker-0, worker-1 failed")]  # the same run with no loop seen
    assert actions(p, st, looping(loop=LOOP), T0 + 1) == [
        Finish(False, f"worker-0, worker-1 failed; {LOOP} ({budget})")
    ]


def test_a_restart_loop_is_acted_on_only_where_a_restart_would_be():
    p = plan(fault(), max_restarts=5, symptom=30)
    # still training (nothing failed, no stall): the loop text changes nothing
    st = state(p, injected={0: T0 - 1}, healed={0}, restarts=2, last_progress=T0 + 9)
    assert actions(p, st, replace(seen(step=3, last_step_t=T0 + 9), loop=LOOP), T0 + 10) == []
    # one worker failed, the other has not exited yet: the symptom settles first
    st = state(p, injected={0: T0 - 1}, healed={0}, restarts=2, first_failure=T0 + 5)
    assert actions(p, st, replace(seen(exited={1}, failed={1}), loop=LOOP), T0 + 10) == []
    # every worker finished: the run completed, whatever was said before
    done = replace(seen(step=15, done={0, 1}, exited={0, 1}), loop=LOOP)
    assert actions(p, st, done, T0 + 10) == [Finish(True)]


def test_a_restart_loop_heals_what_is_still_active_before_it_ends_the_run():
    p = plan(fault(), max_restarts=5)
    st = state(p, injected={0: T0 - 1}, first_failure=T0, restarts=2)
    assert actions(p, st, looping(loop=LOOP), T0 + 1) == [
        Heal(0),
        Finish(False, f"worker-0, worker-1 failed; {LOOP} (3 of max_restarts 5 left unused)"),
    ]


def test_a_restart_loop_ends_a_run_the_orchestrator_restarts_too():
    p = replace(plan(fault(), max_restarts=5), restarted_by="orchestrator")
    st = state(p, injected={0: T0 - 1}, healed={0}, first_failure=T0, restarts=2)
    assert actions(p, st, looping(), T0 + 1) == [AwaitRestart((0, 1), "worker-0, worker-1 failed")]
    assert actions(p, st, looping(loop=LOOP), T0 + 1) == [
        Finish(False, f"worker-0, worker-1 failed; {LOOP} (3 of max_restarts 5 left unused)")
    ]
