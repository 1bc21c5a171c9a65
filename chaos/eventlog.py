"""A thread-safe, append-only event log: log followers and the runner write,
the runner waits on it and the live display subscribes to it.

It is also the run's stop channel: ``stop()`` makes every wait on it (and the
supervisor's loop, which checks ``raise_if_stopped``) raise ``Cancelled``, so
a run in a worker thread tears down when the suite is interrupted.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from chaos.events import Event
from chaos.interrupts import Cancelled

Predicate = Callable[[list[Event]], bool]


class EventLog:
    def __init__(self, stopped_with: EventLog | None = None) -> None:
        """``stopped_with``: another run's log whose stop() stops this one too
        (a reference run computed for that run)."""
        self._stopped_with = stopped_with
        self._events: list[Event] = []
        self._cond = threading.Condition()
        self._subscribers: list[Callable[[Event], None]] = []
        self._stopped = False

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    @property
    def stopped(self) -> bool:
        return self._stopped or (self._stopped_with is not None and self._stopped_with.stopped)

    def raise_if_stopped(self) -> None:
        if self.stopped:
            raise Cancelled

    def append(self, event: Event) -> None:
        with self._cond:
            self._events.append(event)
            subscribers = list(self._subscribers)
            self._cond.notify_all()
        for notify in subscribers:
            try:
                notify(event)
            except Exception:  # a broken display must not stop the run
                pass

    def subscribe(self, notify: Callable[[Event], None]) -> None:
        with self._cond:
            self._subscribers.append(notify)

    def snapshot(self) -> list[Event]:
        with self._cond:
            return sorted(self._events, key=lambda e: e.t)

    def wait_for(self, predicate: Predicate, timeout: float) -> bool:
        """Block until ``predicate(events)`` holds; False on timeout; Cancelled on stop()."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate(self._events):
                self.raise_if_stopped()
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(min(remaining, 0.5))
            return True
