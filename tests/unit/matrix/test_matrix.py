"""The degraded-network matrix: its cells and how a cell's timeline is judged."""

from __future__ import annotations

import dataclasses

import pytest

from chaos.checks import Completed, run_checks
from chaos.checks.verdict import Status
from chaos.events import RUNNER, ErrorEvent, HealEvent, InjectEvent, LogLine, PhaseEvent, StepEvent
from chaos.matrix.cells import all_cells, select
from chaos.matrix.cli import table
from chaos.matrix.outcome import first_sign_s, judge_cell, outcome
from chaos.report import build_report
from chaos.timeline import Timeline

ERROR = "tensorflow.python.framework.errors_impl.UnavailableError"


def test_every_cell_is_a_valid_scenario_with_a_unique_name():
    cells = all_cells()
    # toxics and packet faults in 3 directions; packet_duplicate egress (downstream) only
    assert len(cells) == (6 + 7) * 3 * 2 * 2 + 1 * 2 * 2
    assert {c.direction for c in cells if c.toxic == "packet_duplicate"} == {"downstream"}
    assert len({c.name for c in cells}) == len(cells)
    scenario = select(["stream_cut"], ["downstream"], ["chief"], ["mid_training"])[0].scenario()
    (step,) = scenario.faults
    assert (step.fault.name, step.fault.worker, step.fault.stream, step.fault.limit_bytes) == (
        "stream_cut",
        0,
        "downstream",
        65536,
    )
    assert step.for_s == 30
    packet = select(["packet_loss"], ["upstream"], ["non-chief"], ["bring_up"])[0].scenario()
    (step,) = packet.faults
    assert (step.fault.name, step.fault.worker, step.fault.direction, step.fault.percent) == (
        "packet_loss",
        1,
        "ingress",
        20,
    )


def report(window_events, *, before_dt=0.01, heal_at=30.0):
    cell = select(["latency"], ["both"], ["non-chief"], ["mid_training"])[0]
    s = cell.scenario()
    events = [PhaseEvent(t=0.0, source=RUNNER, phase="training")]
    t = 0.0
    for step in range(1, 11):
        t += before_dt
        events += [StepEvent(t=t, source=f"worker-{w}", step=step) for w in (0, 1)]
    t0 = t + 0.001
    events.append(InjectEvent(t=t0, source=RUNNER, fault="latency", target="worker-1", params={}))
    events += [type(e)(**{**e.__dict__, "t": t0 + e.t}) for e in window_events]
    events.append(HealEvent(t=t0 + heal_at, source=RUNNER, fault="latency", target="worker-1"))
    timeline = Timeline(s.run_info(), sorted(events, key=lambda e: e.t))
    return build_report(s, cell.name, run_checks([Completed()], timeline), timeline)


def test_an_error_in_the_window_is_a_bounded_error_with_its_class_and_first_line():
    o = judge_cell(
        report(
            [
                ErrorEvent(
                    t=2.5,
                    source="worker-0",
                    error_class=ERROR,
                    message="Graph execution error:\n\nCollective ops is aborted by: Socket closed",
                )
            ]
        )
    )
    assert outcome(o) == "error" and o.reason.startswith(
        "UnavailableError: Collective ops is aborted by: Socket closed"
    )
    assert first_sign_s(o) == pytest.approx(2.5)


def test_no_step_and_no_error_for_the_whole_window_is_a_hang():
    o = judge_cell(report([]))
    assert outcome(o) == "hang" and o.failed
    assert o.reason == (
        "no step and no error for 30 s; no task named missing in the logs; "
        "last steps: worker-0 step 10, worker-1 step 10"
    )


def test_a_hang_names_who_is_missing_from_the_coordination_services_stragglers():
    lines = [
        LogLine(t=12.0, source="worker-0", text=text)
        for text in (
            "I0000 coordination_service.cc:640] Waiting for 1/2 tasks to connect.",
            "I0000 coordination_service.cc:643] Example stragglers:",
            "/job:worker/replica:0/task:1",
        )
    ]
    o = judge_cell(report(lines))
    assert outcome(o) == "hang" and "worker-0's coordination service was still waiting for worker-1" in o.reason


def test_a_hang_in_a_collective_shows_each_workers_last_step():
    in_flight = [StepEvent(t=0.01, source="worker-0", step=11)]
    o = judge_cell(report(in_flight))
    assert o.reason.endswith("no task named missing in the logs; last steps: worker-0 step 11, worker-1 step 10")


def test_the_steps_in_flight_at_the_inject_do_not_hide_a_hang():
    """Measured: a one-way blackhole on the non-chief; step 49 finished 0.01 s after the inject, then nothing."""
    in_flight = [StepEvent(t=0.01, source=f"worker-{w}", step=11) for w in (0, 1)]
    o = judge_cell(report(in_flight))
    assert outcome(o) == "hang" and "last step +0.0 s after the inject, then none for 30 s" in o.reason


def test_steps_three_times_slower_are_slowed_and_unchanged_steps_normal():
    slow = [StepEvent(t=0.03 * i, source=f"worker-{w}", step=10 + i) for i in range(1, 8) for w in (0, 1)]
    o = judge_cell(report(slow, heal_at=0.25))
    assert outcome(o) == "slowed" and o.reason == "step time x3.0"
    same = [StepEvent(t=0.01 * i, source=f"worker-{w}", step=10 + i) for i in range(1, 8) for w in (0, 1)]
    assert outcome(judge_cell(report(same, heal_at=0.1))) == "normal"


