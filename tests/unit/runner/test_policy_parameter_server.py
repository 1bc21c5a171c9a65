"""The policy with a parameter-server cluster: 4 containers, only the coordinator
(container 0) reports training; the ps and worker servers never exit by themselves."""

from chaos.runner.policy import FaultPlan, FaultStatus, Finish, Plan, Restart, Seen, State, decide
from chaos.scenario.triggers import AtStep

T0 = 1000.0


def ps_plan(restart="all"):
    return Plan(4, (FaultPlan("kill_worker", AtStep(step=5)),), 30.0, 300.0, restart, 1, reporters=1)


def fired():
    return State(T0, T0, T0, faults=(FaultStatus(T0 + 5),), stepped=True)


def test_the_coordinators_done_finishes_the_run_once_it_exited():
    seen = Seen(max_step=100, last_step_t=T0 + 9, done=frozenset({0}), exited=frozenset({0}), last_done_t=T0 + 9)
    actions = decide(ps_plan(), fired(), seen, T0 + 10).actions
    assert isinstance(actions[-1], Finish) and actions[-1].completed


def test_a_lost_worker_waits_while_the_coordinator_trains_on():
    seen = Seen(max_step=50, last_step_t=T0 + 9, exited=frozenset({2}), failed=frozenset({2}))
    decision = decide(ps_plan(restart="none"), fired(), seen, T0 + 10)
    assert decision.actions == () and "settle" in decision.waiting


def test_a_lost_ps_restarts_every_container_once_the_coordinator_exited():
    seen = Seen(max_step=50, last_step_t=T0 + 6, exited=frozenset({0, 3}), failed=frozenset({0, 3}))
    actions = decide(ps_plan(), fired(), seen, T0 + 7).actions
    assert isinstance(actions[-1], Restart) and actions[-1].workers == (0, 1, 2, 3)
