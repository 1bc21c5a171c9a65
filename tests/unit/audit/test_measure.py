import pytest
from audit_reports import (
    killed_worker_report,
    preempted_report,
    preempted_trained_to_end_report,
    reference_report,
    report,
    silent_report,
)
from timeline_builder import TimelineBuilder

from chaos.audit.battery import KILLED_WORKER, PEER_PAUSED, REFERENCE
from chaos.audit.measure import MEASURED, NOT_MEASURED, measure, save_cost


def test_killed_worker_figures_come_from_its_timeline():
    m = measure(KILLED_WORKER, killed_worker_report(), symptom_window_s=30)
    assert m.status == MEASURED
    assert m.detection["worker-1"].value == pytest.approx(0.2) and m.detection["worker-1"].note == "exit 137"
    assert m.detection["worker-1"].how == "exited"
    assert m.detection["worker-0"].value == pytest.approx(1.0)
    assert m.detection["worker-0"].note == "UnavailableError: connection broke"
    assert m.detection["worker-0"].how == "connection broke"
    assert m.detect_s.value == pytest.approx(0.2)  # inject -> the first exit (worker-1, 137)
    assert m.restart_after_s.value == pytest.approx(2.0)  # inject -> the runner's restart
    assert m.restart_s.value == pytest.approx(5.6)  # restart -> first step (5 + 0.5 + 0.1)
    assert m.restart_parts["process_start_s"].value == pytest.approx(5.0)
    assert m.steps_lost.value == 5 and m.save_interval_steps == 10  # step 15 done, step 10 restored
    assert m.resumed_step == 11 and m.target_exit_code == 137 and m.hang is False
    assert m.verdict("matches_uninterrupted").passed and m.drift.value == 0


def test_drift_when_the_resume_is_not_bit_exact():
    r = killed_worker_report(exact="fail")
    r.timeline.info = type(r.timeline.info)(**{**vars(r.timeline.info), "reference_final_loss": 0.4})
    m = measure(KILLED_WORKER, r, 30)
    assert m.verdict("matches_uninterrupted").failed
    assert m.drift.value == pytest.approx(0.1)  # |0.5 - 0.4|


def test_save_cost_of_an_epoch_end_save_is_step_n_to_its_checkpoint_without_the_next_epoch_s_start():
    figure, extras = save_cost(reference_report(save_pause=0.3, epoch_start=0.6).timeline)
    assert extras == pytest.approx([0.3, 0.3]) and figure.value == pytest.approx(0.3)


def test_save_cost_of_a_mid_epoch_save_is_what_it_adds_to_step_n():
    # The save runs in step 10's batch-end callbacks, before step 10 is reported.
    b = TimelineBuilder().start().steps(1, 9).wait(0.25).steps(10, 10).checkpoint(10).steps(11, 20)
    figure, extras = save_cost(b.build())
    assert extras == pytest.approx([0.25]) and figure.value == pytest.approx(0.25)


def test_save_cost_is_the_extra_time_of_the_step_holding_a_save():
    figure, extras = save_cost(reference_report(save_pause=0.3).timeline)
    assert extras == pytest.approx([0.3, 0.3]) and figure.value == pytest.approx(0.3)
    m = measure(REFERENCE, reference_report(), 40)
    assert m.status == MEASURED and m.step_time_s.value == pytest.approx(0.1)
    assert not m.detect_s.known and m.hang is None


def test_save_cost_unknown_without_checkpoint_events():
    b = TimelineBuilder().start().steps(1, 30).done(0).done(1)
    figure, _ = save_cost(b.build())
    assert figure.value is None and "no checkpoint" in figure.note


@pytest.mark.parametrize("noticed_after, hang", [(10.0, False), (None, True), (45.0, True)])
def test_hang_is_no_error_within_the_symptom_window(noticed_after, hang):
    m = measure(PEER_PAUSED, silent_report(noticed_after), symptom_window_s=40)
    assert m.hang is hang
    if noticed_after is None:
        assert m.detection["worker-0"].value is None and "still waiting" in m.detection["worker-0"].note


def test_a_broken_run_is_not_measured_with_its_error():
    m = measure(KILLED_WORKER, report(TimelineBuilder().build(), error="Docker is down"), 30)
    assert m.status == NOT_MEASURED and "Docker is down" in m.why


def test_a_fault_that_landed_after_training_ended_is_not_measured():
    b = TimelineBuilder().start().steps(1, 30).done(0).done(1).wait(1).inject("kill_worker", "worker-1", worker=1)
    m = measure(KILLED_WORKER, report(b.build()), 30)
    assert m.status == NOT_MEASURED and "could not act" in m.why


