"""Which fault of a scenario needs an ability a backend lacks, asked of the backend's
cluster class by type before anything starts (``chaos validate --backend``, ``chaos
run``): each fault lists the abilities it calls (``Fault.uses_abilities``), each
backend's cluster class implements the ones it serves (chaos.backends.abilities).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from chaos.backends.abilities import OrchestratorRestarts, UnsupportedVerb, lacking, serves, verbs
from chaos.backends.catalog import BACKENDS, check_backend, cluster_type

# cluster.recovery.by: who restarts failed workers; the orchestrator's own restart policy
# is an ability (OrchestratorRestarts: the runner waits for it instead of restarting).
RESTARTERS = ("runner", "orchestrator")


@dataclass(frozen=True)
class Refusal:
    fault: str  # its name, as the scenario writes it
    index: int  # its position under faults:
    abilities: tuple[type, ...]  # what it needs that the backend lacks

    @property
    def verbs(self) -> tuple[str, ...]:
        """The methods of the lacking abilities, as the message names them."""
        return tuple(sorted({v for a in self.abilities for v in verbs(a)}))

    def describe(self, backend: str) -> str:
        return (
            f"fault {self.index} ({self.fault}) needs {', '.join(self.verbs)}, which the {backend} backend "
            "cannot do yet"
        )


def refusals(faults: Iterable[object], backend: str) -> list[Refusal]:
    """Each fault (a scenario's ``faults:`` values) that needs an ability ``backend`` lacks."""
    clusters = cluster_type(backend)
    out = []
    for index, fault in enumerate(faults):
        missing = lacking(clusters, getattr(fault, "uses_abilities", ()))
        if missing:
            out.append(Refusal(getattr(fault, "name", type(fault).__name__), index, tuple(missing)))
    return out


def able_backends(abilities: Iterable[type], but: str | None = None) -> list[str]:
    """The backends whose clusters implement every one of ``abilities`` (``but``: left out)."""
    needed = list(abilities)
    return [b for b in BACKENDS if b != but and not lacking(cluster_type(b), needed)]


def refusal_hint(found: list[Refusal], backend: str) -> str:
    """Where the refused faults run: the backends that serve every ability they need."""
    able = able_backends({a for r in found for a in r.abilities}, but=backend)
    where = " or ".join(f"--backend {b}" for b in able) if able else "no backend yet"
    return f"run it with {where} (docs/backends.md lists what each backend serves)"


def restarter_refusal(by: str, backend: str) -> str | None:
    """Why ``backend`` cannot have failed workers restarted ``by`` whom (cluster.recovery.by), or None."""
    if by != "orchestrator" or serves(cluster_type(check_backend(backend)), OrchestratorRestarts):
        return None
    able = able_backends([OrchestratorRestarts])
    return (
        f"cluster.recovery.by: orchestrator needs an orchestrator's own restart policy, which the {backend} "
        f"backend does not have (there the runner restarts workers; valid: {' or '.join(RESTARTERS)}; "
        f"by: orchestrator on {', '.join(able)})"
    )


def refusal(where: str, faults: Iterable[object], restarted_by: str, backend: str) -> UnsupportedVerb | None:
    """The error for a scenario (``where``: its name or file) that ``backend`` cannot run: a fault
    needing an ability it lacks, or recovery by an orchestrator it does not have; None if it can."""
    found = refusals(faults, backend)
    reasons = [r.describe(backend) for r in found]
    restarter = restarter_refusal(restarted_by, backend)
    if restarter:
        reasons.append(restarter)
        found = [*found, Refusal("cluster.recovery.by", -1, (OrchestratorRestarts,))]
    if not reasons:
        return None
    hint = refusal_hint(found, backend)
    if restarter:
        hint += "; or set cluster.recovery.by: runner to have the runner restart the workers"
    return UnsupportedVerb(f"{where}: " + "; ".join(reasons), hint=hint)
