import json

import pytest
from timeline_builder import TimelineBuilder, killed_and_recovered

from chaos.events import RUNNER, HealEvent, StepEvent
from chaos.timeline import Timeline


def test_fault_windows_pair_injects_with_heals_in_order():
    b = TimelineBuilder().start().steps(1, 5).inject("latency", "worker-1").wait(3)
    b.inject("pause_worker", "worker-0").wait(1).heal("latency", "worker-1").wait(2).heal("pause_worker", "worker-0")
    first, second = b.steps(6, 8).build().fault_windows()
    assert (first.fault, first.duration, first.open) == ("latency", 4.0, False)
    assert (second.fault, second.duration, second.heal.fault) == ("pause_worker", 3.0, "pause_worker")


def test_a_fault_without_heal_ends_at_the_next_restart_or_stays_open():
    (killed,) = killed_and_recovered().fault_windows()
    assert not killed.open and killed.heal is None and killed.duration == pytest.approx(2.0)
    (open_window,) = TimelineBuilder().steps(1, 3).inject().wait(4).steps(4, 5).build().fault_windows()
    assert open_window.open and open_window.duration == pytest.approx(4.2)


def test_before_first_fault_and_after_recovery():
    timeline = killed_and_recovered()
    before = timeline.before_first_fault()
    assert max(e.step for e in before.of(StepEvent)) == 15 and not before.of(HealEvent)
    after = timeline.after_recovery()
    assert after.events[0].kind == "restart"
    assert min(e.step for e in after.of(StepEvent)) == 11


def test_recovery_start_is_the_later_of_last_heal_and_last_restart_round():
    b = TimelineBuilder().steps(1, 3).inject().restart().wait(1).steps(1, 2).restart([1]).wait(2).restart([0])
    timeline = b.wait(3).heal().build()
    assert [e.worker for e in timeline.last_restart_round()] == [1, 0]
    assert timeline.recovery_start() == timeline.of(HealEvent)[0].t
    assert TimelineBuilder().steps(1, 3).build().recovery_start() is None


def test_step_durations_skip_restarts_and_gaps_in_numbering():
    b = TimelineBuilder(workers=1).steps(1, 3, dt=0.5).restart().wait(10).steps(2, 3, dt=0.25)
    durations = [d for _, d in b.build().step_durations()]
    assert durations == [0.5, 0.5, 0.25]


def test_append_keeps_time_order_and_events_with_equal_times_in_arrival_order():
    timeline = Timeline(TimelineBuilder().info)
    for t, step in ((2.0, 2), (1.0, 1), (2.0, 3)):
        timeline.append(StepEvent(t=t, source="worker-0", step=step))
    assert [e.step for e in timeline.of(StepEvent)] == [1, 2, 3]


def test_an_event_of_no_time_stays_after_the_one_before_it_and_falls_in_no_window():
    """A log line that gave no time (chaos diagnose reads some: NaN) keeps its place."""
    nan = float("nan")
    events = [
        StepEvent(t=2.0, source="worker-0", step=2),
        StepEvent(t=nan, source="worker-0", step=3),
        StepEvent(t=1.0, source="worker-1", step=1),
    ]
    timeline = Timeline(TimelineBuilder().info, events)
    assert [e.step for e in timeline.of(StepEvent)] == [1, 2, 3]
    timeline.append(StepEvent(t=nan, source="worker-1", step=4))  # after the last one
    timeline.append(StepEvent(t=1.5, source="worker-1", step=5))  # before step 2, at its time
    timeline.append(StepEvent(t=2.0, source="worker-1", step=6))  # after everything ordered at 2.0
    assert [e.step for e in timeline.of(StepEvent)] == [1, 5, 2, 3, 4, 6]
    assert [e.step for e in timeline.between(0.0, 10.0).of(StepEvent)] == [1, 5, 2, 6]


def test_json_round_trip():
    timeline = killed_and_recovered(TimelineBuilder(reference_digest="abc"))
    again = Timeline.from_dict(json.loads(json.dumps(timeline.to_dict())))
    assert again.info == timeline.info and again.events == timeline.events
    assert again.events[0].source.startswith("worker-") and RUNNER in {e.source for e in again.events}
