"""The optional abilities of a cluster, each its own small protocol, found by type
(as Toxiproxy finds a toxic's optional interfaces with a type assertion).

A backend's cluster class lists the abilities it implements among its bases; a
fault lists the ones it calls in ``Fault.uses_abilities``; ``lacking`` says which of
them a cluster (or a cluster class, before anything starts) does not implement.
What every cluster serves is chaos.backends.base.ClusterControl / Cluster.

Adding an ability: a protocol in the module of its family here, exported below;
the backends that serve it list it and implement it; the fault names it.
"""

from __future__ import annotations

from collections.abc import Iterable

from chaos.backends.abilities.checkpoints import (
    CheckpointDamage,
    CheckpointFill,
    CheckpointListing,
    CheckpointSnapshots,
    StorageWriteLimits,
)
from chaos.backends.abilities.network import NamespacesAhead, PacketNamespaces, Partitions, ProxyLinks
from chaos.backends.abilities.nodes import MOVES_WORKERS, NodeDrain, NodeLinks, NodeLoss
from chaos.backends.abilities.restarts import OrchestratorRestarts, RestartsAhead
from chaos.backends.abilities.workers import Freezing, ResourceLimits, SpareAddresses, WorkerCommands, WorkerOverrides
from chaos.errors import ScenarioError


class UnsupportedVerb(ScenarioError):
    """An ability a cluster does not have, needed anyway. A ScenarioError (exit 2, as
    `chaos run` and `chaos validate` document for a scenario its backend cannot serve):
    the scenario asks what the chosen backend lacks, nothing is broken."""


def verbs(ability: type) -> tuple[str, ...]:
    """The methods an ability consists of, as messages name them."""
    return tuple(sorted(ability.__abstractmethods__))


def serves(target: object, ability: type) -> bool:
    """Whether ``target`` (a cluster, or a cluster class) implements ``ability``."""
    return issubclass(target, ability) if isinstance(target, type) else isinstance(target, ability)


def lacking(target: object, abilities: Iterable[type]) -> list[type]:
    """The abilities of ``abilities`` that ``target`` does not implement, in their order."""
    return [a for a in abilities if not serves(target, a)]


__all__ = [
    "MOVES_WORKERS",
    "CheckpointDamage",
    "CheckpointFill",
    "CheckpointListing",
    "CheckpointSnapshots",
    "Freezing",
    "NamespacesAhead",
    "NodeDrain",
    "NodeLinks",
    "NodeLoss",
    "OrchestratorRestarts",
    "PacketNamespaces",
    "Partitions",
    "ProxyLinks",
    "ResourceLimits",
    "RestartsAhead",
    "SpareAddresses",
    "StorageWriteLimits",
    "UnsupportedVerb",
    "WorkerCommands",
    "WorkerOverrides",
    "lacking",
    "serves",
    "verbs",
]
