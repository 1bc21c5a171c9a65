"""``cluster.recovery.by: orchestrator``: the platform's restart policy restarts failed workers,
the runner restarts nothing. The scenario field (its consistency with ``restart:``), the refusal
on a backend without such a policy, the policy's action and the supervisor carrying it out.
The Swarm backend's side: tests/unit/backends/swarm/test_orchestrator_restarts.py."""

from __future__ import annotations

import pytest

from chaos.backends.refusals import refusal
from chaos.errors import ScenarioError
from chaos.events import RestartEvent
from chaos.faults import FAULTS
from chaos.runner.policy import AwaitRestart, FaultPlan, FaultStatus, Finish, Plan, Restart, Seen, State, decide
from chaos.runner.run import refuse_unsupported
from chaos.runner.supervisor import Supervisor
from chaos.scenario.loader import scenario_from_dict
from chaos.scenario.problems import ScenarioProblems
from chaos.scenario.triggers import AtStep
from tests.unit.runner.test_supervisor import KilledJob, no_poll_delay  # noqa: F401 - the fixture, used by name

EXPLAIN = {"symptom": "s", "cause": "c", "fix": "f"}
KILL = {"kill_worker": {"worker": 1, "signal": "SIGKILL"}, "at": {"epoch": 1}}


def scenario(recovery, faults=(KILL,)):
    return scenario_from_dict(
        {
            "name": "x",
            "description": "d",
            "explain": EXPLAIN,
            "cluster": {"workers": 2, "training": {"epochs": 3, "steps_per_epoch": 5}, "recovery": recovery},
            "faults": list(faults),
            "timeouts": {"total": 30, "symptom": 30},
        }
    )


ORCHESTRATED = {"restart": "failed", "max_restarts": 1, "by": "orchestrator"}


# --- the field -----------------------------------------------------------------------------


def test_by_defaults_to_the_runner():
    assert scenario({"restart": "all"}).cluster.recovery.by == "runner"


def test_by_orchestrator_needs_restart_failed():
    with pytest.raises(ScenarioProblems) as err:
        scenario({"restart": "all", "by": "orchestrator"})
    text = str(err.value)
    assert "cluster.recovery.restart" in text and "valid with it: failed" in text


def test_an_unknown_restarter_lists_the_valid_ones():
    with pytest.raises(ScenarioProblems) as err:
        scenario({"restart": "failed", "by": "kubelet"})
    assert "cluster.recovery.by" in str(err.value) and "runner" in str(err.value) and "orchestrator" in str(err.value)


def test_node_faults_cannot_go_with_the_orchestrator_yet():
    lost = {"node_lost": {"worker": 1}, "at": {"epoch": 1}, "for": 5}
    with pytest.raises(ScenarioProblems) as err:
        scenario(ORCHESTRATED, [lost])
    assert "faults[0].node_lost" in str(err.value) and "by: runner" in str(err.value)


# --- refused where there is no orchestrator -----------------------------------------------


def test_the_docker_backend_refuses_it_before_anything_starts_naming_field_backend_values_and_hint():
    with pytest.raises(ScenarioError) as err:
        refuse_unsupported(scenario(ORCHESTRATED), "docker")
    message, hint = err.value.message, err.value.hint
    assert "cluster.recovery.by: orchestrator" in message and "docker backend" in message
    assert "runner or orchestrator" in message
    assert "--backend swarm" in hint and "by: runner" in hint


def test_the_swarm_backend_takes_it_and_the_runner_default_everywhere():
    refuse_unsupported(scenario(ORCHESTRATED), "swarm")
    assert refusal("x", [], "runner", "docker") is None


def test_a_refused_fault_and_the_refused_restarter_are_said_together():
    error = refusal("x", [FAULTS.get("node_lost")(worker=1)], "orchestrator", "docker")
    assert "node_lost" in error.message and "cluster.recovery.by" in error.message


def test_validate_says_it_for_the_backend_asked(tmp_path, capsys):
    import argparse

    import yaml

    from chaos.scenario.cli import cmd_validate

    data = scenario(ORCHESTRATED).to_dict()
    path = tmp_path / "x.yaml"
    path.write_text(yaml.safe_dump(data))
    assert cmd_validate(argparse.Namespace(files=[str(path)], dir=None, backend="docker")) == 2
    assert "cluster.recovery.by: orchestrator" in capsys.readouterr().out
    assert cmd_validate(argparse.Namespace(files=[str(path)], dir=None, backend="swarm")) == 0


