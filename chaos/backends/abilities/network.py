"""Abilities on a worker's network: its proxy link, its place on the cluster network,
the packets in its own namespace."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Protocol, runtime_checkable

from chaos.netns.access import Netns


@runtime_checkable
class ProxyLinks(Protocol):
    """Every worker reachable only through a Toxiproxy-API proxy (chaos/proxy)."""

    @abstractmethod
    def proxy(self, index: int) -> Any:
        """The ``toxiproxy.Proxy`` in front of worker ``index`` (all traffic *into* it)."""


@runtime_checkable
class Partitions(Protocol):
    """A worker cut off the cluster network and joined to it again."""

    @abstractmethod
    def disconnect(self, index: int) -> None:
        """Cut a worker from the cluster network (a partition)."""

    @abstractmethod
    def reconnect(self, index: int) -> None:
        """Join it again under its name (already joined: an error, as the engine says)."""


@runtime_checkable
class PacketNamespaces(Protocol):
    """Commands run in a worker's own network namespace (the packet faults' iptables and qdiscs)."""

    @abstractmethod
    def netns(self, index: int) -> Netns:
        """A helper beside worker ``index``, in its network namespace (its interfaces, iptables,
        qdiscs), to run commands there (chaos.netns.access); ``close()`` removes it."""


@runtime_checkable
class NamespacesAhead(Protocol):
    """A namespace helper started before the inject (starting one takes seconds under load)."""

    @abstractmethod
    def netns_ahead(self, index: int) -> None:
        """Start the helper ``netns(index)`` will hand out, now; unused, it goes with the run."""
