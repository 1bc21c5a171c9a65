"""A fault declares the verbs of the seam it uses that not every backend serves
(``uses_verbs``), so a backend lacking one refuses the scenario before anything
starts. Each declaration is held against the fault's own code here: a fault that
starts calling ``cluster.disconnect`` without declaring it fails this test."""

from __future__ import annotations

import inspect
import re

import pytest

from chaos.backends.capabilities import CANNOT, OPTIONAL_VERBS, check_backend, refusals
from chaos.errors import ScenarioError
from chaos.faults import FAULTS
from chaos.scenario.model import current_model


def used_verbs(cls) -> set[str]:
    """Optional verbs the fault's class (and its bases up to Fault) and its module's helpers call."""
    sources = [inspect.getsource(k) for k in cls.__mro__ if k.__module__.startswith("chaos.faults")
               and k.__name__ not in ("Fault", "WorkerFault", "WorkersFault")]
    module = inspect.getmodule(cls)
    sources += [inspect.getsource(f) for _, f in inspect.getmembers(module, inspect.isfunction)
                if f.__module__ == module.__name__]
    text = "\n".join(sources)
    found = {v for v in OPTIONAL_VERBS if "." not in v and re.search(rf"\.{v}\(|getattr\(\w+, \"{v}\"", text)}
    if re.search(r"write_limit=", text):
        found.add("override.write_limit")
    return found


current_model()
ALL = sorted(FAULTS.items())


@pytest.mark.parametrize("name, cls", ALL, ids=[n for n, _ in ALL])
def test_each_fault_declares_the_optional_verbs_it_calls(name, cls):
    assert used_verbs(cls) <= set(cls.uses_verbs), f"{name} calls {used_verbs(cls)} but declares {set(cls.uses_verbs)}"
    assert set(cls.uses_verbs) <= OPTIONAL_VERBS


def test_the_declarations_are_not_empty_where_it_matters():
    assert FAULTS.get("partition").uses_verbs == {"disconnect", "reconnect"}
    assert FAULTS.get("packet_loss").uses_verbs == {"netns"}
    assert "damage_backup" in FAULTS.get("corrupt_checkpoint").uses_verbs


def test_a_backend_refuses_each_fault_that_needs_what_it_lacks_by_position_and_verb():
    faults = [FAULTS.get("kill_worker")(worker=1), FAULTS.get("partition")(worker=1),
              FAULTS.get("corrupt_checkpoint")()]
    assert refusals(faults, "docker") == []
    [refusal] = refusals(faults, "swarm")
    assert refusal.index == 2 and refusal.fault == "corrupt_checkpoint"
    assert refusal.describe("swarm") == ("fault 2 (corrupt_checkpoint) needs damage_backup, which the swarm backend "
                                         "cannot do yet")


def test_an_unknown_backend_names_the_valid_ones():
    with pytest.raises(ScenarioError) as err:
        check_backend("k8s")
    assert "'k8s'" in err.value.message and "docker, swarm" in err.value.message and "--backend" in err.value.hint
    assert set(CANNOT) == {"docker", "swarm"}


def test_more_workers_than_one_docker_host_runs_are_refused_there_and_run_on_a_swarm():
    """The format allows up to 16 workers; one Docker host runs 4, a swarm spreads up to 16 over its nodes."""
    from pathlib import Path

    from chaos.runner.run import refuse_unsupported
    from chaos.scenario.loader import load_scenario, scenario_from_dict

    killed = Path(__file__).resolve().parents[2] / "scenarios" / "killed-worker-recovers-from-checkpoint.yaml"
    data = load_scenario(killed).to_dict()
    data["cluster"]["workers"] = 8
    eight = scenario_from_dict(data)
    with pytest.raises(ScenarioError) as err:
        refuse_unsupported(eight, "docker")
    assert "cluster.workers: 8 workers, and the docker backend runs at most 4" in err.value.message
    assert "--backend swarm" in err.value.hint
    refuse_unsupported(eight, "swarm")  # not refused
    data["cluster"]["workers"] = 4
    refuse_unsupported(scenario_from_dict(data), "docker")


def test_a_verb_a_backend_cannot_serve_names_the_other_backends_in_its_hint():
    from chaos.backends.capabilities import unsupported

    assert unsupported("lose a node", "docker").hint.endswith("run this scenario with --backend swarm")
    assert unsupported("run a helper", "swarm").hint.endswith("run this scenario with --backend docker")
