"""Run a suite of scenarios, several at once, and get every report back.

Most of a scenario's time is deliberate waiting (heartbeat timeouts, fault
windows), so scenarios overlap: up to ``jobs`` run at once, each in its own
thread with its own cluster (own network, volume and proxy; nothing shared).
A scenario whose checks judge step times (``timing_sensitive``) runs alone,
because another scenario's training on the same cores would change the
times it measures.

Up to ``ahead`` more scenarios are *prepared* before their turn: their
cluster is up and their standby workers import TensorFlow at the lowest CPU
weight (chaos.backends.docker.standby), on CPU the running scenarios leave idle. A
prepared scenario waits for its turn (``admit``) before anything it measures
starts, so its bring-up then costs little more than making the strategy.
Nothing is prepared while a timing-sensitive scenario runs.

Every scenario given gets a report, in the order given, even when its run
broke. Ctrl-C (or SIGTERM) in the main thread stops every live run; each
tears its cluster down before the interrupt propagates.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from chaos import interrupts
from chaos.eventlog import EventLog
from chaos.live.progress import ProgressPrinter
from chaos.report import Report
from chaos.runner.diagnosis_notes import with_diagnosis
from chaos.runner.run import RunOptions, run
from chaos.scenario.model import Scenario

WAIT_S = 0.2  # how often the main thread wakes up to take a Ctrl-C
AHEAD = 2  # scenarios prepared ahead of their turn (each holds a network, a proxy and standbys)


@dataclass(frozen=True)
class SuiteEntry:
    scenario: Scenario
    file: str

    @property
    def exclusive(self) -> bool:
        return any(check.timing_sensitive for check in self.scenario.checks)


class ScenarioOverran(Exception):
    """A scenario still running ``limit_s`` after it started: the runner's own
    timeouts should have ended it, so this is a bug to report, not a verdict."""

    def __init__(self, name: str, limit_s: float, where: str = "") -> None:
        super().__init__(
            f"scenario {name} still running {limit_s:g} s after it started "
            f"(its timeouts.total should have ended it){where}"
        )


class Suite:
    """Scenarios scheduled on threads; ``result(i)`` waits for the i-th report.

    Non-exclusive scenarios start first, up to ``jobs`` at once; exclusive
    ones then run one by one, alone.
    """

    def __init__(
        self,
        entries: list[SuiteEntry],
        options: RunOptions,
        *,
        jobs: int = 1,
        ahead: int = AHEAD,
        show: ProgressPrinter | None = None,
        on_report: Callable[[int, Report], None] | None = None,
        on_admit: Callable[[int], None] | None = None,
        hold_exclusive: bool = False,
    ) -> None:
        self.entries = entries
        self.options = options
        self.jobs = max(1, jobs)
        self.ahead = max(0, ahead)
        self.show = show
        self.on_report = on_report
        self.on_admit = on_admit
        self.reports: list[Report | None] = [None] * len(entries)
        self.started: list[float | None] = [None] * len(entries)  # time.monotonic() at its admission
        self.failures: list[BaseException | None] = [None] * len(entries)
        self.logs: dict[int, EventLog] = {}
        self._cond = threading.Condition()
        self._running: set[int] = set()  # admitted: measuring
        self._prepared: list[int] = []  # started, waiting for admission, in order
        self._exclusive_running = False
        # Timing-sensitive scenarios do not prepare (so cannot start) while other work
        # shares the machine (tests beside the suite: chaos.pytest_plugin) until release_exclusive().
        self._exclusive_held = hold_exclusive
        self._cancelled = False
        self._threads: list[threading.Thread] = []
        self._scheduler: threading.Thread | None = None

    # --- scheduling --------------------------------------------------------

    def start(self) -> Suite:
        order = [i for i, e in enumerate(self.entries) if not e.exclusive]
        order += [i for i, e in enumerate(self.entries) if e.exclusive]
        self._scheduler = threading.Thread(target=self._schedule, args=(order,), name="suite", daemon=True)
        self._scheduler.start()
        return self

    def release_exclusive(self) -> None:
        """Let the timing-sensitive scenarios go: the machine is the suite's alone now."""
        with self._cond:
            self._exclusive_held = False
            self._cond.notify_all()

    def _may_start(self, exclusive: bool) -> bool:
        """Whether a scenario may be admitted now (start measuring)."""
        if self._exclusive_running:
            return False
        return not self._running if exclusive else len(self._running) < self.jobs

    def _may_prepare(self, exclusive: bool) -> bool:
        """Whether one more scenario may start preparing: within ``jobs + ahead``, and
        never beside a timing-sensitive one, running or next in line (standbys would
        take CPU it measures); a timing-sensitive one prepares on an empty machine."""
        if self._exclusive_running or any(self.entries[i].exclusive for i in self._prepared):
            return False
        if exclusive:
            return not self._exclusive_held and not self._running and not self._prepared
        return len(self._running) + len(self._prepared) < self.jobs + self.ahead

    def _schedule(self, order: list[int]) -> None:
        for index in order:
            with self._cond:
                while not self._cancelled and not self._may_prepare(self.entries[index].exclusive):
                    self._cond.wait()
                if self._cancelled:
                    return
                self._prepared.append(index)
                self.logs[index] = EventLog()
            thread = threading.Thread(target=self._run_one, args=(index,), name=f"scenario-{index}", daemon=True)
            self._threads.append(thread)
            thread.start()

    def _admit(self, index: int) -> None:
        """Block until scenario ``index`` may start measuring: its turn (the
        prepared ones go in order) and a free slot."""
        exclusive = self.entries[index].exclusive
        with self._cond:
            while not self._cancelled and not (self._prepared[0] == index and self._may_start(exclusive)):
                self._cond.wait()
            if self._cancelled:
                raise interrupts.Cancelled
            self._prepared.remove(index)
            self._running.add(index)
            self._exclusive_running = exclusive
            self.started[index] = time.monotonic()
            self._cond.notify_all()
        if self.on_admit:
            self.on_admit(index)

    def _run_one(self, index: int) -> None:
        entry = self.entries[index]
        events = self.logs[index]
        side_by_side = self.jobs > 1 and len(self.entries) > 1
        show = self.show.for_run(entry.scenario.name) if self.show and side_by_side else self.show
        try:
            if show is not None:
                show.phase(f"scenario {index + 1}/{len(self.entries)}: {entry.scenario.name}")
                show.expect(entry.scenario.name, entry.scenario.run_info().final_step)
                events.subscribe(show.event)
            with interrupts.stop_token(lambda: events.stopped):  # lock waits end on cancel
                report = run(
                    entry.scenario,
                    entry.file,
                    self.options,
                    events=events,
                    progress=show.line if show else None,
                    admit=lambda: self._admit(index),
                )
            report = with_diagnosis(report, self.options.report_dir)
            self.reports[index] = report
            if show is not None:
                show.line(f"{entry.scenario.name}: {report.status.value.upper()}")
                show.finish(report.status.value)
            if self.on_report:
                self.on_report(index, report)
        except BaseException as exc:  # Cancelled; or a bug, kept for result() to raise
            self.failures[index] = exc
        finally:
            with self._cond:
                if index in self._prepared:  # it ended before its turn (a broken run)
                    self._prepared.remove(index)
                elif self.entries[index].exclusive:
                    self._exclusive_running = False
                self._running.discard(index)
                self._cond.notify_all()

    # --- results -----------------------------------------------------------

    def done(self, index: int) -> bool:
        return self.reports[index] is not None or self.failures[index] is not None

    def result(self, index: int, limit_s: float | None = None) -> Report:
        """Wait for the i-th report (the main thread stays responsive to Ctrl-C).

        ``limit_s`` bounds the scenario's own run, counted from its start: the
        time it waited for its turn behind the others is not its own.
        """
        with self._cond:
            while not self.done(index):
                if self._cancelled:
                    raise interrupts.Cancelled
                started = self.started[index]
                if limit_s is not None and started is not None and time.monotonic() - started > limit_s:
                    raise ScenarioOverran(self.entries[index].scenario.name, limit_s)
                self._cond.wait(WAIT_S)
        if self.failures[index] is not None:
            raise self.failures[index]
        return self.reports[index]

    def wait_done(self, indices: set[int]) -> list[int]:
        """Wait until one of ``indices`` has its report (or broke); return those that
        have, in order. Wakes every WAIT_S so the main thread takes a Ctrl-C."""
        with self._cond:
            while True:
                done = sorted(i for i in indices if self.done(i))
                if done:
                    return done
                if self._cancelled:
                    raise interrupts.Cancelled
                self._cond.wait(WAIT_S)

    def results(self) -> list[Report]:
        return [self.result(i) for i in range(len(self.entries))]

    def cancel(self) -> None:
        """Stop every live run and wait until each has torn down."""
        with interrupts.deferred():
            with self._cond:
                self._cancelled = True
                for events in self.logs.values():
                    events.stop()
                self._cond.notify_all()
            for thread in list(self._threads):
                thread.join()


def run_suite(
    entries: list[SuiteEntry],
    options: RunOptions,
    *,
    jobs: int = 1,
    show: ProgressPrinter | None = None,
    on_report: Callable[[int, Report], None] | None = None,
) -> list[Report]:
    suite = Suite(entries, options, jobs=jobs, show=show, on_report=on_report).start()
    try:
        return suite.results()
    except KeyboardInterrupt:
        suite.cancel()
        raise
