"""Live progress on the terminal: phases, training progress, faults, symptoms."""

from __future__ import annotations

import sys
import threading
import time

from chaos.events import Event, LogLine
from chaos.stragglers import StragglerWatch, why_missing_with_link

_PRINT = threading.Lock()  # scenarios running side by side print whole lines


class ProgressPrinter:
    def __init__(self, stream=None, *, prefix: str = "", t0: float | None = None) -> None:
        self.stream = stream or sys.stdout
        self.t0 = time.monotonic() if t0 is None else t0
        self.prefix = prefix
        self._stragglers = StragglerWatch()
        self._seen: list[Event] = []  # this run's events so far: what a missing peer's "why" is read from

    def for_run(self, prefix: str) -> "ProgressPrinter":
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
        text = describe(e)
        if text:
            self.line(text)


def headline(message: str) -> str:
    """The informative line of a TF error (its first line is often just
    "Graph execution error:" followed by a Python stack)."""
    lines = [l.strip() for l in message.splitlines() if l.strip()]
    for line in lines:
        if "aborted by" in line or "timed out" in line or "OOM" in line:
            return line
    useful = [l for l in lines if not l.startswith(("File ", "Detected at node", "[[", "Graph execution error"))]
    return (useful or lines or [""])[0]


def describe(e: Event) -> str | None:
    """One line for the events worth showing live; None for the rest."""
    kind = e.kind
    if kind == "start":
        return f"{e.source}: started (TF {e.tf_version})"
    if kind == "epoch_end":
        return f"{e.source}: epoch {e.epoch} done, step {e.step}, loss {e.loss:.4f}"
    if kind == "checkpoint":
        return f"{e.source}: checkpoint {e.path} (step {e.step})"
    if kind == "restored":
        return f"{e.source}: restored {e.checkpoint}, resuming at epoch {e.epoch} step {e.step}"
    if kind == "done":
        return f"{e.source}: done at step {e.step}, weights {e.weights_digest or 'not reported'}"
    if kind == "error":
        return f"{e.source}: ERROR {e.error_class.rsplit('.', 1)[-1]}: {headline(e.message)[:200]}"
    if kind == "exit":
        return f"{e.source}: exited {e.exit_code}" + (" (OOMKilled)" if e.oom_killed else "")
    if kind == "restart":
        return f"{e.source}: restarted ({e.reason})"
    if kind == "inject":
        return f"FAULT {e.fault} on {e.target} injected"
    if kind == "heal":
        return f"FAULT {e.fault} on {e.target} healed"
    if kind == "notice":
        return f"WARNING {e.topic}: {e.text}"
    if kind == "phase":
        return f"== {e.phase}"
    return None
