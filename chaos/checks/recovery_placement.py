"""Where a worker runs after the restart: on a multi-node backend, a worker whose node was
lost must come back on another one (the runner's address events name each worker's node)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from chaos.checks.base import RecoveryCheck, register_check
from chaos.checks.recovery_state import restart_split
from chaos.checks.verdict import Undecidable, Verdict, failed, passed
from chaos.events import AddressEvent
from chaos.timeline import Timeline


def _nodes(timeline: Timeline) -> dict[str, AddressEvent]:
    """Each worker's last address event that names a node."""
    out: dict[str, AddressEvent] = {}
    for e in sorted(timeline.of(AddressEvent), key=lambda e: e.t):
        if e.node:
            out[e.task] = e
    return out


@register_check
class Rescheduled(RecoveryCheck):
    """After the restart each named worker runs on another node than it did before it."""

    name: ClassVar[str] = "rescheduled"
    needs: ClassVar[frozenset[str]] = frozenset({"restart"})
    workers: list[int] = Field(min_length=1, description="the workers that must have moved to another node")

    def judge(self, timeline: Timeline) -> Verdict:
        before, after = restart_split(timeline)
        was, now = _nodes(before), _nodes(after)
        if not was and not now:
            raise Undecidable("no address event names a node: the backend runs every worker on one host")
        said, stayed, proof = [], [], []
        for index in self.workers:
            name = f"worker-{index}"
            if name not in was or name not in now:
                when = "before" if name not in was else "after"
                return failed(
                    f"no address event names {name}'s node {when} the restart",
                    [e for e in (was.get(name), now.get(name)) if e],
                )
            proof += [was[name], now[name]]
            said.append(f"{name} {was[name].node} -> {now[name].node}")
            if was[name].node == now[name].node:
                stayed.append(name)
        if stayed:
            return failed(f"{', '.join(stayed)} came back on the same node ({'; '.join(said)})", proof)
        return passed("; ".join(said), proof)
