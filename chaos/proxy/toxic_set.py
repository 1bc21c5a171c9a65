"""The toxics of one proxy, in the order they were added (the chain order),
with a callback so open connections pick up every change at once."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from chaos.proxy.apierror import ApiError, toxic_not_found
from chaos.proxy.model import Stream, Toxic, ToxicPatch


class ToxicSet:
    def __init__(self, on_change: Callable[[], None]) -> None:
        self._toxics: dict[str, Toxic] = {}
        self._on_change = on_change

    def all(self) -> list[Toxic]:
        # Upstream chain then downstream chain, as the official server lists them.
        return [t for s in (Stream.UPSTREAM, Stream.DOWNSTREAM) for t in self.chain(s)]

    def chain(self, stream: Stream) -> tuple[Toxic, ...]:
        return tuple(t for t in self._toxics.values() if t.stream is stream)

    def get(self, name: str) -> Toxic:
        toxic = self._toxics.get(name)
        if toxic is None:
            raise toxic_not_found(name)
        return toxic

    def add(self, toxic: Toxic) -> Toxic:
        if toxic.name in self._toxics:
            raise ApiError(
                409,
                "toxic already exists",
                "name",
                hint=f"a toxic named {toxic.name!r} exists; "
                "update it with POST/PATCH /proxies/<proxy>/toxics/<toxic> or pick another name",
            )
        self._toxics[toxic.name] = toxic
        self._on_change()
        return toxic

    def update(self, name: str, patch: ToxicPatch) -> Toxic:
        old = self.get(name)
        # A new uid (dataclasses.replace re-runs its factory): connections
        # re-roll toxicity and restart per-toxic state, as the official server does.
        new = dataclasses.replace(old, attributes=patch.attributes, toxicity=patch.toxicity)
        self._toxics[name] = new  # same position in the chain
        self._on_change()
        return new

    def remove(self, name: str) -> None:
        self.get(name)
        del self._toxics[name]
        self._on_change()

    def clear(self) -> None:
        if self._toxics:
            self._toxics.clear()
            self._on_change()
