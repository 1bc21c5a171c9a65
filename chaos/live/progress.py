"""Live progress on the terminal: phases, training progress, faults, symptoms."""

from __future__ import annotations

import sys
import threading
import time

from chaos.events import Event, LogLine
from chaos.events_text import live_line
from chaos.stragglers import StragglerWatch, why_missing_with_link

_PRINT = threading.Lock()  # scenarios running side by side print whole lines


class ProgressPrinter:
    def __init__(self, stream=None, *, prefix: str = "", t0: float | None = None) -> None:
        self.stream = stream or sys.stdout
        self.t0 = time.monotonic() if t0 is None else t0
        self.prefix = prefix
        self._stragglers = StragglerWatch()
        self._seen: list[Event] = []  # this run's events so far: what a missing peer's "why" is read from

    def for_run(self, prefix: str) -> ProgressPrinter:
        """A printer for one of several runs side by side: same clock, lines tagged."""
        return ProgressPrinter(self.stream, prefix=prefix, t0=self.t0)

    def line(self, text: str) -> None:
        tag = f"[{self.prefix}] " if self.prefix else ""
        with _PRINT:
            print(f"[{time.monotonic() - self.t0:6.1f}s] {tag}{text}", file=self.stream, flush=True)

    def phase(self, name: str) -> None:
        self.line(f"== {name}")

    # The live view (chaos.live.view) draws with these; plain lines need none of them.
    def expect(self, name: str, final_step: int) -> None:
        """A run of scenario ``name`` begins; its workers train to ``final_step`` (0: unknown)."""
        # A printer shared by runs one after another must not read one run's peers in the next.
        self._stragglers = StragglerWatch()
        self._seen = []

    def finish(self, status: str) -> None:
        """The current run ended with this status."""

    def close(self) -> None:
        """Nothing more to show."""

    def event(self, e: Event) -> None:
        self._seen.append(e)
        if isinstance(e, LogLine):
            # Who a hang waits for and why, the moment TF says it (issue: "tell me
            # which peer is missing, and why").
            missing = self._stragglers.feed(e)
            if missing:
                why, _ = why_missing_with_link(missing, self._seen, self._seen, e.t, live=True)
                self.line(f"{e.source}: coordination service waiting for {missing} (not connected yet: {why})")
            return
        text = live_line(e)
        if text:
            self.line(text)
