"""Follow a container's output and turn each line into events."""

from __future__ import annotations

import threading
import time

from chaos.eventlog import EventLog
from chaos.workload.logparse import LineParser


class LogFollower(threading.Thread):
    """Streams one container's stdout+stderr until it exits (or is removed)."""

    def __init__(self, container, source: str, sink: EventLog, parser: LineParser | None = None) -> None:
        super().__init__(name=f"logs-{source}", daemon=True)
        self.container = container
        self.source = source
        self.sink = sink
        # JSON event lines pass through; plain lines become log events (and,
        # for a job without the agent, steps and errors read from them).
        self.parser = parser or LineParser(source, parse_errors=False)
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
        for event in self.parser.close():
            self.sink.append(event)

    def _line(self, text: str) -> None:
        self.tail = (self.tail + [text])[-40:]
        for event in self.parser.feed(text, time.time()):
            self.sink.append(event)
