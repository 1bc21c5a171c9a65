"""Events from a worker's plain log lines, for a job that prints no JSON events.

Two things are read from outside the job's code:

* progress: a line matching the scenario's ``progress.step`` pattern is a
  step event (named groups ``step``, optionally ``loss`` and ``epoch``); a
  line matching ``progress.done`` is a done event (no weights digest);
* TF errors: the last line of a Python traceback names the exception,
  ``tensorflow.python.framework.errors_impl.UnavailableError: <message>``; the
  lines after it (TF's messages run over several lines) belong to the message
  until the next record starts or the stream ends. What a line says (an
  exception, the end of its message) is read by the grammar ``chaos diagnose``
  reads a user's logs with (``chaos.workload.grammar``); only the place is this
  parser's own: right after a traceback.

JSON event lines (from the agent or the harness) pass through unchanged.
"""

from __future__ import annotations

import re
import time

from chaos.events import DoneEvent, ErrorEvent, Event, LogLine, StepEvent, parse_line
from chaos.workload.grammar import MAX_MESSAGE_LINES, TRACEBACK, ends_message, exception_line, unwrap
from chaos.workload.spec import ProgressPattern


def _number(text: str | None, kind=float, default=None):
    try:
        return kind(text) if text is not None else default
    except ValueError:
        return default


class LineParser:
    """Stateful: feed each line of one worker's output in order, then close()."""

    def __init__(self, source: str, progress: ProgressPattern | None = None, parse_errors: bool = True) -> None:
        self.source = source
        self.step = re.compile(progress.step) if progress else None
        self.done = re.compile(progress.done) if progress and progress.done else None
        self.parse_errors = parse_errors
        self._in_traceback = False
        self._error: dict | None = None  # an error whose message may go on

    def feed(self, line: str, t: float | None = None) -> list[Event]:
        t = time.time() if t is None else t
        text = line.rstrip("\n")
        if not text.strip() and self._error is None:
            # Blank lines carry nothing (the agent starts each event on a fresh
            # line); inside an error message they are kept, TF's messages hold them.
            return []
        event = parse_line(line, self.source, t)
        out: list[Event] = []
        inner = unwrap(text)  # without what a launcher put before the job's own line (mpirun's "[1,0]<stderr>:")
        if self._error is not None:
            if isinstance(event, LogLine) and not ends_message(inner) and self._error["lines"] < MAX_MESSAGE_LINES:
                self._error["message"] += "\n" + inner
                self._error["lines"] += 1
                return [event]
            out.append(self._flush())
        out.append(event)
        if not isinstance(event, LogLine):
            return out
        if self.parse_errors:
            if inner.startswith(TRACEBACK):
                self._in_traceback = True
            elif self._in_traceback and not inner.startswith((" ", "\t")):
                found = exception_line(inner)
                self._in_traceback = False
                if found:
                    self._error = {"t": t, "cls": found.qualified, "message": found.message, "lines": 0}
        if self.step is not None:
            match = self.step.search(text)
            if match:
                groups = match.groupdict()
                out.append(
                    StepEvent(
                        t=t,
                        source=self.source,
                        step=_number(groups.get("step"), int, 0),
                        epoch=_number(groups.get("epoch"), int, 0),
                        loss=_number(groups.get("loss"), float, float("nan")),
                        local_loss=_number(groups.get("loss"), float, float("nan")),
                    )
                )
        if self.done is not None and self.done.search(text):
            out.append(DoneEvent(t=t, source=self.source))
        return out

    def _flush(self) -> ErrorEvent:
        error, self._error = self._error, None
        return ErrorEvent(t=error["t"], source=self.source, error_class=error["cls"], message=error["message"][:4000])

    def close(self) -> list[Event]:
        """The stream ended: an error still collecting its message is complete."""
        return [self._flush()] if self._error is not None else []
