"""Typed values the API hands to the core: nothing past ``schema`` sees a dict."""

from __future__ import annotations

import dataclasses
import enum
import itertools
from dataclasses import dataclass
from typing import Any

from chaos.proxy.toxics.base import ToxicType


class Stream(str, enum.Enum):
    UPSTREAM = "upstream"  # client -> upstream server
    DOWNSTREAM = "downstream"  # upstream server -> client


@dataclass(frozen=True)
class Address:
    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


@dataclass(frozen=True)
class ProxySpec:
    """POST /proxies and each /populate item."""

    name: str
    listen: Address
    upstream: Address
    enabled: bool = True


@dataclass(frozen=True)
class ProxyPatch:
    """POST/PATCH /proxies/{proxy}: None means "keep as is"."""

    listen: Address | None = None
    upstream: Address | None = None
    enabled: bool | None = None


# Each create/update gets a fresh uid: connections key their per-toxic state
# (toxicity roll, timers, counters) by it, so an update starts afresh.
_uids = itertools.count(1)


@dataclass(frozen=True)
class Toxic:
    name: str
    kind: type[ToxicType]
    stream: Stream
    toxicity: float
    attributes: Any  # the kind's frozen Attributes dataclass
    uid: int = dataclasses.field(init=False, compare=False, default_factory=lambda: next(_uids))

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.kind.name,
            "stream": self.stream.value,
            "toxicity": self.toxicity,
            "attributes": dataclasses.asdict(self.attributes),
        }


@dataclass(frozen=True)
class ToxicPatch:
    """POST/PATCH /proxies/{proxy}/toxics/{toxic}: new attributes already merged."""

    attributes: Any
    toxicity: float
