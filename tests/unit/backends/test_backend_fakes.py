"""Every implementation of the backend seam, fakes included, against the seam
itself: each verb of the required part (chaos.backends.base) present, and each
of the abilities it implements (chaos.backends.abilities) callable every way the
protocol allows; what it does not serve, it has no stub of. A fake that drifts
from the seam would let a unit test pass against a cluster no backend is. And
the required part stays small."""

from __future__ import annotations

import inspect

import fake_backend
import pytest

from chaos.backends import abilities, base
from chaos.backends.docker.backend import DockerBackend
from chaos.backends.docker.cluster import DockerCluster
from chaos.backends.swarm.backend import SwarmBackend
from chaos.backends.swarm.cluster import SwarmCluster
from chaos.compose.control import ComposeControl

P = inspect.Parameter
POSITIONAL = (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)


def _supervisor_fake():
    """test_supervisor.py's training fake (a test module: loaded from its file)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[1] / "runner" / "test_supervisor.py"
    spec = importlib.util.spec_from_file_location("_supervisor_tests", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FakeCluster


# The required part of the seam, counted: an ability only some backends serve is a protocol of
# chaos.backends.abilities, never another verb here (issue 39: the seam had grown to 36).
REQUIRED_AT_MOST = 12
ABILITIES = [cls for _, cls in inspect.getmembers(abilities, inspect.isclass) if getattr(cls, "_is_protocol", False)]


def verbs(protocol) -> dict[str, inspect.Signature]:
    """The protocol's methods (its own and inherited), by name."""
    out = {}
    for klass in reversed(protocol.__mro__):
        if klass in (object,) or not getattr(klass, "_is_protocol", False):
            continue
        for name, value in vars(klass).items():
            if callable(value) and (not name.startswith("_") or name in ("__enter__", "__exit__")):
                out[name] = inspect.signature(value)
    return out


def incompatibilities(wanted: inspect.Signature, given: inspect.Signature) -> list[str]:
    """How a call the protocol allows could fail on the implementation."""
    problems = []
    params = list(given.parameters.values())
    takes_args = any(p.kind == P.VAR_POSITIONAL for p in params)
    takes_kwargs = any(p.kind == P.VAR_KEYWORD for p in params)
    positional = [p for p in params if p.kind in POSITIONAL]
    for i, want in enumerate(p for p in wanted.parameters.values() if p.kind in POSITIONAL):
        if i < len(positional):
            have = positional[i]
            if have.name != want.name and not takes_kwargs:
                problems.append(f"parameter {i} is {have.name!r}, the seam's is {want.name!r}")
            if want.default is not P.empty and have.default is P.empty:
                problems.append(f"{have.name!r} needs a default, as the seam's {want.name!r} has")
        elif not takes_args:
            problems.append(f"takes no parameter {want.name!r}")
    for want in (p for p in wanted.parameters.values() if p.kind == P.KEYWORD_ONLY):
        have = given.parameters.get(want.name)
        if have is None and not takes_kwargs:
            problems.append(f"takes no keyword {want.name!r}")
        elif have is not None and have.default is P.empty and want.default is not P.empty:
            problems.append(f"keyword {want.name!r} needs a default")
    allowed = {p.name for p in wanted.parameters.values()}
    for extra in params[len([p for p in wanted.parameters.values() if p.kind in POSITIONAL]) :]:
        if extra.kind in (P.VAR_POSITIONAL, P.VAR_KEYWORD) or extra.name in allowed:
            continue
        if extra.default is P.empty:
            problems.append(f"needs {extra.name!r}, which the seam never passes")
    return problems


def unbound(signature: inspect.Signature) -> inspect.Signature:
    params = list(signature.parameters.values())
    return signature.replace(parameters=params[1:]) if params and params[0].name == "self" else signature


IMPLEMENTATIONS = [
    pytest.param(base.Cluster, DockerCluster, id="DockerCluster"),
    pytest.param(base.ClusterControl, ComposeControl, id="ComposeControl"),
    pytest.param(base.Backend, DockerBackend, id="DockerBackend"),
    pytest.param(base.Cluster, SwarmCluster, id="SwarmCluster"),
    pytest.param(base.Backend, SwarmBackend, id="SwarmBackend"),
    pytest.param(base.Cluster, fake_backend.FakeWorkers, id="fake_backend.FakeWorkers"),
    pytest.param(base.Cluster, fake_backend.FakeCluster, id="fake_backend.FakeCluster"),
    pytest.param(base.Cluster, "supervisor", id="test_supervisor.FakeCluster"),
]
CLUSTERS = [p for p in IMPLEMENTATIONS if p.values[0] is not base.Backend]


