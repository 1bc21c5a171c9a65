"""A thread-safe, append-only event log: log followers and the runner write,
the runner waits on it and the live display subscribes to it."""

from __future__ import annotations

import threading
import time
from typing import Callable

from chaos.events import Event

Predicate = Callable[[list[Event]], bool]


class EventLog:
    def __init__(self) -> None:
        self._events: list[Event] = []
        self._cond = threading.Condition()
        self._subscribers: list[Callable[[Event], None]] = []

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
        """Block until ``predicate(events)`` holds; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate(self._events):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(min(remaining, 0.5))
            return True
