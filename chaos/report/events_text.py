"""One line per event, for the terminal summary and JUnit failure bodies."""

from __future__ import annotations

from chaos.events import (
    DoneEvent,
    EpochEndEvent,
    ErrorEvent,
    Event,
    ExitEvent,
    HealEvent,
    InjectEvent,
    LogLine,
    NoticeEvent,
    AddressEvent,
    PhaseEvent,
    RestartEvent,
    RestoredEvent,
    StartEvent,
    StepEvent,
)

WIDTH = 140


def _what(e: Event) -> str:
    if isinstance(e, StepEvent):
        return f"step {e.step} (epoch {e.epoch}) loss {e.loss:.6g}"
    if isinstance(e, EpochEndEvent):
        return f"epoch_end {e.epoch} at step {e.step} loss {e.loss:.6g}"
    if isinstance(e, ErrorEvent):
        message = " ".join(e.message.split())
        return f"error {e.error_class.rsplit('.', 1)[-1]}: {message}"
    if isinstance(e, ExitEvent):
        return f"exit {e.exit_code}" + (" (OOM-killed)" if e.oom_killed else "")
    if isinstance(e, InjectEvent):
        params = ", ".join(f"{k}={v}" for k, v in e.params.items())
        return f"inject {e.fault} on {e.target} ({params})"
    if isinstance(e, HealEvent):
        return f"heal {e.fault} on {e.target}"
    if isinstance(e, RestartEvent):
        return f"restart ({e.reason})" if e.reason else "restart"
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
        return f"{e.task} at {e.address}"
    if isinstance(e, LogLine):
        return f"log: {e.text}"
    return e.kind


def event_line(event: Event, t0: float | None = None) -> str:
    at = f"+{event.t - t0:7.2f}s" if t0 is not None else f"{event.t:.2f}"
    text = f"{at} {event.source:9} {_what(event)}"
    return text if len(text) <= WIDTH else text[: WIDTH - 3] + "..."
