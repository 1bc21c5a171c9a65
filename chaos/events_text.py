"""Every way an event becomes text, in one place: one phrasing per reader, kept
apart on purpose (a live line is short and shown only for some kinds; a report's
evidence line carries every field that matters; a diagnosis quotes what a log
said), sharing how an error is named and shortened.

- ``live_line``: for a person watching a run (chaos run, chaos compose).
- ``event_line`` / ``report_text``: a report's evidence (terminal summary, JUnit, HTML page).
- ``evidence_text`` / ``error_text``: what ``chaos diagnose`` and ``chaos compose --watch`` quote.
- ``log_lines``: each source's log as a run's report writes it (and ``chaos diagnose`` rebuilds it).
"""

from __future__ import annotations

from chaos.events import (
    RUNNER,
    AddressEvent,
    DoneEvent,
    EpochEndEvent,
    ErrorEvent,
    Event,
    ExitEvent,
    HealEvent,
    InjectEvent,
    LogLine,
    NoticeEvent,
    PhaseEvent,
    RestartEvent,
    RestoredEvent,
    StartEvent,
    StepEvent,
)

# Lines of a TF error that are its Python stack, not its cause.
_STACK = ("File ", "Detected at node", "Graph execution error")


def short_class(error_class: str) -> str:
    """``tensorflow.python.framework.errors_impl.UnavailableError`` -> ``UnavailableError``."""
    return error_class.rsplit(".", 1)[-1]


def headline(message: str) -> str:
    """The informative line of a TF error (its first line is often just
    "Graph execution error:" followed by a Python stack)."""
    lines = [l.strip() for l in message.splitlines() if l.strip()]
    for line in lines:
        if "aborted by" in line or "timed out" in line or "OOM" in line:
            return line
    useful = [l for l in lines if not l.startswith((*_STACK, "[["))]
    return (useful or lines or [""])[0]


def cause(message: str) -> str:
    """A TF error's message without its Python stack, on one line ("Graph
    execution error:" lists the frames first; the cause comes after them)."""
    kept = [line.strip() for line in message.splitlines() if line.strip() and not line.strip().startswith(_STACK)]
    return " ".join(kept) or " ".join(message.split())


def error_text(e: ErrorEvent) -> str:
    return f"{short_class(e.error_class)}: {cause(e.message)}"


def evidence_text(event: Event) -> str:
    """An event as ``chaos diagnose`` quotes it among log lines."""
    if isinstance(event, ErrorEvent):
        return f"[event] {error_text(event)}"
    if isinstance(event, ExitEvent):
        return f"[event] exited {event.exit_code}" + (" (OOM-killed)" if event.oom_killed else "")
    if isinstance(event, StepEvent):
        return f"[event] step {event.step} (epoch {event.epoch}, loss {event.loss:.4g}, batch {event.batch_digest[:12] or '-'})"
    if isinstance(event, StartEvent):
        return f"[event] start: TF {event.tf_version}, Python {event.python_version}"
    return f"[event] {event.kind}"


def live_line(e: Event) -> str | None:
    """For a person watching a run (chaos run, chaos compose --inject): one line
    for the events worth showing live; None for the rest."""
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
        return f"{e.source}: ERROR {short_class(e.error_class)}: {headline(e.message)[:200]}"
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


WIDTH = 140


def report_text(e: Event) -> str:
    """For a report's evidence (terminal summary, JUnit, HTML): what the event says, every field that matters."""
    if isinstance(e, StepEvent):
        return f"step {e.step} (epoch {e.epoch}) loss {e.loss:.6g}"
    if isinstance(e, EpochEndEvent):
        return f"epoch_end {e.epoch} at step {e.step} loss {e.loss:.6g}"
    if isinstance(e, ErrorEvent):
        # The cause, not the stack: a line cut at WIDTH must still say why (Socket closed, heartbeats).
        return f"error {error_text(e)}"
    if isinstance(e, ExitEvent):
        return f"exit {e.exit_code}" + (" (OOM-killed)" if e.oom_killed else "")
    if isinstance(e, InjectEvent):
        params = ", ".join(f"{k}={v}" for k, v in e.params.items())
        return f"inject {e.fault} on {e.target} ({params})"
    if isinstance(e, HealEvent):
        return f"heal {e.fault} on {e.target}"
    if isinstance(e, RestartEvent):
        what = "restart by the orchestrator" if e.by == "orchestrator" else "restart"
        return f"{what} ({e.reason})" if e.reason else what
    if isinstance(e, RestoredEvent):
        return f"restored epoch {e.epoch} step {e.step} from {e.checkpoint or '?'} weights {e.weights_digest[:12] or 'not reported'}"
    if isinstance(e, DoneEvent):
        return f"done at step {e.step} weights {e.weights_digest[:12] or 'not reported'}"
    if isinstance(e, StartEvent):
        return f"start tf {e.tf_version or '?'} python {e.python_version or '?'}"
    if isinstance(e, PhaseEvent):
        return f"phase {e.phase}"
    if isinstance(e, NoticeEvent):
        return f"{e.topic}: {e.text}"
    if isinstance(e, AddressEvent):
        return f"{e.task} at {e.address or '?'}" + (f" on {e.node}" if e.node else "")
    if isinstance(e, LogLine):
        return f"log: {e.text}"
    return e.kind


def event_line(event: Event, t0: float | None = None) -> str:
    """A report's evidence line: the time (from ``t0``), the source, what it says; cut at WIDTH."""
    at = f"+{event.t - t0:7.2f}s" if t0 is not None else f"{event.t:.2f}"
    text = f"{at} {event.source:9} {report_text(event)}"
    return text if len(text) <= WIDTH else text[: WIDTH - 3] + "..."


def log_lines(events) -> dict[str, list[str]]:
    """Each source's lines and events as they came, by source; the runner's teardown line goes
    into every log begun before it, so a reader of the logs alone (chaos diagnose) knows the
    exits after it are the runner's kill, not the failure's."""
    lines: dict[str, list[str]] = {}
    for e in events:
        if e.source == RUNNER:
            if isinstance(e, PhaseEvent) and e.phase == "teardown":
                for text in lines.values():
                    text.append(e.to_json())
            continue
        lines.setdefault(e.source, []).append(e.text if isinstance(e, LogLine) else e.to_json())
    return lines
