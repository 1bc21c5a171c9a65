"""Which backends exist, and which verbs of the seam each cannot serve yet.

Pure (no engine, no SDK), so ``chaos validate --backend`` and the runner can
refuse a scenario before anything starts: a fault declares the verbs beyond the
common ones it uses (``Fault.uses_verbs``; tests/unit/test_fault_verbs.py holds
each declaration against the fault's code), a backend lists what it cannot do,
and ``refusals`` says which fault of a scenario needs what a backend lacks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from chaos.errors import InfrastructureError, ScenarioError
from chaos.topology import BACKEND_MAX_WORKERS

DEFAULT_BACKEND = "docker"

# Verbs some backend cannot serve (every other verb of ClusterControl every backend serves).
# "override.write_limit": ``override(..., write_limit=)``, a block device's writes throttled at create.
OPTIONAL_VERBS = frozenset({
    "disconnect", "reconnect", "netns", "backup_device", "damage_backup", "snapshot_backup",
    "fill_backup_volume", "clear_backup_fill", "override.write_limit", "lose_node", "restore_node",
    "drain_node", "activate_node", "await_restarts", "degrade_link", "restore_link",
})
NODE_VERBS = frozenset({"lose_node", "restore_node", "drain_node", "activate_node"})
LINK_VERBS = frozenset({"degrade_link", "restore_link"})  # the link between two nodes
# cluster.recovery.by: who restarts failed workers; the orchestrator's own restart policy
# needs the seam's ``Cluster.await_restarts`` (the runner waits for it instead of restarting).
RESTARTERS = ("runner", "orchestrator")
ORCHESTRATOR_VERB = "await_restarts"

CANNOT: dict[str, frozenset[str]] = {
    # One host has no other node to lose and to move a worker to, and the runner restarts its
    # workers (the engine's own restart policy would reuse the container: not a new task).
    "docker": NODE_VERBS | LINK_VERBS | {ORCHESTRATOR_VERB},
    # Not yet (docs/backends.md "The Swarm backend"): the checkpoint-store faults (they run a
    # helper beside the store).
    "swarm": OPTIONAL_VERBS - {"disconnect", "reconnect", "netns", ORCHESTRATOR_VERB} - NODE_VERBS - LINK_VERBS,
}
BACKENDS = tuple(CANNOT)


def too_many_workers(workers: int, backend: str) -> str | None:
    """Why ``backend`` cannot run ``workers`` workers (chaos.topology.BACKEND_MAX_WORKERS), or None."""
    limit = BACKEND_MAX_WORKERS[check_backend(backend)]
    if workers <= limit:
        return None
    return f"cluster.workers: {workers} workers, and the {backend} backend runs at most {limit}"


class UnsupportedVerb(InfrastructureError):
    """A verb a backend cannot serve, asked of it anyway (raised by the backend's cluster)."""


def check_backend(name: str) -> str:
    """``--backend``: one of BACKENDS."""
    if name not in CANNOT:
        raise ScenarioError(
            f"unknown backend {name!r}; valid: {', '.join(BACKENDS)}",
            hint="--backend docker (the default: one Docker host) or --backend swarm (the swarm manager "
                 "DOCKER_HOST or the Docker context names; docs/backends.md)",
        )
    return name


@dataclass(frozen=True)
class Refusal:
    fault: str  # its name, as the scenario writes it
    index: int  # its position under faults:
    verbs: tuple[str, ...]  # what it needs that the backend lacks

    def describe(self, backend: str) -> str:
        return (f"fault {self.index} ({self.fault}) needs {', '.join(self.verbs)}, which the {backend} backend "
                "cannot do yet")


def refusals(faults: Iterable[object], backend: str) -> list[Refusal]:
    """Each fault (a scenario's ``faults:`` values) that needs a verb ``backend`` cannot serve."""
    cannot = CANNOT[check_backend(backend)]
    out = []
    for index, fault in enumerate(faults):
        lacking = sorted(set(getattr(fault, "uses_verbs", frozenset())) & cannot)
        if lacking:
            out.append(Refusal(getattr(fault, "name", type(fault).__name__), index, tuple(lacking)))
    return out


def refusal_hint(found: list[Refusal], backend: str) -> str:
    """Where the refused faults run: the backends that serve every verb they need."""
    needed = {v for r in found for v in r.verbs}
    able = [b for b in BACKENDS if b != backend and not needed & CANNOT[b]]
    where = " or ".join(f"--backend {b}" for b in able) if able else "no backend yet"
    return f"run it with {where} (docs/backends.md lists what each backend serves)"


def restarter_refusal(by: str, backend: str) -> str | None:
    """Why ``backend`` cannot have failed workers restarted ``by`` whom (cluster.recovery.by), or None."""
    if by != "orchestrator" or ORCHESTRATOR_VERB not in CANNOT[check_backend(backend)]:
        return None
    able = [b for b in BACKENDS if ORCHESTRATOR_VERB not in CANNOT[b]]
    return (f"cluster.recovery.by: orchestrator needs an orchestrator's own restart policy, which the {backend} "
            f"backend does not have (there the runner restarts workers; valid: {' or '.join(RESTARTERS)}; "
            f"by: orchestrator on {', '.join(able)})")


def refusal(where: str, faults: Iterable[object], restarted_by: str, backend: str) -> ScenarioError | None:
    """The error for a scenario (``where``: its name or file) that ``backend`` cannot run: a fault
    needing a verb it lacks, or recovery by an orchestrator it does not have; None if it can."""
    found = refusals(faults, backend)
    reasons = [r.describe(backend) for r in found]
    restarter = restarter_refusal(restarted_by, backend)
    if restarter:
        reasons.append(restarter)
        found = [*found, Refusal("cluster.recovery.by", -1, (ORCHESTRATOR_VERB,))]
    if not reasons:
        return None
    hint = refusal_hint(found, backend)
    if restarter:
        hint += "; or set cluster.recovery.by: runner to have the runner restart the workers"
    return ScenarioError(f"{where}: " + "; ".join(reasons), hint=hint)


def unsupported(verb: str, backend: str) -> UnsupportedVerb:
    """The error a cluster raises for a verb it cannot serve (the runner refuses such scenarios first)."""
    return UnsupportedVerb(
        f"the {backend} backend cannot {verb} yet",
        hint="docs/backends.md lists what each backend serves; run this scenario with "
             + " or ".join(f"--backend {b}" for b in BACKENDS if b != backend),
    )
