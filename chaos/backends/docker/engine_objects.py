"""What a run left on the Docker engine, and removing it without ever raising.

Only list calls of the low-level API are used: the high-level
``containers.list`` inspects every container it lists, and one that vanishes
between the list and the inspect raised ``NotFound`` out of teardown (seen
when Ctrl-C hit a restart). Every removal tolerates an object that is already
gone, still being removed, or appears late (a create interrupted mid-call
lands after a pass listed the objects), so removal repeats until nothing is
left, and reports what it could not remove instead of raising.

A container's labels include every label of its image, so a user's container
from an image built ``FROM`` a framework image carries ``io.tfchaos.project``
although the framework never created it. The labels that count are an
object's *own*, set when it was created: for a container, those its image does
not carry with the same value (networks and volumes have no image). An object
is the framework's only when one of its own labels is the framework's
(``io.tfchaos.*``): a run's run id and owner, a build container's kind.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from chaos import LABEL_PROJECT, PROJECT

# Removal order: a service first (removing it stops its tasks' containers), then
# containers, then what they used.
KINDS = ("service", "container", "network", "volume", "image")
FRAMEWORK_PREFIX = "io.tfchaos."


@dataclass(frozen=True)
class EngineObject:
    kind: str  # one of KINDS
    id: str
    name: str
    # Its own labels: a container's without those its image gave it.
    labels: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    state: str = ""  # containers: running, paused, exited, created, ...
    inherited: dict[str, str] = field(default_factory=dict, compare=False, hash=False)  # from its image

    @property
    def framework_made(self) -> bool:
        """Created and marked by the framework: one of its own labels is ours."""
        return any(k.startswith(FRAMEWORK_PREFIX) for k in self.labels)

    def describe(self) -> str:
        return f"{self.kind} {self.name}"


def _label_filter(labels: dict[str, str] | None, keys: tuple[str, ...] = ()) -> dict:
    wanted = [f"{k}={v}" for k, v in (labels or {}).items()] + list(keys)
    return {"label": wanted} if wanted else {}


def list_objects(
    client, labels: dict[str, str] | None = None, *, keys: tuple[str, ...] = (), kinds: tuple[str, ...] = KINDS
) -> list[EngineObject]:
    """Objects carrying every ``labels`` pair and every label key in ``keys``.

    With neither, every object on the engine (for before/after comparisons).
    """
    filters = _label_filter(labels, keys)
    api = client.api
    out: list[EngineObject] = []
    if "service" in kinds:
        for s in _services(api, filters):
            spec = s.get("Spec") or {}
            out.append(EngineObject("service", s["ID"], spec.get("Name") or s["ID"][:12], spec.get("Labels") or {}))
    if "container" in kinds:
        image_labels = _ImageLabels(api)
        for c in api.containers(all=True, filters=filters):
            name = (c.get("Names") or [c["Id"][:12]])[0].lstrip("/")
            own, inherited = _split(c.get("Labels") or {}, image_labels.of(c))
            out.append(EngineObject("container", c["Id"], name, own, c.get("State") or "", inherited))
    if "network" in kinds:
        for n in api.networks(filters=filters):
            out.append(EngineObject("network", n["Id"], n.get("Name", n["Id"][:12]), n.get("Labels") or {}))
    if "volume" in kinds:
        for v in api.volumes(filters=filters).get("Volumes") or []:
            out.append(EngineObject("volume", v["Name"], v["Name"], v.get("Labels") or {}))
    if "image" in kinds:
        for i in api.images(filters=filters) if filters else api.images(all=False):
            tags = [t for t in i.get("RepoTags") or [] if t != "<none>:<none>"]
            out.append(EngineObject("image", i["Id"], tags[0] if tags else i["Id"][7:19], i.get("Labels") or {}))
    return out


def _services(api, filters: dict) -> list[dict]:
    """A swarm manager's services (a `chaos run --backend swarm` with DOCKER_HOST at the
    manager makes them); none on an engine that is not a swarm manager."""
    try:
        return api.services(filters=filters) or []
    except Exception:  # noqa: BLE001 - "This node is not a swarm manager", or no swarm API
        return []


class _ImageLabels:
    """The labels of the images containers were created from, read once per image."""

    def __init__(self, api) -> None:
        self.api = api
        self.cache: dict[str, dict[str, str] | None] = {}

    def of(self, container: dict) -> dict[str, str] | None:
        """None: the image cannot be read (then no label counts as the container's own)."""
        image = container.get("ImageID")
        if not image:
            return {}  # a listing that names no image: nothing was inherited
        if image not in self.cache:
            try:
                self.cache[image] = (self.api.inspect_image(image).get("Config") or {}).get("Labels") or {}
            except Exception:  # noqa: BLE001 - removed meanwhile, or the engine failed
                self.cache[image] = None
        return self.cache[image]


def _split(labels: dict[str, str], image: dict[str, str] | None) -> tuple[dict[str, str], dict[str, str]]:
    """A container's labels as (its own, those its image gave it)."""
    if image is None:  # cannot tell what it inherited: claim nothing
        return {}, dict(labels)
    own = {k: v for k, v in labels.items() if image.get(k) != v}
    return own, {k: v for k, v in labels.items() if k not in own}


def project_objects(
    client, labels: dict[str, str] | None = None, *, keys: tuple[str, ...] = (), kinds: tuple[str, ...] = KINDS
) -> list[EngineObject]:
    """Objects the framework created: carrying the project label, with ``labels``
    and the label keys ``keys`` among their own labels, and marked as the
    framework's by an own label (never a user's container that merely inherited
    ``io.tfchaos.*`` labels from an image built on one of ours)."""
    labels = labels or {}
    return [
        o
        for o in list_objects(client, {LABEL_PROJECT: PROJECT, **labels}, keys=keys, kinds=kinds)
        if (o.kind == "image" or o.framework_made)
        and all(o.labels.get(k) == v for k, v in labels.items())
        and all(k in o.labels for k in keys)
    ]


def _status(exc: Exception) -> int | None:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None) or getattr(exc, "status_code", None)


