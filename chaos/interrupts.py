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
import os
import signal
import threading

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
