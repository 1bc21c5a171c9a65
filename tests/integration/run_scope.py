"""What a test left on the Docker engine (used by conftest.py).

Everything on the engine is compared before and after the test (containers,
networks, volumes, images), not only what carries the project's label: an
image that declares a VOLUME leaks unlabelled anonymous volumes, which a
label-only check never sees. Of the objects new since the test started, the
test's own are:

* objects labelled with this test session (``io.tfchaos.session``: the
  conftest sets it in the environment, so runs of subprocesses carry it too);
* unlabelled anonymous volumes (a 64-hex name) no container uses (one left by a
  removed container; one still in use belongs to a live container, possibly
  another session's). A named volume without this session's label is someone
  else's (the framework labels every volume it names): a CI rehearsal removed
  another engineer's named volume made while the test ran.
* images labelled with a run id (images a run made for itself).

* never an image's venv copy (``io.tfchaos.role=venv``, chaos.backends.docker.venv_cache):
  a cache kept across runs, like the built images.

Objects of another session (another test run, a user's ``chaos run`` on a
shared engine) are never counted and never removed. Built images (labelled
with their kind) are meant to stay. Containers and networks without this
session's label are not counted, but for a build container of ours (project
and kind ``build``: its labels pass into the images it commits, so it carries
its session under its own key): the framework labels everything else it creates with its session,
so those are other programs' (``docker build``'s intermediate containers,
someone's probe, a compose project). A build container is the test's when its
``io.tfchaos.build-session`` is this session: another session's build on a
shared engine is never removed (the label is blanked in the images it commits).

Labels are a container's own, as for ``chaos clean`` (chaos.backends.docker.engine_objects):
a container of an image built on one of ours inherits the image's labels, and
those never make it the test's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chaos import LABEL_PROJECT, LABEL_RUN, PROJECT
from chaos.backends.docker import venv_cache
from chaos.backends.docker.engine_objects import EngineObject, list_objects, remove_objects
from chaos.backends.docker.ownership import LABEL_SESSION
from chaos.images.plans import LABEL_BUILD_SESSION, LABEL_KIND

ANONYMOUS = re.compile(r"[0-9a-f]{64}")  # Docker's name for a volume nobody named


@dataclass(frozen=True)
class Snapshot:
    ids: frozenset[tuple[str, str]]

    @classmethod
    def take(cls, client) -> Snapshot:
        return cls(frozenset((o.kind, o.id) for o in list_objects(client)))


def volumes_in_use(client) -> set[str]:
    used = set()
    for c in client.api.containers(all=True):
        for mount in c.get("Mounts") or []:
            if mount.get("Type") == "volume" and mount.get("Name"):
                used.add(mount["Name"])
    return used


def is_ours(obj: EngineObject, session: str, used_volumes: set[str]) -> bool:
    labelled_session = obj.labels.get(LABEL_SESSION)
    if labelled_session is not None:
        return labelled_session == session
    if obj.kind == "image":
        return LABEL_RUN in obj.labels
    if obj.kind == "volume":
        # An image's venv copy (chaos.backends.docker.venv_cache) is a cache kept like the image.
        if obj.labels.get(LABEL_PROJECT) == PROJECT and obj.labels.get(venv_cache.LABEL_ROLE) == venv_cache.ROLE:
            return False
        return ANONYMOUS.fullmatch(obj.id) is not None and obj.id not in used_volumes
    return (
        obj.kind == "container"
        and obj.labels.get(LABEL_KIND) == "build"
        and obj.labels.get(LABEL_BUILD_SESSION) == session
    )


def leftovers(client, before: Snapshot, session: str) -> list[EngineObject]:
    """The test's own objects that were not there before it."""
    used = volumes_in_use(client)
    return [o for o in list_objects(client) if (o.kind, o.id) not in before.ids and is_ours(o, session, used)]


def remove(client, objects: list[EngineObject]) -> None:
    wanted = {(o.kind, o.id) for o in objects}
    remove_objects(client, lambda: [o for o in list_objects(client) if (o.kind, o.id) in wanted])
