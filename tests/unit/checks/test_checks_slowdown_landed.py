"""slowdown judges the steps taken after the fault had landed (its inject
completed), not those taken while a slow inject was still on its way: measured
with a packet fault whose helper took 0.6 s to land, 50 of the 68 steps in the
window were normal ones and the median said 1.5x for a 75x slowdown."""

from dataclasses import replace

from timeline_builder import TimelineBuilder

from chaos.checks import Slowdown, Status, run_check
from chaos.events import InjectEvent


def slow_inject_run(landed_after_s):
    b = TimelineBuilder(steps_per_epoch=50, epochs=3).start().steps(1, 40, dt=0.01).inject("packet_loss")
    inject_at = b.t
    b.steps(41, 90, dt=0.01)  # normal steps while the inject is still on its way (0.5 s)
    b.steps(91, 110, dt=0.6).heal("packet_loss").steps(111, 130, dt=0.01)
    timeline = b.build()
    events = [
        replace(e, completed_t=inject_at + landed_after_s) if isinstance(e, InjectEvent) else e for e in timeline.events
    ]
    return type(timeline)(timeline.info, events)


def test_the_steps_before_the_fault_landed_do_not_count():
    verdict = run_check(Slowdown(factor=3), slow_inject_run(0.5))
    assert verdict.status is Status.PASS, verdict.reason
    assert "60.0x" in verdict.reason


def test_an_inject_without_a_completion_time_counts_from_its_start_as_before():
    verdict = run_check(Slowdown(factor=3), slow_inject_run(0.0))
    assert verdict.status is Status.FAIL, verdict.reason  # 50 normal steps out of 70 in the window
