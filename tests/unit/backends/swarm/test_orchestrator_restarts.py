"""``cluster.recovery.by: orchestrator`` on the Swarm backend, against the fake swarm (fake_swarm.py,
whose services start a new task when one fails under restart policy on-failure, as Swarm does):
the worker services carry the policy, the runner restarts nothing, and the cluster notices each
new task, follows it and records the restart. On real nodes: tests/integration/test_swarm_backend.py."""

from __future__ import annotations

from fake_swarm import make_cluster, services, wait_for

from chaos.backends.swarm import specs
from chaos.events import AddressEvent, ExitEvent, NoticeEvent, RestartEvent

ORCHESTRATED = {"restarted_by": "orchestrator", "max_restarts": 1}


def make(swarm, **kw):
    return make_cluster(swarm, **{**ORCHESTRATED, **kw})


def of(cluster, kind):
    return [e for e in cluster.events.snapshot() if isinstance(e, kind)]


def test_worker_services_carry_swarms_on_failure_policy_with_the_restart_budget(swarm):
    with make(swarm, max_restarts=2) as cluster:
        cluster.start_workers()
        for service in services(swarm, "worker"):
            policy = service.spec["restart_policy"]
            assert (policy["Condition"], policy["MaxAttempts"]) == ("on-failure", 2)
            assert policy["Delay"] == int(specs.RESTART_DELAY_S * specs.NANO)
        for role in ("proxy", "keeper"):
            assert all(s.spec["restart_policy"]["Condition"] == "none" for s in services(swarm, role))


def test_the_runner_restarting_keeps_restart_policy_none(swarm):
    with make_cluster(swarm) as cluster:
        cluster.start_workers()
        assert {s.spec["restart_policy"]["Condition"] for s in services(swarm, "worker")} == {"none"}


def test_a_killed_worker_is_restarted_by_swarm_and_followed_with_no_service_made_by_the_runner(swarm):
    with make(swarm) as cluster:
        cluster.start_workers()
        cluster.wait_started(timeout=5)
        old = cluster.container(1)
        made = len(swarm.services.created)
        cluster.signal(1, "SIGKILL")
        assert cluster.await_restarts([1], reason="worker-1 failed", timeout_s=5) == [1]
        assert len(swarm.services.created) == made  # nothing created, nothing removed by the runner
        assert swarm.removed == [f"{cluster.prefix}-store-mkdir"]
        new = cluster.container(1)
        assert new is not old and new.node == "node-3" and cluster.workers[1].generation == 1
        [exit_] = of(cluster, ExitEvent)
        [restart] = of(cluster, RestartEvent)
        assert (exit_.source, exit_.exit_code) == ("worker-1", 137)
        assert (restart.source, restart.by) == ("worker-1", "orchestrator") and restart.t >= exit_.t
        assert "exited 137" in restart.reason and "on node-3" in restart.reason
        # The new task's container is followed: its address (and node) said again after the restart.
        assert wait_for(lambda: [e.node for e in of(cluster, AddressEvent) if e.task == "worker-1"] == ["node-3"] * 2)


def test_the_new_tasks_exit_is_recorded_too(swarm):
    with make(swarm, max_restarts=2) as cluster:
        cluster.start_workers()
        cluster.signal(1, "SIGKILL")
        assert cluster.await_restarts([1], reason="r", timeout_s=5) == [1]
        cluster.container(1).exit(1)
        assert wait_for(lambda: [e.exit_code for e in of(cluster, ExitEvent)] == [137, 1])
        assert cluster.await_restarts([1], reason="r", timeout_s=5) == [1]  # its second restart
        assert [e.by for e in of(cluster, RestartEvent)] == ["orchestrator", "orchestrator"]


def test_a_restart_awaited_once_is_not_counted_again(swarm):
    with make(swarm, max_restarts=2) as cluster:
        cluster.start_workers()
        cluster.signal(1, "SIGKILL")
        assert cluster.await_restarts([1], reason="r", timeout_s=5) == [1]
        assert cluster.await_restarts([1], reason="r", timeout_s=0.5) == []  # running: no new task


def test_a_worker_that_exits_0_or_has_used_its_restarts_is_left_out_at_once(swarm):
    with make(swarm) as cluster:
        cluster.start_workers()
        cluster.container(0).exit(0)
        cluster.signal(1, "SIGKILL")
        assert cluster.await_restarts([0, 1], reason="r", timeout_s=5) == [1]
        cluster.container(1).exit(1)  # its one restart is used: Swarm starts no more, and nothing waits for one
        assert wait_for(lambda: len(of(cluster, ExitEvent)) == 3)
        assert cluster.await_restarts([1], reason="r", timeout_s=30) == []
        assert len(services(swarm, "worker")[1].history) == 2


def test_a_new_task_that_never_comes_is_said_and_not_awaited_forever(swarm, monkeypatch):
    from chaos.backends.swarm import cluster as swarm_cluster

    monkeypatch.setattr(swarm_cluster, "TASK_START_TIMEOUT_S", 0.3)
    with make(swarm) as cluster:
        cluster.start_workers()
        service = services(swarm, "worker")[1]
        service.spec["restart_policy"] = {"Condition": "none"}  # the swarm does not restart it
        cluster.signal(1, "SIGKILL")
        assert cluster.await_restarts([1], reason="r", timeout_s=5) == []
        [notice] = [e for e in of(cluster, NoticeEvent) if e.topic == "task_failed"]
        assert "the orchestrator started no task after it" in notice.text
        assert of(cluster, RestartEvent) == []


def test_a_runner_redeploy_still_replaces_the_services_and_awaits_no_orchestrator_task(swarm):
    with make(swarm) as cluster:
        cluster.start_workers()
        cluster.restart([0, 1], reason="redeploy: version_skew healed", grace_s=0)
        live = [s.name for s in services(swarm, "worker") if not s.removed]
        assert live == [f"{cluster.prefix}-worker-0-g1", f"{cluster.prefix}-worker-1-g1"]
        assert [e.by for e in of(cluster, RestartEvent)] == ["runner", "runner"]
