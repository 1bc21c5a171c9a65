"""Live progress on the terminal: phases, training progress, faults, symptoms."""

from __future__ import annotations

import sys
import time

from chaos.events import Event


class ProgressPrinter:
    def __init__(self, stream=None) -> None:
        self.stream = stream or sys.stdout
        self.t0 = time.monotonic()

    def line(self, text: str) -> None:
        print(f"[{time.monotonic() - self.t0:6.1f}s] {text}", file=self.stream, flush=True)

    def phase(self, name: str) -> None:
        self.line(f"== {name}")

    def event(self, e: Event) -> None:
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
        return f"{e.source}: done at step {e.step}, weights {e.weights_digest}"
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
    if kind == "phase":
        return f"== {e.phase}"
    return None
