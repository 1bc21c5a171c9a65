"""The runs on a Docker engine, who owns them, and which ``chaos clean`` may remove.

A run's objects (containers, networks, volumes, images) carry its run id and
its owner (chaos.backends.docker.ownership). A run whose owning process is gone is
stale; one whose owner still runs, or runs on another host, is left alone
unless the user names it (``--run``) or asks for everything (``--all``).

Every label read here is an object's own (chaos.backends.docker.engine_objects): a
container a user made from an image built on one of ours inherits
``io.tfchaos.*`` labels, and is never a run's nor removed by ``--all``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chaos import LABEL_RUN
from chaos.backends.docker.engine_objects import EngineObject, Removal, project_objects, remove_objects
from chaos.backends.docker.ownership import LABEL_OWNER, LABEL_SESSION, Liveness, Owner
from chaos.backends.docker.venv_cache import LABEL_ROLE
from chaos.backends.docker.venv_cache import ROLE as VENV_ROLE


@dataclass
class RunRecord:
    run_id: str
    objects: list[EngineObject] = field(default_factory=list)

    def _label(self, key: str) -> str | None:
        return next((o.labels[key] for o in self.objects if o.labels.get(key)), None)

    @property
    def owner(self) -> Owner | None:
        return Owner.parse(self._label(LABEL_OWNER))

    @property
    def session(self) -> str | None:
        return self._label(LABEL_SESSION)

    def liveness(self) -> Liveness:
        owner = self.owner
        return owner.liveness() if owner else Liveness.UNKNOWN

    def describe(self) -> str:
        owner = self.owner
        who = f"pid {owner.pid} on {owner.host}" if owner else "no owner label"
        return f"run {self.run_id} ({who}, {len(self.objects)} objects)"


def runs_on_engine(client) -> list[RunRecord]:
    """Every run with at least one object on the engine, by run id."""
    runs: dict[str, RunRecord] = {}
    for obj in project_objects(client, keys=(LABEL_RUN,)):
        run_id = obj.labels.get(LABEL_RUN)
        if run_id:
            runs.setdefault(run_id, RunRecord(run_id)).objects.append(obj)
    return sorted(runs.values(), key=lambda r: r.run_id)


def run_objects(client, run_id: str) -> list[EngineObject]:
    return project_objects(client, {LABEL_RUN: run_id})


def remove_run(client, run_id: str) -> Removal:
    """Remove every object of one run; never raises."""
    return remove_objects(client, lambda: run_objects(client, run_id))


@dataclass
class CleanResult:
    removed: list[tuple[RunRecord, Removal]] = field(default_factory=list)
    kept: list[tuple[RunRecord, Liveness]] = field(default_factory=list)
    extra: Removal | None = None  # project objects of no run (``--all`` only)


def clean(client, *, run_id: str | None = None, everything: bool = False) -> CleanResult:
    """Remove stale runs (owner gone); ``run_id``: that run; ``everything``: every
    project object on the engine, live runs included."""
    result = CleanResult()
    for record in runs_on_engine(client):
        if run_id is not None and record.run_id != run_id:
            continue
        liveness = record.liveness()
        if run_id is None and not everything and liveness is not Liveness.GONE:
            result.kept.append((record, liveness))
            continue
        result.removed.append((record, remove_run(client, record.run_id)))
    if everything and run_id is None:
        # Leftovers of no run, e.g. a build container of a killed image build
        # (its kind label is its own). Never images: the built images carry the
        # project label too.
        # Never an image's venv copy either: a cache kept like the image (chaos.backends.docker.venv_cache).
        result.extra = remove_objects(
            client,
            lambda: [
                o
                for o in project_objects(client, kinds=("container", "network", "volume"))
                if o.labels.get(LABEL_ROLE) != VENV_ROLE
            ],
        )
    return result
