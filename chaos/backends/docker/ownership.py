"""Who owns a run: the process that created it, so cleanup can tell a live
run of another terminal or CI job from one whose process is gone.

Every object a run creates carries ``io.tfchaos.owner = HOST:PID:START`` (the
process's start time from ``/proc``, so a recycled pid is not mistaken for the
owner) and ``io.tfchaos.session`` (inherited through the environment, so a
test session can find the runs its subprocesses started). ``chaos clean``
removes only runs whose owner is gone, as testcontainers' reaper does.
"""

from __future__ import annotations

import enum
import os
import socket
import uuid
from dataclasses import dataclass

from chaos import SESSION_ENV

LABEL_OWNER = "io.tfchaos.owner"
LABEL_SESSION = "io.tfchaos.session"


class Liveness(str, enum.Enum):
    ALIVE = "alive"
    GONE = "gone"
    UNKNOWN = "unknown"  # another host's process, or a label we cannot read


@dataclass(frozen=True)
class Owner:
    host: str
    pid: int
    start: str  # the process start time in clock ticks since boot (field 22 of /proc/PID/stat)

    def label(self) -> str:
        return f"{self.host}:{self.pid}:{self.start}"

    @classmethod
    def parse(cls, text: str | None) -> Owner | None:
        if not text:
            return None
        host, _, rest = text.rpartition(":")
        host, _, pid = host.rpartition(":")
        if not host or not pid.isdigit():
            return None
        return cls(host, int(pid), rest)

    @classmethod
    def current(cls) -> Owner:
        pid = os.getpid()
        return cls(socket.gethostname(), pid, process_start(pid) or "")

    def liveness(self) -> Liveness:
        """Whether the owning process still runs (only knowable on this host)."""
        if self.host != socket.gethostname():
            return Liveness.UNKNOWN
        start = process_start(self.pid)
        if start is None:
            return Liveness.GONE
        return Liveness.ALIVE if start == self.start else Liveness.GONE


def process_start(pid: int) -> str | None:
    """The start time of process ``pid`` (clock ticks since boot), None if it does not exist."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            stat = fh.read()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces.
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def session_id() -> str:
    """This process's session: inherited from the environment, else made once."""
    value = os.environ.get(SESSION_ENV)
    if not value:
        value = uuid.uuid4().hex[:12]
        os.environ[SESSION_ENV] = value  # subprocesses (and later runs here) inherit it
    return value


def owner_labels() -> dict[str, str]:
    return {LABEL_OWNER: Owner.current().label(), LABEL_SESSION: session_id()}