# --- the policy ----------------------------------------------------------------------------

T0 = 1000.0
KILLED = (FaultPlan("kill_worker", AtStep(step=5)),)


def fired():
    """Training, the kill fired (healed: a kill's heal is nothing)."""
    return (FaultStatus(T0, True),)


def orchestrated(**kw):
    return Plan(2, KILLED, restart="failed", restarted_by="orchestrator", **kw)


def test_the_policy_waits_for_the_orchestrator_instead_of_restarting():
    seen = Seen(exited=frozenset({0, 1}), failed=frozenset({0, 1}), last_step_t=T0)
    decision = decide(orchestrated(), State(T0, T0, T0, fired()), seen, T0 + 1)
    assert decision.actions == (AwaitRestart((0, 1), "worker-0, worker-1 failed"),)
    assert not any(isinstance(a, Restart) for a in decision.actions)


def test_a_hung_job_is_never_restarted_by_the_orchestrator_and_the_run_says_so():
    decision = decide(
        orchestrated(symptom_s=10), State(T0, T0, T0, fired(), stepped=True), Seen(last_step_t=T0), T0 + 11
    )
    [finish] = decision.actions
    assert isinstance(finish, Finish) and not finish.completed
    assert "no worker exited with a failure" in finish.reason and "never restarted by the platform" in finish.reason


def test_only_the_failed_workers_are_awaited_once_a_peer_hangs_past_the_symptom_time():
    plan = orchestrated(symptom_s=10)
    st = State(T0, T0, T0, fired(), first_failure=T0)
    seen = Seen(exited=frozenset({1}), failed=frozenset({1}), last_step_t=T0)
    assert decide(plan, st, seen, T0 + 5).actions == ()  # settling
    assert decide(plan, st, seen, T0 + 11).actions == (AwaitRestart((1,), "worker-1 failed"),)


def test_the_restart_budget_holds_for_the_orchestrator_too():
    seen = Seen(exited=frozenset({0, 1}), failed=frozenset({0, 1}), last_step_t=T0)
    [finish] = decide(orchestrated(max_restarts=1), State(T0, T0, T0, fired(), restarts=1), seen, T0 + 1).actions
    assert isinstance(finish, Finish) and "allows no (further) restart" in finish.reason


# --- the supervisor ------------------------------------------------------------------------


class OrchestratedJob(KilledJob):
    """The kill halts training until the orchestrator's restart (await_restarts returns)."""

    def await_restarts(self, indices, reason, timeout_s=120.0):
        self.halted = False
        return super().await_restarts(indices, reason, timeout_s)


def test_the_supervisor_restarts_nothing_itself_and_the_run_completes():
    cluster = OrchestratedJob(checkpoint_files=3)
    outcome = Supervisor(scenario(ORCHESTRATED), cluster, lambda _: None).run()
    assert outcome.finished and outcome.restarts == 1, outcome.reason
    names = [c[0] for c in cluster.calls]
    assert "restart" not in names
    assert ("await_restarts", [0, 1], "worker-0, worker-1 failed") in cluster.calls
    restarts = [e for e in cluster.events.snapshot() if isinstance(e, RestartEvent)]
    assert [(e.worker, e.by) for e in restarts] == [(0, "orchestrator"), (1, "orchestrator")]


def test_a_worker_the_orchestrator_did_not_restart_ends_the_run_with_the_reason():
    cluster = OrchestratedJob(checkpoint_files=3)
    cluster.not_restarted = {0}
    outcome = Supervisor(scenario(ORCHESTRATED), cluster, lambda _: None).run()
    assert not outcome.finished
    assert "the orchestrator did not restart worker-0" in outcome.reason
    assert "restart" not in [c[0] for c in cluster.calls]


def test_the_runner_still_restarts_by_default():
    cluster = KilledJob(checkpoint_files=3)
    outcome = Supervisor(scenario({"restart": "failed"}), cluster, lambda _: None).run()
    assert outcome.finished
    assert ("restart", [0, 1], "worker-0, worker-1 failed", 3.0) in cluster.calls
    assert "await_restarts" not in [c[0] for c in cluster.calls]
