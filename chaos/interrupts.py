"""Ctrl-C and SIGTERM: both mean "stop and tear down", and teardown itself
is not interrupted.

``chaos`` turns SIGTERM (CI cancelling a job) into KeyboardInterrupt, so one
``finally`` tears down for both. While teardown runs, a further Ctrl-C or
SIGTERM is held back and raised once teardown is done: a user pressing Ctrl-C
twice must not leave half a cluster behind.

Before a command has done anything (its first seconds import every
subcommand's module), a signal ends the process at once with one line
(``exiting``): a KeyboardInterrupt raised there would be a traceback, and one
raised inside a C extension's initialisation even turns into ``ImportError:
initialization failed``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import threading
import time
from collections.abc import Callable

HANDLED = (signal.SIGINT, signal.SIGTERM)


class Cancelled(KeyboardInterrupt):
    """A run was told to stop (Ctrl-C reached the suite's main thread while
    this run worked in another): like Ctrl-C, it tears down on its way out."""


def raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def install() -> None:
    """SIGTERM tears down like Ctrl-C (main thread only)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, raise_interrupt)


@contextlib.contextmanager
def exiting(message: str, code: int = 130):
    """For work that leaves nothing to tear down: SIGINT/SIGTERM during the
    block print ``message`` and end the process with ``code`` (main thread
    only; elsewhere the block runs as it is)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def leave(signum, frame):
        os.write(2, (message + "\n").encode())  # not sys.stderr: it may be mid-write
        os._exit(code)

    previous = {s: signal.getsignal(s) for s in HANDLED}
    for s in HANDLED:
        signal.signal(s, leave)
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def deferred():
    """Hold SIGINT/SIGTERM back for the duration of the block (main thread
    only; elsewhere signals never arrive anyway), then raise KeyboardInterrupt
    if one came."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = {s: signal.getsignal(s) for s in HANDLED}
    for s in HANDLED:
        signal.signal(s, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if received:
        raise KeyboardInterrupt


# --- waits a stopped run gives up -----------------------------------------------------

_local = threading.local()
LOCK_POLL_S = 0.1


@contextlib.contextmanager
def stop_token(stopped: Callable[[], bool]):
    """While the block runs in this thread, ``file_lock`` waits give up (Cancelled)
    once ``stopped()`` says so: a run of the suite waits in its own thread, where
    no signal arrives, and Ctrl-C must not wait for another process's image build."""
    previous = getattr(_local, "stopped", None)
    _local.stopped = stopped
    try:
        yield
    finally:
        _local.stopped = previous


@contextlib.contextmanager
def file_lock(path: str):
    """An exclusive ``flock`` on ``path`` between processes (and threads), whose
    wait ends with Cancelled when this thread's run was stopped (``stop_token``)."""
    with open(path, "w") as fh:
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                stopped = getattr(_local, "stopped", None)
                if stopped is not None and stopped():
                    raise Cancelled from None
                time.sleep(LOCK_POLL_S)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