def _remove_one(client, obj: EngineObject) -> str | None:
    """Remove one object; None when it is gone now, else why it is still there."""
    api = client.api
    try:
        if obj.kind == "service":
            api.remove_service(obj.id)
        elif obj.kind == "container":
            if obj.state == "paused":  # a paused container cannot be killed
                try:
                    api.unpause(obj.id)
                except Exception:  # noqa: BLE001 - already unpaused or gone
                    pass
            api.remove_container(obj.id, v=True, force=True)  # v: its anonymous volumes too
        elif obj.kind == "network":
            api.remove_network(obj.id)
        elif obj.kind == "volume":
            api.remove_volume(obj.id, force=True)
        else:
            api.remove_image(obj.id, force=True, noprune=False)
        return None
    except Exception as exc:  # noqa: BLE001 - teardown never raises
        if _status(exc) == 404:
            return None  # gone already: that is what we wanted
        text = str(getattr(exc, "explanation", None) or exc).splitlines()[0][:200]
        return f"{type(exc).__name__}: {text}"


@dataclass
class Removal:
    """What a removal did: what it removed, and what is still there (with why)."""

    removed: set[tuple[str, str]] = field(default_factory=set)  # (kind, id)
    left: list[tuple[EngineObject, str]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.left

    def count(self, kind: str) -> int:
        return sum(1 for k, _ in self.removed if k == kind)

    def summary(self) -> str:
        parts = [f"{self.count(k)} {k}s" for k in KINDS if self.count(k) or k not in ("service", "image")]
        return "removed " + ", ".join(parts)


def remove_objects(
    client,
    select: Callable[[], list[EngineObject]],
    *,
    passes: int = 6,
    pause_s: float = 0.5,
) -> Removal:
    """Remove what ``select()`` lists, containers first (networks and volumes
    are in use until then), listing again until nothing is left or ``passes``
    ran out. Never raises: a Docker engine that went away is reported in
    ``left`` (as a pseudo-object) instead."""
    result = Removal()
    order = {k: i for i, k in enumerate(KINDS)}
    problems: dict[tuple[str, str], str] = {}
    for attempt in range(passes + 1):
        if attempt:
            time.sleep(pause_s)
        try:
            objects = sorted(select(), key=lambda o: order[o.kind])
        except Exception as exc:  # noqa: BLE001 - the engine went away mid-teardown
            result.left = [(EngineObject("engine", "", "docker"), f"cannot list objects: {type(exc).__name__}: {exc}")]
            return result
        if not objects or attempt == passes:
            result.left = [(o, problems.get((o.kind, o.id), "appeared during removal")) for o in objects]
            return result
        for obj in objects:
            problem = _remove_one(client, obj)
            if problem is None:
                result.removed.add((obj.kind, obj.id))
            else:
                problems[(obj.kind, obj.id)] = problem
    return result
