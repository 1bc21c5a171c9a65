"""What the proxy saw of each link (the route ``worker-i`` to task i), read from
its own log lines in the run's timeline.

The proxy logs when a link starts listening, its first client from each host
after that, and every connection it could not pass on to the link's upstream;
the runner says where each worker came up (``AddressEvent``). So at any moment
it can tell, of a task a hang waits for, whether that task reached any peer's
link (it was given another address or port for them if not), whether any peer
reached the task's own link, and whether the link's upstream refused them (no
server listens there). The Toxiproxy HTTP API has no traffic counters; the log
is what the proxy says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from chaos.events import AddressEvent, Event, LogLine

PROXY_SOURCE = "proxy"
_LISTENING = re.compile(r"proxy (\S+): listening on (\S+), upstream (\S+)")
_CLIENT = re.compile(r"proxy (\S+): first client from (\S+) accepted")
_UNREACHABLE = re.compile(r"proxy (\S+): cannot reach upstream (\S+): (.*)$")


@dataclass
class LinkSeen:
    name: str
    listening: LogLine | None = None  # the last time the link started listening
    clients: dict[str, LogLine] = field(default_factory=dict)  # host -> its first connection since then
    failures: list[LogLine] = field(default_factory=list)  # connections not passed on since then


def links_seen(events: list[Event], until: float | None = None) -> dict[str, LinkSeen]:
    """Every link the proxy spoke of, as it stood at ``until``."""
    links: dict[str, LinkSeen] = {}
    for e in events:
        if not isinstance(e, LogLine) or e.source != PROXY_SOURCE or (until is not None and e.t > until):
            continue
        if m := _LISTENING.search(e.text):
            links[m.group(1)] = LinkSeen(m.group(1), listening=e)  # a new listener: what came before is another life
        elif m := _CLIENT.search(e.text):
            links.setdefault(m.group(1), LinkSeen(m.group(1))).clients.setdefault(m.group(2), e)
        elif m := _UNREACHABLE.search(e.text):
            links.setdefault(m.group(1), LinkSeen(m.group(1))).failures.append(e)
    return links


def address_of(task: str, events: list[Event], until: float | None = None) -> str | None:
    """Where ``task``'s latest container came up (None: not said)."""
    found = None
    for e in events:
        if isinstance(e, AddressEvent) and e.task == task and (until is None or e.t <= until):
            found = e.address
    return found


def _ago(now: float, e: Event) -> str:
    return f"{max(0.0, now - e.t):.0f} s"


def describe_links(task: str, events: list[Event], now: float) -> tuple[str, list[Event]] | None:
    """What the proxy saw of ``task`` up to ``now``: the peers' links it reached,
    and its own link (reached by nobody, or refused by its upstream); with the
    lines that show it. None when the proxy said nothing of it (an older proxy)."""
    links = links_seen(events, until=now)
    parts: list[str] = []
    proof: list[Event] = []
    address = address_of(task, events, until=now)
    peers = {name: link for name, link in links.items() if name != task and link.listening is not None}
    if address and peers:
        reached = sorted(name for name, link in peers.items() if address in link.clients)
        if reached:
            parts.append(f"it reached the proxy link of {', '.join(reached)}")
            proof += [peers[name].clients[address] for name in reached]
        else:
            parts.append(f"it reached no peer's proxy link (nothing from {address} on {', '.join(sorted(peers))})")
            proof += [link.listening for link in peers.values() if link.listening is not None]
    own = links.get(task)
    if own is not None and own.failures:
        last = own.failures[-1]
        match = _UNREACHABLE.search(last.text)
        assert match is not None  # only matching lines are kept
        count = len(own.failures)
        # When: early refusals at bring-up are normal until the task's server is up.
        parts.append(
            f"its own link could not reach {match.group(2)} ({count} time{'s' if count != 1 else ''}, "
            f"the last {_ago(now, last)} before: {match.group(3)})"
        )
        proof.append(last)
    elif own is not None and own.listening is not None and not own.clients:
        parts.append(f"no peer reached its own link {task} (listening for {_ago(now, own.listening)})")
        proof.append(own.listening)
    return ("; ".join(parts), proof) if parts else None
