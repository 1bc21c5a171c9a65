"""A live view of `chaos run` in a terminal (``rich``): per scenario, its phase
and active faults, and per worker a bar toward the final step with its state.
The plain lines of ``ProgressPrinter`` still scroll above it, so nothing is lost
when the view is gone. Off a terminal (CI, a pipe, TERM=dumb, CI set) ``view()``
gives the plain ``ProgressPrinter``: the same lines as before, nothing redrawn.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass, field

from chaos.events import (
    DoneEvent,
    ErrorEvent,
    Event,
    ExitEvent,
    HealEvent,
    InjectEvent,
    PhaseEvent,
    PlanEvent,
    RestartEvent,
    RestoredEvent,
    StartEvent,
    StepEvent,
)
from chaos.live.progress import ProgressPrinter

REFRESH_PER_S = 4


def interactive(stream) -> bool:
    """A person is watching: a terminal that can redraw, and not a CI job."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb" and not os.environ.get("CI")


def view(stream=None) -> ProgressPrinter:
    """The live view on a terminal, the plain lines otherwise."""
    stream = stream or sys.stdout
    return LiveView(stream) if interactive(stream) else ProgressPrinter(stream)


@dataclass
class RunState:
    """What the view shows of one scenario run (updated from its events)."""

    name: str
    final_step: int = 0
    phase: str = "starting"
    faults: dict[tuple[str, str], float] = field(default_factory=dict)  # (fault, target) -> since
    steps: dict[str, int] = field(default_factory=dict)  # worker -> last step
    states: dict[str, str] = field(default_factory=dict)  # worker -> what it is doing
    finished: str = ""

    def apply(self, e: Event) -> None:
        who = e.source
        if isinstance(e, PhaseEvent):
            self.phase = e.phase
        elif isinstance(e, InjectEvent):
            self.faults[(e.fault, e.target)] = e.t
        elif isinstance(e, HealEvent):
            self.faults.pop((e.fault, e.target), None)
        elif isinstance(e, PlanEvent) and e.total_steps:
            self.final_step = e.total_steps
        elif isinstance(e, StepEvent):
            self.steps[who] = e.step
            self.states[who] = "training"
        elif isinstance(e, StartEvent):
            self.states[who] = "started"
        elif isinstance(e, RestoredEvent):
            self.steps[who] = e.step
            self.states[who] = f"restored step {e.step}"
        elif isinstance(e, ErrorEvent):
            self.states[who] = f"error {e.error_class.rsplit('.', 1)[-1]}"
        elif isinstance(e, ExitEvent):
            self.states[who] = f"exited {e.exit_code}" + (" (OOM)" if e.oom_killed else "")
        elif isinstance(e, RestartEvent):
            self.states[who] = "restarting"
        elif isinstance(e, DoneEvent):
            self.steps[who] = e.step
            self.states[who] = "done"


class LiveView(ProgressPrinter):
    """``ProgressPrinter`` whose lines print above a live panel of every run."""

    def __init__(self, stream=None, *, prefix: str = "", t0: float | None = None, _shared=None) -> None:
        super().__init__(stream, prefix=prefix, t0=t0)
        if _shared is None:
            from rich.console import Console
            from rich.live import Live

            console = Console(file=self.stream, force_terminal=True)
            _shared = _Shared(console=console, runs=[], lock=threading.Lock())
            _shared.live = Live(
                console=console, get_renderable=_shared.render, refresh_per_second=REFRESH_PER_S, transient=True
            )
        self._shared = _shared
        self._state: RunState | None = None

    # --- the ProgressPrinter interface -------------------------------------

    def for_run(self, prefix: str) -> LiveView:
        return LiveView(self.stream, prefix=prefix, t0=self.t0, _shared=self._shared)

    def expect(self, name: str, final_step: int) -> None:
        super().expect(name, final_step)
        self._state = RunState(name, final_step)
        with self._shared.lock:
            self._shared.runs.append(self._state)
        self._shared.start()

    def line(self, text: str) -> None:
        tag = f"[{self.prefix}] " if self.prefix else ""
        self._shared.console.print(
            f"[{time.monotonic() - self.t0:6.1f}s] {tag}{text}", markup=False, highlight=False, soft_wrap=True
        )

    def event(self, e: Event) -> None:
        if self._state is not None:
            with self._shared.lock:
                self._state.apply(e)
        super().event(e)

    def finish(self, status: str) -> None:
        if self._state is not None:
            with self._shared.lock:
                self._state.finished = status

    def close(self) -> None:
        self._shared.stop()


@dataclass
class _Shared:
    """One live panel for every run of the suite (runs print side by side)."""

    console: object
    runs: list[RunState]
    lock: threading.Lock
    live: object = None
    started: bool = False
    # Start/stop have a lock of their own: Live.stop draws once more, which takes ``lock``.
    control: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        with self.control:
            if not self.started:
                self.live.start()
                self.started = True

    def stop(self) -> None:
        with self.control:
            if self.started:
                self.live.stop()
                self.started = False

    def render(self):
        with self.lock:
            return render([r for r in self.runs if not r.finished])


def render(runs: list[RunState]):
    """The panel: a table per live run (rich renderables)."""
    from rich.console import Group
    from rich.progress_bar import ProgressBar
    from rich.table import Table
    from rich.text import Text

    parts = []
    for run in runs:
        faults = ", ".join(f"{f} on {t}" for f, t in run.faults) or "none"
        title = Text.assemble(
            (run.name, "bold"),
            f"  phase: {run.phase}  ",
            ("faults: ", ""),
            (faults, "bold red" if run.faults else "dim"),
        )
        table = Table.grid(padding=(0, 1))
        table.add_column(width=9)
        table.add_column(width=40)
        table.add_column(width=13, justify="right")
        table.add_column()
        for worker in sorted(set(run.steps) | set(run.states)):
            step = run.steps.get(worker, 0)
            total = run.final_step or max(step, 1)
            done = f"{step}/{run.final_step}" if run.final_step else f"step {step}"
            table.add_row(
                worker, ProgressBar(total=total, completed=min(step, total), width=40), done, run.states.get(worker, "")
            )
        parts += [title, table]
    return Group(*parts)