def test_a_kill_by_the_runner_s_stall_watchdog_is_not_the_job_noticing():
    from chaos.events import RestartEvent

    b = TimelineBuilder().start().steps(1, 10).checkpoint(10).steps(11, 15)
    b.inject("blocked_port", "worker-1", worker=1, mode="blackholed").wait(40).heal("blocked_port", "worker-1")
    b.wait(3.7).exit(0, 137).wait(3).exit(1, 137)
    for w in (0, 1):
        b._add(RestartEvent(t=b.t, source=f"worker-{w}", reason="no progress for 40s"))
    b.wait(5).start().restored(0, 1, 10).restored(1, 1, 10).steps(11, 30).done(0).done(1)
    m = measure(PEER_PAUSED, report(b.build()), symptom_window_s=40)
    assert m.hang is True
    assert m.detection["worker-0"].value is None and "stall watchdog" in m.detection["worker-0"].note
    assert m.detect_s.value == pytest.approx(43.7) and "stall watchdog" in m.detect_s.note


def test_the_inject_s_own_duration_is_measured_when_the_inject_says_when_it_was_done():
    import dataclasses

    from chaos.events import InjectEvent

    r = killed_worker_report()
    assert not measure(KILLED_WORKER, r, 30).inject_s.known  # the inject did not say when it was done
    events = r.timeline.events
    i = next(n for n, e in enumerate(events) if isinstance(e, InjectEvent))
    events[i] = dataclasses.replace(events[i], completed_t=events[i].t + 0.25)
    assert measure(KILLED_WORKER, r, 30).inject_s.value == pytest.approx(0.25)


def _preempted(caught_after):
    from chaos.audit.battery import PREEMPTION

    return measure(PREEMPTION, preempted_report(caught_after), symptom_window_s=30)


def test_a_preempted_job_s_reaction_is_split_at_tf_s_sigterm_caught_line():
    m = _preempted(caught_after=0.7)
    assert m.sigterm_noticed_s.value == pytest.approx(0.7) and "polls for it every 1 s" in m.sigterm_noticed_s.note
    assert (
        m.exit_after_sigterm_noticed_s.value == pytest.approx(1.7) and "exit 42" in m.exit_after_sigterm_noticed_s.note
    )
    assert m.detection["worker-1"].value == pytest.approx(2.4)  # from the inject, as before


def test_without_tf_s_sigterm_line_the_split_is_missing_with_why():
    m = _preempted(caught_after=None)
    assert not m.sigterm_noticed_s.known and "SIGTERM caught" in m.sigterm_noticed_s.note
    assert not m.exit_after_sigterm_noticed_s.known
    assert m.detection["worker-1"].value == pytest.approx(2.4)


def test_a_preempted_job_that_trains_to_the_end_in_the_grace_noticed_nothing():
    """The example's fit job, preempted at epoch 2 with a 15 s grace: TF caught the SIGTERM, both
    workers trained to step 300 and exited 0 (docs/audit.md). Their exits are the end of training,
    not a detection: no detection figure, no D for the model, and not a hang."""
    from chaos.audit.battery import PREEMPTION

    m = measure(PREEMPTION, preempted_trained_to_end_report(), symptom_window_s=30)
    assert all(not f.known and "finished training" in f.note for f in m.detection.values())
    assert not m.detect_s.known and "nothing to detect" in m.detect_s.note
    assert m.hang is None
    assert m.sigterm_noticed_s.value == pytest.approx(0.6)
    assert (
        not m.exit_after_sigterm_noticed_s.known and "trained to the end first" in m.exit_after_sigterm_noticed_s.note
    )
    assert m.target_done and m.target_exit_code == 0


def test_a_sigterm_the_stall_watchdog_sends_is_not_the_fault_s():
    """On a blackholed peer the runner's watchdog stops the hung workers at ~43 s and TF logs
    `SIGTERM caught` (the audit's runs): that is not a SIGTERM of the fault."""
    b = TimelineBuilder().start().steps(1, 10).checkpoint(10).steps(11, 15)
    b.inject("blocked_port", "worker-1", worker=1, mode="blackholed").wait(43.4)
    b.log(1, "W0000 preemption_notifier.cc:89] SIGTERM caught at 2026-11-27T21:00:00+00:00").wait(3).exit(1, 137)
    m = measure(PEER_PAUSED, report(b.build()), symptom_window_s=40)
    assert not m.sigterm_noticed_s.known and "sends no SIGTERM" in m.sigterm_noticed_s.note
    assert not m.exit_after_sigterm_noticed_s.known