def problems_against(protocol, implementation) -> list[str]:
    problems = []
    for name, wanted in verbs(protocol).items():
        given = getattr(implementation, name, None)
        if given is None or not callable(given):
            problems.append(f"{name}: missing")
            continue
        problems += [f"{name}: {p}" for p in incompatibilities(unbound(wanted), unbound(inspect.signature(given)))]
    return problems


@pytest.mark.parametrize("protocol, implementation", IMPLEMENTATIONS)
def test_every_implementation_offers_every_verb_of_the_seam_callable_as_the_seam_says(protocol, implementation):
    if implementation == "supervisor":
        implementation = _supervisor_fake()
    assert problems_against(protocol, implementation) == [], (
        f"{implementation.__name__} does not implement {protocol.__name__}"
    )


@pytest.mark.parametrize("protocol, implementation", CLUSTERS)
def test_each_ability_a_cluster_offers_is_callable_as_the_ability_says_and_none_is_half_there(protocol, implementation):
    if implementation == "supervisor":
        implementation = _supervisor_fake()
    problems = []
    for ability in ABILITIES:
        present = [v for v in verbs(ability) if hasattr(implementation, v)]
        if abilities.serves(implementation, ability):
            problems += [f"{ability.__name__}.{p}" for p in problems_against(ability, implementation)]
        elif present:  # a stub that raises, or half an ability: neither is found by type
            problems.append(f"{', '.join(present)} without the rest of {ability.__name__}")
    assert problems == [], implementation.__name__


@pytest.mark.parametrize("cls", [DockerCluster, SwarmCluster, ComposeControl])
def test_a_backend_implements_every_ability_it_lists_among_its_bases(cls):
    assert cls.__abstractmethods__ == frozenset()  # else it could not be made at all


def test_the_required_interface_is_small():
    required = base.Cluster.__abstractmethods__
    assert len(required) <= REQUIRED_AT_MOST, f"base.Cluster has {len(required)} verbs: {sorted(required)}"
    assert set(verbs(base.Cluster)) == set(required)  # every verb of it counted
    assert base.ClusterControl.__abstractmethods__ < required


@pytest.mark.parametrize("make", [fake_backend.FakeCluster, lambda: _supervisor_fake()()], ids=["shared", "supervisor"])
def test_the_fakes_hold_the_seams_attributes(make):
    cluster = make()
    assert isinstance(cluster.num_slots, int)
    for verb in ("append", "snapshot", "wait_for", "raise_if_stopped"):
        assert callable(getattr(cluster.events, verb)), verb


@pytest.mark.parametrize("backend", [DockerBackend, SwarmBackend])
def test_each_backend_says_whether_it_builds_images_and_the_class_of_its_clusters(backend):
    assert isinstance(backend.builds_images, bool)
    assert problems_against(base.Cluster, backend.cluster_type) == []
    assert backend.cluster_type in (DockerCluster, SwarmCluster)


def test_the_backends_differ_in_abilities_only_where_they_should():
    docker_only = {a for a in ABILITIES if abilities.serves(DockerCluster, a) and not abilities.serves(SwarmCluster, a)}
    swarm_only = {a for a in ABILITIES if abilities.serves(SwarmCluster, a) and not abilities.serves(DockerCluster, a)}
    assert docker_only == {
        abilities.CheckpointDamage,
        abilities.CheckpointSnapshots,
        abilities.CheckpointFill,
        abilities.StorageWriteLimits,
        abilities.RestartsAhead,
    }
    assert swarm_only == {abilities.NodeLoss, abilities.NodeDrain, abilities.NodeLinks, abilities.OrchestratorRestarts}


def test_the_check_itself_catches_a_drifted_fake():
    class Drifted(fake_backend.FakeCluster):
        def restart(self, indices, reason):  # no grace_s: the supervisor's redeploy passes one
            pass

        def override(self, index, owner, *, image=None):  # the faults pass env=, settings=, ...
            pass

    wanted = verbs(base.Cluster)
    said = incompatibilities(unbound(wanted["restart"]), unbound(inspect.signature(Drifted.restart)))
    assert said == ["takes no parameter 'grace_s'"]
    said = incompatibilities(
        unbound(verbs(abilities.WorkerOverrides)["override"]), unbound(inspect.signature(Drifted.override))
    )
    assert "takes no keyword 'env'" in said


def test_a_fake_of_only_what_a_test_needs_serves_that_and_nothing_more():
    class Frozen(fake_backend.FakeWorkers, fake_backend.FakeFreezing):
        pass

    cluster = Frozen()
    assert abilities.serves(cluster, abilities.Freezing)
    assert abilities.lacking(cluster, ABILITIES) == [a for a in ABILITIES if a is not abilities.Freezing]
