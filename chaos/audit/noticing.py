"""How a worker noticed a fault, from its first sign after the inject.

TF has more than one way to notice a lost peer, and they take very different
times: a killed worker's open connection breaks at once (`Socket closed`,
0.04-0.06 s in the audit's runs), while a peer with no call in flight is found
by the coordination service's heartbeats (`stopped sending heartbeats`, 7-8 s).
Which one happens varies from run to run, so a median over runs of both is a
number no run had; the audit keeps each way's time apart (docs/audit.md,
"Agreement").
"""

from __future__ import annotations

import re

from chaos.events import ErrorEvent, ExitEvent

EXITED = "exited"
CONNECTION = "connection broke"
HEARTBEATS = "heartbeats stopped"
DEADLINE = "deadline"

# The TF and gRPC messages of each way, as the workers' errors carry them.
_WAYS = (
    (HEARTBEATS, re.compile(r"heartbeat|unhealthy|seems down|is down|[Cc]luster check alive failed")),
    (DEADLINE, re.compile(r"DEADLINE_EXCEEDED|[Dd]eadline [Ee]xceeded|[Tt]imed out|timeout")),
    (
        CONNECTION,
        re.compile(
            r"[Ss]ocket closed|[Cc]onnection reset|[Bb]roken pipe|[Cc]onnection refused|"
            r"[Ff]ailed to connect|Stream removed|OS Error|Connection aborted|EOF"
        ),
    ),
)


def how_noticed(sign: ErrorEvent | ExitEvent) -> str:
    """One short label: the process exited, or which of TF's ways its first
    error names; an error that names none of them is told by its class."""
    if isinstance(sign, ExitEvent):
        return EXITED
    for way, pattern in _WAYS:
        if pattern.search(sign.message):
            return way
    return sign.error_class.rsplit(".", 1)[-1] or "an error"
