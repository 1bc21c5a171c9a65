"""What one text line of a log says to ``chaos diagnose`` (``read_line``): its
shapes (``chaos.diagnose.shapes``), the error, exception or exit it states
(the grammar: ``chaos.workload.grammar``), whether a worker prints it while it
waits for its peers, Keras' step time; and the gate (``notable``): whether a
line is worth reading at all."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from chaos.diagnose.shapes import _TOKEN as _WORD
from chaos.diagnose.shapes import ALWAYS_WORDS, KEY_TOKENS, error_class, shapes_in
from chaos.workload.grammar import (
    EXCEPTION_ENDINGS,
    WAITING,
    ExceptionLine,
    ExitLine,
    exception_line,
    exit_line,
    status_line,
    without_prefix,
)

_KERAS_STEP_TIME = re.compile(r"\b(?P<value>\d+(?:\.\d+)?)(?P<unit>ms|s|us)/step\b")
_STEP_SCALE = {"ms": 1.0, "s": 1000.0, "us": 0.001}


def keras_step_ms(text: str) -> float | None:
    """Keras' step time on a progress line ("12ms/step"), in milliseconds."""
    if "/step" not in text:
        return None
    match = _KERAS_STEP_TIME.search(text)
    return float(match["value"]) * _STEP_SCALE[match["unit"]] if match else None


# The gate: a line worth the reader's patterns has one of these words (its
# lower-case letter runs, ``shapes.tokens``) or substrings; most lines of a long
# log (INFO lines, progress bars) have none and cost one split. The words are the
# reader's own (exceptions, statuses, exits, waits) and every shape's keys; the
# unit tests check that every line the reader understands in the corpus's dev cases
# and the framework's own runs passes it.
READER_TOKENS = frozenset(
    "error errors exception fail failed failure fails abort aborted aborting startabort unavailable deadline exceeded "
    "exhausted internal cancelled precondition unknown invalid denied range exit exited kill killed oom oomkilled "
    "memory alloc allocate signal sigkill sigterm evicted preempted preemption backoff crashloopbackoff lame disruption "
    "disruptiontarget started waiting stragglers socket reset refused broken timed timeout heartbeat heartbeats "
    "statuscode core dumped terminated exitstatus".split()
)
GATE_TOKENS = READER_TOKENS | KEY_TOKENS
GATE_SUBSTRINGS = tuple(
    dict.fromkeys(
        ("rror", "xception", "TF_CONFIG", "DATA_LOSS", "Data loss", "NOT_FOUND", "Not found", "not found")
        + EXCEPTION_ENDINGS  # SystemExit, KeyboardInterrupt, ...Failure: the grammar's exception lines
        + ALWAYS_WORDS
    )
)


def notable(text: str, low: str | None = None) -> set[str] | None:
    """The line's words (``shapes.tokens``) if the reader looks at it beyond its
    time stamp, else None. ``low``: the line in lower case, if the caller has it."""
    words = _WORD.findall(text.lower() if low is None else low)
    if not GATE_TOKENS.isdisjoint(words):
        return set(words)
    for sub in GATE_SUBSTRINGS:
        if sub in text:
            return set(words)
    return None


@dataclass(frozen=True)
class LineReading:
    """What the reader makes of one text line (its time stamp aside)."""

    names: tuple[str, ...]  # its shapes
    hang: bool  # a line a worker prints while it waits for its peers
    error: tuple[str, str] | None  # (class, message) of the error it states without a traceback
    exception: ExceptionLine | None  # a Python exception's first line: its message may go on
    exited: ExitLine | None
    step_ms: float | None  # Keras' "Nms/step"


@functools.lru_cache(maxsize=4096)
def read_line(body: str) -> LineReading:
    """The line's reading, remembered: a long log repeats its lines with new
    time stamps only (``body`` is the line without its leading ISO stamp)."""
    names = shapes_in(body)
    status = status_line(body)
    exception = exception_line(body)
    error = None
    if status and not exception:
        error = status
    elif names and not exception:
        cls = error_class(names)  # a failure shape with no status: the CUDA driver's OOM, NCCL's WARN...
        if cls is not None:
            error = (cls, without_prefix(body))
    return LineReading(names, bool(WAITING.search(body)), error, exception, exit_line(body), keras_step_ms(body))


def flags(reading: LineReading) -> tuple[str, ...]:
    """What a line is flagged as: its shapes, else what the reader read in it."""
    if reading.names:
        return reading.names
    if reading.error or reading.exception:
        return ("error",)
    if reading.exited:
        return ("exit",)
    return ("waiting",) if reading.hang else ()
