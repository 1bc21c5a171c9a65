"""The Fault base: a frozen value whose fields are its parameters.

The runner drives a fault like this::

    undo = fault.inject(cluster)                   # at its trigger
    cluster.record(fault.inject_event(time.time()))
    ...
    undo(cluster)                                  # after ``for`` seconds, and
    cluster.record(fault.heal_event(time.time()))  # always again in `finally`

``inject`` returns what undoes it: a fault writes ``act(cluster, undo)`` and
adds the undo of each step as it takes it (chaos.faults.undo), so the value
keeps no state, and an inject that raised half-way is undone as far as it got
when the runner passes its own ``Undo`` in. Undoing twice does nothing more.
A fault written the older way, ``inject(cluster)`` with an idempotent
``heal(cluster)`` (a plugin's), still works: its heal is its undo. Faults touch
the cluster only through ``chaos.backends.base.ClusterControl`` and the optional
abilities they list in ``uses_abilities`` (chaos.backends.abilities): a backend
whose clusters lack one refuses the scenario before anything starts, and
``inject`` refuses a cluster that lacks one.

A fault with ``applies_at_create`` changes how workers are *created* (their
image, environment or settings), so it takes effect when a worker (re)starts:
injected at ``bring_up`` the workers come up with it; injected mid-training,
or healed after ``for`` seconds, the runner redeploys every worker, the way an
operator rolls out a new config, and BackupAndRestore resumes training.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, model_validator

from chaos.backends.abilities import UnsupportedVerb, lacking, verbs
from chaos.backends.base import ClusterControl
from chaos.events import RUNNER, HealEvent, InjectEvent
from chaos.faults.undo import Undo
from chaos.registry import Registry
from chaos.topology import MAX_SLOTS

# A worker's index (its container's slot; 0 is the chief). The scenario refuses an index its own
# cluster does not have, naming the valid ones (chaos.scenario.consistency); the JSON schema can
# only say the largest cluster's (chaos.topology.MAX_SLOTS), and says that.
WorkerIndex = Annotated[int, Field(ge=0), WithJsonSchema({"type": "integer", "minimum": 0, "maximum": MAX_SLOTS - 1})]
# A TF task by name (the cluster's topology says which it has: chaos.scenario.tasks).
TASK_PATTERN = r"^(chief|worker-(0|[1-9][0-9]*)|ps-(0|[1-9][0-9]*))$"


class Fault(BaseModel):
    """Base of every fault."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: ClassVar[str] = "fault"
    applies_at_create: ClassVar[bool] = False
    # What it needs inside the training process (chaos.workload.evidence.Hook
    # values); validation refuses it for a workload that cannot serve it.
    uses_hooks: ClassVar[frozenset[str]] = frozenset()
    # The optional abilities of a cluster it calls (chaos.backends.abilities protocols, by
    # type): a backend whose clusters lack one refuses the scenario before anything starts
    # (chaos.backends.refusals); tests/unit/faults/test_fault_abilities.py holds each list to the code.
    uses_abilities: ClassVar[tuple[type, ...]] = ()
    # Where the workers' traffic must run for it to act (cluster.traffic): through the proxy
    # (it acts on the proxy's links), direct (it acts on the links between nodes), or either.
    needs_traffic: ClassVar[str | None] = None

    @property
    def target(self) -> str:
        """What the fault acts on, as recorded in inject/heal events."""
        return "cluster"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "inject" in cls.__dict__ and "act" not in cls.__dict__:
            # Written as inject(cluster) + heal(cluster) (a plugin's): its heal, idempotent, is its undo.
            legacy = cls.__dict__["inject"]

            def act(self: Fault, cluster: ClusterControl, undo: Undo) -> None:
                undo.add(self.heal)
                legacy(self, cluster)

            cls.act = act  # type: ignore[method-assign]
            cls.inject = Fault.inject  # type: ignore[method-assign]

    def inject(self, cluster: ClusterControl, undo: Undo | None = None) -> Undo:
        """Act on the cluster; returns what undoes it. Given ``undo``, each step's
        undo is added to it as the step is taken (a half-done inject is undone too)."""
        missing = lacking(cluster, self.uses_abilities)
        if missing:  # refused by type before a run starts; this holds for any other caller
            raise UnsupportedVerb(
                f"fault {self.name} needs {', '.join(v for a in missing for v in verbs(a))}, which this cluster "
                f"({type(cluster).__name__}) does not offer",
                hint="docs/backends.md lists what each backend serves",
            )
        undo = Undo() if undo is None else undo
        self.act(cluster, undo)
        return undo

    def act(self, cluster: ClusterControl, undo: Undo) -> None:
        """What the fault does, adding to ``undo`` what undoes each step."""
        raise NotImplementedError

    def prepare(self, cluster: ClusterControl) -> None:
        """Work done at bring-up so that the inject lands when asked (nothing a
        worker sees). By default none; a failure here is not the fault's: its
        inject then does the work itself."""

    def heal(self, cluster: ClusterControl) -> None:
        """For a fault written as inject + heal: undo ``inject``, idempotently."""

    def hooks(self) -> frozenset[str]:
        """The in-process hooks this fault needs, with these parameters."""
        return self.uses_hooks

    def images(self) -> set[str]:
        """User images (not the framework's) this fault runs workers on."""
        return set()

    def tf_versions(self) -> set[str]:
        """TF versions whose worker images this fault needs built."""
        return set()

    def backup_volume_mb(self) -> int:
        """A size limit the run's backup volume needs for this fault (MB; 0: none)."""
        return 0

    def params(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def inject_event(self, t: float) -> InjectEvent:
        return InjectEvent(t=t, source=RUNNER, fault=self.name, target=self.target, params=self.params())

    def heal_event(self, t: float) -> HealEvent:
        return HealEvent(t=t, source=RUNNER, fault=self.name, target=self.target)


class WorkerFault(Fault):
    """A fault aimed at one worker: ``worker`` (a container index) or ``task``
    (a TF task name, resolved through the cluster's topology when the scenario
    is validated: chaos.scenario.tasks)."""

    worker: WorkerIndex | None = Field(None, description="worker index; 0 is the chief (or give task)")
    task: str | None = Field(
        None,
        pattern=TASK_PATTERN,
        description="the TF task instead of an index: chief, worker-N or ps-N (training.strategy: "
        "parameter_server); with MWMS worker-N is worker N",
    )

    @model_validator(mode="after")
    def _aimed(self) -> WorkerFault:
        if self.worker is None and self.task is None:
            raise ValueError("give worker (an index, 0 is the chief) or task (chief, worker-N, ps-N)")
        return self

    def params(self) -> dict[str, Any]:
        data = super().params()
        if data.get("task") is None:  # said only when the scenario named it
            data.pop("task", None)
        return data

    @property
    def target(self) -> str:
        return f"worker-{self.worker}"


class WorkersFault(Fault):
    """A fault aimed at a set of workers."""

    workers: list[int] = Field(min_length=1, description="worker indices; 0 is the chief")

    @property
    def target(self) -> str:
        return ",".join(f"worker-{w}" for w in self.workers)


FAULTS: Registry[Fault] = Registry("fault")
register_fault = FAULTS.register
