"""Small selections the checks share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from chaos.events import Event

E = TypeVar("E", bound=Event)


def first_by_worker(events: Sequence[E]) -> dict[int, E]:
    out: dict[int, E] = {}
    for e in events:
        if e.worker is not None:
            out.setdefault(e.worker, e)
    return out


def last_by_worker(events: Sequence[E]) -> dict[int, E]:
    out: dict[int, E] = {}
    for e in events:
        if e.worker is not None:
            out[e.worker] = e
    return out


def short_class(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def short_digest(digest: str) -> str:
    return digest[:12] if digest else "<none>"


def names(workers: Sequence[int]) -> str:
    return ", ".join(f"worker-{w}" for w in workers)
