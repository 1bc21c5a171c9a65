"""What every part of the agent shares: whether it is on and where its events
go (the guard is chaos.agent.guard, re-exported here)."""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time
from typing import Any

from chaos.agent.batching import StepBatching
from chaos.agent.guard import guarded, swallow  # noqa: F401 - re-exported
from chaos.events import Event, LineTemplate, StepEvent
from chaos.worker.emit import Emitter

ENABLE_ENV = "CHAOS_AGENT"  # "1": hooks on; anything else: the agent does nothing
CHECKPOINT_DIR_ENV = "CHAOS_CHECKPOINT_DIR"


def enabled(environ: dict[str, str] | None = None) -> bool:
    return (os.environ if environ is None else environ).get(ENABLE_ENV) == "1"


# Who reports the job's training: Keras fit's reporter while a fit runs, the job's
# own report calls once it made one; else the custom-loop observer (chaos.agent.loop).
_fit_depth = [0]
_job_reports = [False]


def quiet() -> bool:
    """Whether the custom-loop observer must stay quiet: inside fit, or the job reports itself."""
    return _fit_depth[0] > 0 or _job_reports[0]


def fit_began() -> None:
    _fit_depth[0] += 1


def fit_ended() -> None:
    _fit_depth[0] -= 1


def job_reported() -> None:
    _job_reports[0] = True


class LineStart:
    """Writes each event as a line of its own straight to file descriptor 1.

    A newline goes first: Keras's progress bar (fit's default verbose=1) and
    tqdm leave a line open between updates, and an event appended to it would
    be a log line to the runner (measured: docs/event-contract.md). The job's
    own buffered output is flushed first, so the order on stdout is kept; the
    descriptor, not ``sys.stdout``, so a job that redirects ``sys.stdout``
    (``contextlib.redirect_stdout``) does not swallow the events.
    """

    def __init__(self, fd: int = 1) -> None:
        self.fd = fd
        self._pending: list[str] = []

    def write(self, text: str) -> None:
        self._pending.append(text)

    def flush(self) -> None:
        if not self._pending:  # a close with nothing held
            return
        data = ("\n" + "".join(self._pending)).encode("utf-8", "replace")
        self._pending.clear()
        try:
            sys.stdout.flush()
        except Exception:  # noqa: BLE001 - a closed or odd stdout is the job's business
            pass
        while data:
            data = data[os.write(self.fd, data) :]


# What a custom loop's step event says (chaos.agent.loop); its other fields are the defaults.
STEP_FIELDS = ("t", "epoch", "step", "loss", "local_loss", "loss_reported")


class AgentEmitter(Emitter):
    """chaos.worker.emit.Emitter, one event at a time across threads, step events
    several to one write (chaos.agent.batching), and a custom loop's step events
    printed from a template (``LineTemplate``: no event built).

    Two locks: ``_lock`` over what is held and the batching's state, ``_out`` over the
    stream. A write takes what is held and ``_out`` under ``_lock``, then lets ``_lock``
    go while it writes: a write to a container's stdout takes about 130 us, and the
    agent's thread writing held steps must not make the train step's next event wait
    for it (measured: 25 us a step of the chief's 2-worker step). Writes keep their
    order: each takes ``_out`` before it lets ``_lock`` go."""

    def __init__(self, source: str | None = None, stream=None, batching=StepBatching) -> None:
        super().__init__(source, stream or LineStart())
        self._lock = threading.Lock()
        self._out = threading.Lock()
        self._held: list[str] = []
        self._batching = batching(self._write, self._lock)
        self._step_line = LineTemplate(StepEvent, STEP_FIELDS, source=self.source)
        self._step_keys = set(STEP_FIELDS) - {"t"}

    def emit(self, cls: type[Event], **fields: Any) -> None:
        with self._lock:
            if cls is StepEvent and fields.keys() == self._step_keys:
                fields["t"] = time.time()
                line = self._step_line.line(fields)
            else:
                line = self.event(cls, **fields).to_json()  # here, not when written: a bad field fails its own emit
            self._held.append(line + "\n")
            if cls is not StepEvent or self._batching.now(fields.get("step", 0), fields.get("epoch", 0)):
                self._write()

    def _write(self) -> None:
        """Write what is held, in one write (called with ``_lock`` held; it is let go while writing)."""
        self._batching.wrote()
        if not self._held:
            return
        text, self._held = "".join(self._held), []
        self._out.acquire()
        self._lock.release()
        try:
            self.stream.write(text)
            self.stream.flush()
        finally:
            self._out.release()
            self._lock.acquire()

    def close(self) -> None:
        """Write what is held: at the interpreter's exit."""
        with self._lock:
            self._write()


_emitter: Emitter | None = None


def emitter() -> Emitter:
    """The process's emitter (its source, worker-N, read from the environment once); what it
    holds is written at the interpreter's exit."""
    global _emitter
    if _emitter is None:
        _emitter = AgentEmitter()
        atexit.register(_emitter.close)
    return _emitter


def _forget_emitter() -> None:
    """In a forked child: a fresh emitter, so the parent's held events are not written twice
    and its lock, perhaps held by a thread the child does not have, is not waited on."""
    global _emitter
    _emitter = None


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_forget_emitter)


def set_emitter(value: Emitter | None) -> None:
    """For tests: send events elsewhere (None: back to the default on next use)."""
    global _emitter
    _emitter = value
