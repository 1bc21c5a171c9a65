"""A fault lists the optional abilities of a cluster it calls (``uses_abilities``,
protocols of chaos.backends.abilities), and a backend whose cluster class lacks one
refuses the scenario by type before anything starts (chaos.backends.refusals). Each
list is held against the fault's own code here: a fault that starts calling
``cluster.disconnect`` without listing ``Partitions`` fails this test."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import ClassVar

import pytest
from fake_backend import FakeCluster, FakeFreezing, FakeWorkers

from chaos.backends import abilities
from chaos.backends.abilities import CheckpointDamage, UnsupportedVerb, verbs
from chaos.backends.catalog import BACKENDS, check_backend, cluster_type
from chaos.backends.refusals import refusal, refusals
from chaos.errors import ScenarioError
from chaos.faults import FAULTS, WorkerFault
from chaos.faults.undo import Undo
from chaos.scenario.model import current_model

ABILITIES = [cls for _, cls in inspect.getmembers(abilities, inspect.isclass) if getattr(cls, "_is_protocol", False)]
OWNER = {verb: ability for ability in ABILITIES for verb in verbs(ability)}  # each verb is one ability's
SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"


def used_abilities(cls) -> set[type]:
    """The abilities whose verbs the fault's class (and its bases up to Fault) and the helpers of its
    module it names call; one it asks the cluster for by type where it calls it (``isinstance``) is
    optional to it and left out."""
    sources = [
        inspect.getsource(k)
        for k in cls.__mro__
        if k.__module__.startswith("chaos.faults") and k.__name__ not in ("Fault", "WorkerFault", "WorkersFault")
    ]
    module = inspect.getmodule(cls)
    own = "\n".join(sources)
    sources += [
        inspect.getsource(f)
        for name, f in inspect.getmembers(module, inspect.isfunction)
        if f.__module__ == module.__name__ and re.search(rf"\b{name}\(", own)
    ]
    text = "\n".join(sources)
    if "override_workers(" in text or "clear_overrides(" in text:  # chaos.faults.undo's helpers
        text += "\n.override(\n.clear_override("
    asked = {a for a in ABILITIES if re.search(rf"isinstance\(\w+, {a.__name__}\)", text)}
    return {OWNER[v] for v in OWNER if re.search(rf"\.{v}\(", text)} - asked


current_model()
ALL = sorted(FAULTS.items())


def test_each_verb_belongs_to_one_ability():
    assert len(OWNER) == sum(len(verbs(a)) for a in ABILITIES)


@pytest.mark.parametrize("name, cls", ALL, ids=[n for n, _ in ALL])
def test_each_fault_lists_the_abilities_it_calls(name, cls):
    declared = set(cls.uses_abilities)
    assert used_abilities(cls) <= declared, f"{name} calls {used_abilities(cls) - declared} without listing them"
    assert declared <= set(ABILITIES)


def test_the_lists_are_not_empty_where_it_matters():
    assert FAULTS.get("partition").uses_abilities == (abilities.Partitions,)
    assert FAULTS.get("packet_loss").uses_abilities == (abilities.PacketNamespaces,)
    assert CheckpointDamage in FAULTS.get("corrupt_checkpoint").uses_abilities
    assert FAULTS.get("kill_worker").uses_abilities == ()  # signal: every cluster serves it


def test_a_backend_refuses_each_fault_that_needs_what_it_lacks_by_position_and_type():
    faults = [
        FAULTS.get("kill_worker")(worker=1),
        FAULTS.get("partition")(worker=1),
        FAULTS.get("corrupt_checkpoint")(),
    ]
    assert refusals(faults, "docker") == []
    [found] = refusals(faults, "swarm")
    assert found.index == 2 and found.fault == "corrupt_checkpoint" and found.abilities == (CheckpointDamage,)
    assert found.describe("swarm") == (
        "fault 2 (corrupt_checkpoint) needs damage_backup, which the swarm backend cannot do yet"
    )


def _shake_fault():
    from abc import abstractmethod
    from typing import Protocol, runtime_checkable

    @runtime_checkable
    class Shaking(Protocol):
        @abstractmethod
        def shake(self, index: int) -> None: ...

    class Shake(WorkerFault):
        name: ClassVar[str] = "shake"
        uses_abilities: ClassVar[tuple[type, ...]] = (Shaking,)

        def act(self, cluster, undo):
            cluster.shake(self.worker)

    return Shaking, Shake(worker=0)


def test_a_fault_needing_an_ability_no_backend_has_is_refused_on_each_by_type_before_it_acts():
    shaking, fault = _shake_fault()
    for backend in BACKENDS:
        error = refusal("s.yaml", [fault], "runner", backend)
        assert isinstance(error, UnsupportedVerb) and error.exit_code == 2
        assert error.message == f"s.yaml: fault 0 (shake) needs shake, which the {backend} backend cannot do yet"
        assert "run it with no backend yet" in error.hint
    with pytest.raises(UnsupportedVerb, match="shake needs shake"):
        fault.inject(FakeCluster(), Undo())  # and inject asks the cluster by type too

    class Shaker(FakeWorkers):
        def shake(self, index):
            self._call("shake", index)

    cluster = Shaker()
    fault.inject(cluster)
    assert cluster.calls == [("shake", 0)]  # found by type: no base class needed


def test_a_fault_runs_on_a_fake_of_just_the_abilities_it_lists():
    class Frozen(FakeWorkers, FakeFreezing):
        pass

    cluster = Frozen()
    undo = FAULTS.get("pause_worker")(worker=1).inject(cluster)
    undo(cluster)
    assert cluster.calls == [("pause", 1), ("unpause", 1)]
    with pytest.raises(UnsupportedVerb, match="partition needs disconnect, reconnect"):
        FAULTS.get("partition")(worker=1).inject(cluster)
    assert cluster.calls == [("pause", 1), ("unpause", 1)]  # refused before it acted


@pytest.mark.parametrize(
    "backend, file, said",
    [
        ("swarm", "packet-loss-5pct-on-one-worker-stretches-every-step-without-an-error.yaml", None),
        ("swarm", "corrupt-checkpoint-fails-every-restore-until-restarts-run-out.yaml", "needs damage_backup"),
        ("docker", "killed-worker-recovers-from-checkpoint.yaml", None),
    ],
)
def test_validate_and_run_refuse_by_type_with_exit_2(backend, file, said, capsys, monkeypatch):
    import chaos.cli
    from chaos.runner import cli as run_cli

    path = str(SCENARIOS / file)
    assert chaos.cli.main(["validate", path, "--backend", backend]) == (2 if said else 0)
    out = capsys.readouterr().out
    assert (said in out) if said else ("1 valid, 0 invalid" in out)
    if said:
        monkeypatch.setattr(run_cli, "backend_named", lambda name: pytest.fail("a backend was made"))
        assert chaos.cli.main(["run", path, "--backend", backend]) == 2
        err = capsys.readouterr().err
        assert said in err and f"cannot run on the {backend} backend" in err and "Traceback" not in err


def test_node_faults_are_refused_on_one_docker_host_by_type(tmp_path, capsys):
    import chaos.cli

    scenarios = sorted((SCENARIOS.parent / "scenarios-swarm").glob("node-lost*.yaml"))
    assert scenarios, "the swarm suite has a node_lost scenario"
    assert chaos.cli.main(["validate", str(scenarios[0]), "--backend", "docker"]) == 2
    assert "needs lose_node, restore_node, which the docker backend cannot do yet" in capsys.readouterr().out


def test_each_backend_is_known_by_name_and_its_clusters_by_class():
    with pytest.raises(ScenarioError) as err:
        check_backend("k8s")
    assert "'k8s'" in err.value.message and "docker, swarm" in err.value.message and "--backend" in err.value.hint
    assert BACKENDS == ("docker", "swarm")
    assert {cluster_type(b).__name__ for b in BACKENDS} == {"DockerCluster", "SwarmCluster"}


def test_more_workers_than_one_docker_host_runs_are_refused_there_and_run_on_a_swarm():
    """The format allows up to 16 workers; one Docker host runs 4, a swarm spreads up to 16 over its nodes."""
    from chaos.runner.run import refuse_unsupported
    from chaos.scenario.loader import load_scenario, scenario_from_dict

    data = load_scenario(SCENARIOS / "killed-worker-recovers-from-checkpoint.yaml").to_dict()
    data["cluster"]["workers"] = 8
    eight = scenario_from_dict(data)
    with pytest.raises(ScenarioError) as err:
        refuse_unsupported(eight, "docker")
    assert "cluster.workers: 8 workers, and the docker backend runs at most 4" in err.value.message
    assert "--backend swarm" in err.value.hint
    refuse_unsupported(eight, "swarm")  # not refused
    data["cluster"]["workers"] = 4
    refuse_unsupported(scenario_from_dict(data), "docker")


def test_one_unsupported_verb_one_exit_code():
    import chaos.compose.control as compose

    assert UnsupportedVerb.exit_code == 2 and issubclass(UnsupportedVerb, ScenarioError)
    assert not hasattr(compose, "UnsupportedVerb") or compose.UnsupportedVerb is UnsupportedVerb
