"""chaos run's progress: a live panel on a terminal, today's plain lines off one (CI)."""

import io

import pytest

from chaos.events import (
    RUNNER,
    DoneEvent,
    ExitEvent,
    HealEvent,
    InjectEvent,
    PhaseEvent,
    PlanEvent,
    RestartEvent,
    StepEvent,
)
from chaos.live.progress import ProgressPrinter
from chaos.live.view import LiveView, RunState, render, view


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture(autouse=True)
def plain_env(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")


def test_a_terminal_gets_the_live_view():
    assert type(view(Terminal())) is LiveView


@pytest.mark.parametrize("env", [{"CI": "true"}, {"TERM": "dumb"}])
def test_ci_and_dumb_terminals_get_plain_lines(monkeypatch, env):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert type(view(Terminal())) is ProgressPrinter


def test_a_pipe_or_file_gets_plain_lines_exactly_as_before():
    out = io.StringIO()
    show = view(out)
    assert type(show) is ProgressPrinter
    show.expect("s", 100)  # the live view's calls are no-ops here
    show.event(InjectEvent(t=1.0, source=RUNNER, fault="latency", target="worker-1"))
    show.finish("pass")
    show.close()
    assert out.getvalue().endswith("FAULT latency on worker-1 injected\n")
    assert "\x1b[" not in out.getvalue()  # no terminal control sequences in a CI log


def events():
    return [
        PhaseEvent(t=0.0, source=RUNNER, phase="training"),
        StepEvent(t=1.0, source="worker-0", step=40),
        StepEvent(t=1.0, source="worker-1", step=39),
        InjectEvent(t=2.0, source=RUNNER, fault="kill_worker", target="worker-1"),
        InjectEvent(t=2.0, source=RUNNER, fault="latency", target="worker-0"),
        PhaseEvent(t=2.0, source=RUNNER, phase="fault"),
        ExitEvent(t=2.1, source="worker-1", exit_code=137),
        HealEvent(t=3.0, source=RUNNER, fault="latency", target="worker-0"),
    ]


def text_of(runs, width=120):
    from rich.console import Console

    console = Console(file=io.StringIO(), width=width, record=True, color_system=None)
    console.print(render(runs))
    return console.export_text()


def test_the_panel_shows_each_workers_progress_the_phase_and_the_active_faults():
    run = RunState("killed-worker", final_step=100)
    for e in events():
        run.apply(e)
    text = text_of([run])
    assert "killed-worker" in text and "phase: fault" in text
    assert "faults: kill_worker on worker-1" in text and "latency" not in text  # healed
    assert "40/100" in text and "39/100" in text and "exited 137" in text and "training" in text


def test_a_restart_and_done_show_and_a_plan_gives_the_final_step_when_unknown():
    run = RunState("job")
    run.apply(StepEvent(t=1.0, source="worker-0", step=5))
    assert "step 5" in text_of([run])
    run.apply(PlanEvent(t=1.0, source="worker-0", total_steps=50))
    run.apply(RestartEvent(t=2.0, source="worker-0"))
    assert "5/50" in text_of([run]) and "restarting" in text_of([run])
    run.apply(DoneEvent(t=3.0, source="worker-0", step=50))
    assert "50/50" in text_of([run]) and "done" in text_of([run])
    assert "faults: none" in text_of([run])


def test_the_live_view_prints_the_same_lines_above_its_panel_and_clears_it_at_the_end():
    out = Terminal()
    show = view(out)
    run = show.for_run("killed-worker")
    run.expect("killed-worker", 100)
    for e in events():
        run.event(e)
    run.finish("pass")
    show.close()
    text = out.getvalue()
    assert "[killed-worker] FAULT kill_worker on worker-1 injected" in text
    assert "[killed-worker] worker-1: exited 137" in text
    assert not show._shared.started
