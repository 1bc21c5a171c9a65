"""Print events as JSON lines on stdout, one per line, flushed at once.

Flushed so the runner sees each event when it happens, even if the process is
killed a moment later.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, TextIO

from chaos.events import Event

WORKER_INDEX_ENV = "CHAOS_WORKER_INDEX"


def worker_source() -> str:
    return f"worker-{os.environ.get(WORKER_INDEX_ENV, '0')}"


class Emitter:
    def __init__(self, source: str | None = None, stream: TextIO | None = None) -> None:
        self.source = source or worker_source()
        self.stream = stream or sys.stdout

    def event(self, cls: type[Event], **fields: Any) -> Event:
        return cls(t=time.time(), source=self.source, **fields)

    def emit(self, cls: type[Event], **fields: Any) -> None:
        self.stream.write(self.event(cls, **fields).to_json() + "\n")
        self.stream.flush()
