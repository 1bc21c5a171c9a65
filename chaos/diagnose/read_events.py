"""The runner's own events (``chaos.events``) as ``chaos diagnose`` reads them from a user's
log: each carries the line it came from (``Event.evidence``), and its ``source`` is the log's
name. A log line may give no time (none of the lines before it was stamped either), and
``Event.t`` is a float: such an event holds ``NO_TIME``, and diagnose asks every event's time
through ``when``, which says None for it, so each comparison keeps its "no time" branch."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from chaos.diagnose.observations import Evidence
from chaos.events import ErrorEvent, Event, ExitEvent
from chaos.events_text import short_class

E = TypeVar("E", bound=Event)

NO_TIME = float("nan")  # never compared as a number: ``when`` turns it into None


def when(event: Event) -> float | None:
    """The event's time; None when its log line gave none."""
    t = event.t
    return None if t != t else t  # only NaN differs from itself


def _stamp(t: float | None) -> float:
    return NO_TIME if t is None else t


def error_cls(error: ErrorEvent) -> str:
    """The error's class as the signatures name it, without its module (``UnavailableError``);
    "" for an error line that names none."""
    return short_class(error.error_class)


def error_read(error_class: str, message: str, t: float | None, evidence: Evidence) -> ErrorEvent:
    """An error a log line states (``error_class`` as qualified as the line gives it)."""
    return ErrorEvent(t=_stamp(t), source=evidence.log, error_class=error_class, message=message, evidence=evidence)


def exit_read(code: int | None, oom_killed: bool, reason: str, t: float | None, evidence: Evidence) -> ExitEvent:
    """An exit a log line states; ``code`` None: it said the worker went away, with no code."""
    return ExitEvent(
        t=_stamp(t), source=evidence.log, exit_code=code, oom_killed=oom_killed, reason=reason, evidence=evidence
    )


def timed(events: Iterable[E]) -> list[tuple[float, E]]:
    """The events that have a time, each with it, in their order."""
    return [(t, e) for e in events if (t := when(e)) is not None]