def test_the_table_has_a_row_per_cell_with_the_outcome():
    rows = [(select(["latency"], ["both"], ["non-chief"], ["mid_training"])[0], report([]))]
    text = table(rows)
    assert "| latency | both | non-chief | mid training | **hang** | - | unknown |" in text


def test_training_that_finishes_inside_the_window_is_not_a_hang():
    from chaos.events import DoneEvent

    slow = [StepEvent(t=0.03 * i, source=f"worker-{w}", step=10 + i) for i in range(1, 8) for w in (0, 1)]
    done = [DoneEvent(t=0.25, source=f"worker-{w}", step=17) for w in (0, 1)]
    assert outcome(judge_cell(report(slow + done))) == "slowed"


def test_a_bring_up_fault_is_compared_with_the_steps_after_its_heal():
    """Measured: 100 ms latency from bring-up gave 40-76 steps in the window, no step before it."""
    cell = select(["latency"], ["both"], ["chief"], ["bring_up"])[0]
    s = cell.scenario()
    events = [InjectEvent(t=0.0, source=RUNNER, fault="latency", target="worker-0", params={})]
    events += [StepEvent(t=1.0 + 0.2 * i, source=f"worker-{w}", step=i) for i in range(1, 11) for w in (0, 1)]
    events.append(HealEvent(t=5.0, source=RUNNER, fault="latency", target="worker-0"))
    events += [StepEvent(t=5.0 + 0.01 * i, source=f"worker-{w}", step=10 + i) for i in range(1, 11) for w in (0, 1)]
    timeline = Timeline(s.run_info(), sorted(events, key=lambda e: e.t))
    o = judge_cell(build_report(s, cell.name, run_checks([Completed()], timeline), timeline))
    assert outcome(o) == "slowed" and o.reason == "step time x20.0"


def test_step_times_count_from_when_the_fault_landed_not_from_its_inject():
    """Measured: a packet fault's helper landed 4.2 s after the inject; the normal steps
    taken meanwhile made a 51x slowdown read x1.3."""
    from dataclasses import replace as _replace

    slow_landing = [StepEvent(t=0.01 * i, source=f"worker-{w}", step=10 + i) for i in range(1, 100) for w in (0, 1)]
    slow_landing += [
        StepEvent(t=1.0 + 0.5 * i, source=f"worker-{w}", step=200 + i) for i in range(1, 20) for w in (0, 1)
    ]
    r = report(slow_landing, heal_at=11.0)
    events = [_replace(e, completed_t=e.t + 1.0) if isinstance(e, InjectEvent) else e for e in r.timeline.events]
    landed = _replace(r, timeline=Timeline(r.timeline.info, events))
    assert outcome(judge_cell(r)) == "normal"  # counted from the inject: the fast steps dominate
    o = judge_cell(landed)
    assert outcome(o) == "slowed" and float(o.reason.split("x")[-1]) > 10, o.reason


def test_a_selection_with_no_cell_is_an_error_naming_the_one_way_row(monkeypatch, capsys):
    import chaos.cli
    import chaos.interrupts

    monkeypatch.setattr(chaos.interrupts, "install", lambda: None)
    assert chaos.cli.main(["matrix", "--toxic", "packet_duplicate", "--direction", "upstream"]) == 2
    err = capsys.readouterr().err
    assert "no cell of the matrix" in err and "packet_duplicate: downstream only" in err


def test_a_cells_verdict_passes_when_bounded_fails_on_a_hang_and_is_unknown_when_not_judged():
    """The matrix's question of a cell (``bounded``), as every check answers: an error or training on
    passes, a silent hang fails, a run whose fault never landed cannot be judged."""
    error = judge_cell(report([ErrorEvent(t=1.0, source="worker-0", error_class=ERROR, message="Socket closed")]))
    assert (error.status, error.check, outcome(error)) == (Status.PASS, "bounded", "error")
    assert [type(e).__name__ for e in error.evidence] == ["InjectEvent", "ErrorEvent"]
    hang = judge_cell(report([]))
    assert (hang.status, outcome(hang), first_sign_s(hang)) == (Status.FAIL, "hang", None)
    same = [StepEvent(t=0.01 * i, source=f"worker-{w}", step=10 + i) for i in range(1, 8) for w in (0, 1)]
    assert judge_cell(report(same, heal_at=0.1)).status is Status.PASS
    r = report([])
    no_inject = Timeline(r.timeline.info, [e for e in r.timeline.events if not isinstance(e, InjectEvent)])
    never = judge_cell(dataclasses.replace(r, timeline=no_inject))
    assert (never.status, outcome(never), never.reason) == (
        Status.UNKNOWN,
        "not judged",
        "the fault was never injected",
    )


def test_a_short_window_with_no_step_and_no_error_is_not_judged_rather_than_a_crash():
    """Quiet for less than HANG_S: not a hang, and no step to call it progress (it raised IndexError)."""
    v = judge_cell(report([], heal_at=3.0))
    assert (v.status, outcome(v)) == (Status.UNKNOWN, "not judged") and "under the 10 s a hang needs" in v.reason
