"""What the proxy saw of one link (the route ``worker-i`` to task i), read from
its own log lines in the run's timeline.

The proxy logs when a link starts listening, its first client after that, and
every connection it could not pass on to the link's upstream. So at any moment
the runner can tell, of a task a hang waits for, whether nobody ever tried to
reach it (no client since the link started listening: the peers were given
another address or port) or whether they tried and its upstream refused them
(no server listens there: the task is not running, or listens on another port).
The Toxiproxy HTTP API has no traffic counters; the log is what the proxy says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chaos.events import Event, LogLine

PROXY_SOURCE = "proxy"
_LISTENING = re.compile(r"proxy (\S+): listening on (\S+), upstream (\S+)")
_CLIENT = re.compile(r"proxy (\S+): first client accepted from (\S+)")
_UNREACHABLE = re.compile(r"proxy (\S+): cannot reach upstream (\S+): (.*)$")


@dataclass(frozen=True)
class LinkSeen:
    name: str
    listening: LogLine | None = None  # the last time the link started listening
    first_client: LogLine | None = None  # its first client since then
    failures: tuple[LogLine, ...] = ()  # connections not passed on since then

    def describe(self, now: float) -> tuple[str, Event | None] | None:
        """What the link shows at ``now``, as a phrase, with the line that shows
        it; None when the proxy said nothing of it (an older proxy, or no link)."""
        if self.failures:
            last = self.failures[-1]
            match = _UNREACHABLE.search(last.text)
            assert match is not None  # only matching lines are kept
            count = len(self.failures)
            # When: early refusals at bring-up are normal until the task's server is up.
            return (
                f"its proxy link {self.name} could not reach {match.group(2)} "
                f"({count} time{'s' if count != 1 else ''}, the last {max(0.0, now - last.t):.0f} s before: "
                f"{match.group(3)})",
                last,
            )
        if self.listening is None:
            return None
        if self.first_client is None:
            return (
                f"no peer has connected to its proxy link {self.name} "
                f"(listening for {max(0.0, now - self.listening.t):.0f} s)",
                self.listening,
            )
        return f"its proxy link {self.name} carries connections", self.first_client


def link_seen(name: str, events: list[Event], until: float | None = None) -> LinkSeen:
    """The state of link ``name`` from the proxy's lines up to ``until``."""
    seen = LinkSeen(name)
    for e in events:
        if not isinstance(e, LogLine) or e.source != PROXY_SOURCE or (until is not None and e.t > until):
            continue
        if (m := _LISTENING.search(e.text)) and m.group(1) == name:
            seen = LinkSeen(name, listening=e)  # a new listener: what came before is another life
        elif (m := _CLIENT.search(e.text)) and m.group(1) == name and seen.first_client is None:
            seen = LinkSeen(name, seen.listening, e, seen.failures)
        elif (m := _UNREACHABLE.search(e.text)) and m.group(1) == name:
            seen = LinkSeen(name, seen.listening, seen.first_client, (*seen.failures, e))
    return seen
