"""Named toxics on a worker's proxy, added and removed idempotently.

Streams are Toxiproxy's: ``upstream`` is data sent *to* the worker,
``downstream`` its replies. Toxic names are ``chaos_<fault>_<stream>`` so a heal
removes exactly what its inject added and nothing a user added by hand.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

try:  # the client's "toxic does not exist" error; absent in unit tests without it
    from toxiproxy.exceptions import NotFound
except ImportError:  # pragma: no cover
    NotFound = LookupError  # type: ignore[misc,assignment]

from chaos.proxy.model import Stream

if TYPE_CHECKING:
    from chaos.faults.undo import Undo

# Which of a proxy's streams (chaos.proxy.model.Stream) a fault acts on: one, or both.
Streams = Literal[("both", *(s.value for s in Stream))]


def streams(stream: Streams) -> list[str]:
    return [s.value for s in Stream] if stream == "both" else [stream]


def toxic_names(prefix: str, stream: Streams) -> list[str]:
    return [f"chaos_{prefix}_{s}" for s in streams(stream)]


def add_toxics(proxy: Any, prefix: str, toxic_type: str, stream: Streams, attributes: dict[str, Any]) -> None:
    for s, name in zip(streams(stream), toxic_names(prefix, stream)):
        proxy.add_toxic(name=name, type=toxic_type, stream=s, toxicity=1.0, attributes=dict(attributes))


def undo_toxics(undo: Undo, worker: int, prefix: str, stream: Streams) -> None:
    """Remove these toxics at the undo; added before them, since removing one
    never added is harmless and a half-done add is then undone too."""
    undo.add(lambda cluster: remove_toxics(cluster.proxy(worker), prefix, stream))


def remove_toxics(proxy: Any, prefix: str, stream: Streams) -> None:
    present = set(proxy.toxics())
    for name in toxic_names(prefix, stream):
        if name in present:
            try:
                proxy.destroy_toxic(name)
            except NotFound:
                pass  # already gone: that is what we wanted
