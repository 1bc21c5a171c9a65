"""Each family's retry outlook (chaos/diagnose/families.py) against what the
shipped scenarios show after their restart: a scenario whose recovery passes
after a failure restart is evidence that a restart helps its family; one whose
restarts run out (``restarts_exhausted``) is evidence that it does not; one that
recovers only once the runner's redeploy changed the workers (a fault applied at
create: a version, a TF_CONFIG, an environment) is evidence that a restart helps
only after something changes. Scenarios with no failure symptom (only slower
steps, silent skews) exercise no restart: no evidence either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from chaos.diagnose.families import BEFORE_FIRST_STEP, FAMILIES, KINDS, OUTLOOKS, outlook, scenario_family
from chaos.scenario.loader import load_scenario

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = sorted([*ROOT.glob("scenarios/*.yaml"), *ROOT.glob("scenarios-swarm/*.yaml")])
FAILURE_SYMPTOMS = {
    "error",
    "exit_code",
    "stall",
    "hang_at_bring_up",
    "restore_failed",
    "restarts_exhausted",
    "tolerated",
}

# Scenarios whose recovery disagrees with their family's outlook, and why it is still right.
EXCEPTIONS: dict[str, str] = {}


def evidence(path: Path) -> tuple[str, bool | None, bool, str]:
    """(family, what the scenario shows of a restart: True helps / False does not / None no evidence,
    whether its failure comes before the first step of its generation, why)."""
    s = load_scenario(path)
    family = scenario_family(s.name)
    symptoms = {c.name for c in s.checks if c.role == "expect"}
    recovered = "completed" in {c.name for c in s.checks if c.role == "recover"}
    restore = "restore_failed" in symptoms
    at_create = any(step.fault.applies_at_create for step in s.faults)
    rec = s.cluster.recovery
    if "restarts_exhausted" in symptoms:
        return family, False, restore, "its restarts run out, each failing the same way"
    if not symptoms & FAILURE_SYMPTOMS or rec.restart == "none" or rec.max_restarts < 1:
        return family, None, restore, "no failure restart: nothing to judge a restart by"
    if not recovered:
        return family, None, restore, "its recovery is not judged"
    if at_create:
        return family, False, restore, "it recovers only once the runner's redeploy changed the workers (the heal)"
    return family, True, restore, "it recovers after a failure restart"


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_the_outlook_of_each_scenarios_family_agrees_with_its_restart(path):
    family, helps, before, why = evidence(path)
    if helps is None:
        pytest.skip(why)
    said = outlook(family, before_first_step=before)
    if path.stem in EXCEPTIONS:
        assert said.helps != helps, f"{path.stem} agrees now: drop it from EXCEPTIONS"
        return
    assert said.helps == helps, f"{path.stem} ({family}): {why}, but the outlook says: {said.said()}"


def test_every_shipped_scenario_has_a_family_other_than_other():
    # "other" has no outlook worth the name: a shipped scenario says what it is
    silent = {"other"}
    unnamed = [p.stem for p in SHIPPED if scenario_family(p.stem) in silent and not p.stem.startswith("packet-")]
    assert unnamed == []


def test_every_family_has_a_kind_and_an_outlook():
    assert set(KINDS) == set(FAMILIES) == set(OUTLOOKS)
    assert set(BEFORE_FIRST_STEP) <= set(FAMILIES)
    for family in FAMILIES:
        assert outlook(family).why and KINDS[family][1]


def test_the_families_of_the_issue():
    # restart helps: killed, preempted, network, node lost; not: skew, TF_CONFIG, Keras API, the same OOM, a bad backup
    for family in ("killed", "port_blocked", "transport", "timeout", "parameter_server"):
        assert outlook(family).helps, family
    for family in ("version_skew", "tf_config", "keras_api"):
        assert not outlook(family).helps, family
    for family in ("host_oom", "gpu_oom", "checkpoint"):
        assert outlook(family).helps and not outlook(family, before_first_step=True).helps, family
    assert scenario_family("node-lost-worker-rescheduled-resumes-from-the-shared-checkpoint") == "killed"
    assert scenario_family("preempted-worker-trains-through-sigterm-until-sigkill-then-recovers") == "killed"


def test_the_evidence_counts():
    # how much of the table the scenarios measure (the rest is reasoned, docs/diagnose.md)
    shown = [evidence(p) for p in SHIPPED]
    helps = {f for f, h, _, _ in shown if h is True}
    not_helps = {f for f, h, _, _ in shown if h is False}
    assert {
        "killed",
        "timeout",
        "transport",
        "port_blocked",
        "host_oom",
        "gpu_oom",
        "checkpoint",
        "parameter_server",
    } <= helps
    assert {"checkpoint", "version_skew", "tf_config"} <= not_helps


def test_every_built_in_fault_has_a_family_and_a_name_convention_wins_over_it():
    from chaos.diagnose.families import FAMILIES, FAULT_FAMILIES
    from chaos.faults import FAULTS

    assert sorted(set(FAULTS.names()) - set(FAULT_FAMILIES)) == []
    assert set(FAULT_FAMILIES.values()) <= set(FAMILIES)
    assert scenario_family("my-job-test", ["blocked_port"]) == "port_blocked"
    assert scenario_family("my-job-test", ["plugin_fault", "host_oom"]) == "host_oom"  # the first it knows
    assert scenario_family("killed-worker-recovers-from-checkpoint", ["blocked_port"]) == "killed"
    assert scenario_family("my-job-test") == "other"
