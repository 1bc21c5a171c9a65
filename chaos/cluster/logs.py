"""Follow a container's output and turn each line into an event."""

from __future__ import annotations

import threading
import time

from chaos.cluster.eventlog import EventLog
from chaos.events import parse_line


class LogFollower(threading.Thread):
    """Streams one container's stdout+stderr until it exits (or is removed)."""

    def __init__(self, container, source: str, sink: EventLog) -> None:
        super().__init__(name=f"logs-{source}", daemon=True)
        self.container = container
        self.source = source
        self.sink = sink
        self.tail: list[str] = []  # the last lines, for error messages

    def run(self) -> None:
        buffer = b""
        try:
            for chunk in self.container.logs(stream=True, follow=True, stdout=True, stderr=True):
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for raw in lines:
                    self._line(raw.decode("utf-8", "replace"))
        except Exception:  # the container was removed under us: nothing more to read
            pass
        if buffer:
            self._line(buffer.decode("utf-8", "replace"))

    def _line(self, text: str) -> None:
        self.tail = (self.tail + [text])[-40:]
        self.sink.append(parse_line(text, self.source, time.time()))
