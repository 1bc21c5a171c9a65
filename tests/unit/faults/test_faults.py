import pytest
from fake_backend import FakeCluster
from pydantic import ValidationError

from chaos.errors import ScenarioError
from chaos.faults import FAULTS, Bandwidth, BlockedPort, KillWorker, Latency, Partition, PauseWorker, PreemptWorker
from chaos.faults.undo import Undo
from chaos.registry import one_line, params_of


@pytest.fixture
def cluster():
    return FakeCluster()


def test_kill_worker_sends_the_signal_and_heal_is_a_no_op(cluster):
    undo = Undo()
    KillWorker(worker=0).inject(cluster, undo)
    KillWorker(worker=1, signal="SIGTERM").inject(cluster, undo)
    undo(cluster)
    assert cluster.calls == [("signal", 0, "SIGKILL"), ("signal", 1, "SIGTERM")]


def test_kill_worker_rejects_other_signals():
    with pytest.raises(ValidationError):
        KillWorker(worker=1, signal="SIGHUP")


def test_pause_and_unpause_with_idempotent_heal(cluster):
    undo = Undo()
    fault = PauseWorker(worker=1)
    undo(cluster)  # never injected: nothing to do
    fault.inject(cluster, undo)
    assert cluster.paused == {1}
    undo(cluster)
    undo(cluster)
    assert cluster.paused == set()
    assert cluster.calls == [("pause", 1), ("unpause", 1)]


def test_blocked_port_refused_disables_the_proxy_and_heal_enables_it(cluster):
    undo = Undo()
    fault = BlockedPort(worker=1, mode="refused")
    fault.inject(cluster, undo)
    assert cluster.proxies[1].enabled is False
    undo(cluster)
    undo(cluster)
    assert cluster.proxies[1].enabled is True
    assert cluster.proxies[0].enabled is True


def test_blocked_port_blackholed_adds_timeout_zero_toxics_on_both_streams(cluster):
    undo = Undo()
    fault = BlockedPort(worker=1, mode="blackholed")
    fault.inject(cluster, undo)
    toxics = cluster.proxies[1].toxics()
    assert {t.stream for t in toxics.values()} == {"upstream", "downstream"}
    assert all(t.type == "timeout" and t.attributes == {"timeout": 0} for t in toxics.values())
    undo(cluster)
    undo(cluster)
    assert cluster.proxies[1].toxics() == {}


def test_latency_adds_and_removes_named_toxics(cluster):
    undo = Undo()
    fault = Latency(worker=0, latency_ms=100, jitter_ms=10)
    fault.inject(cluster, undo)
    toxics = cluster.proxies[0].toxics()
    assert sorted(toxics) == ["chaos_latency_downstream", "chaos_latency_upstream"]
    assert toxics["chaos_latency_upstream"].attributes == {"latency": 100, "jitter": 10}
    assert toxics["chaos_latency_upstream"].stream == "upstream"
    undo(cluster)
    assert cluster.proxies[0].toxics() == {}


def test_latency_on_one_stream_and_heal_leaves_other_toxics_alone(cluster):
    undo = Undo()
    proxy = cluster.proxies[1]
    proxy.add_toxic(name="users_own", type="slow_close", stream="downstream", attributes={"delay": 1})
    fault = Latency(worker=1, latency_ms=50, stream="downstream")
    fault.inject(cluster, undo)
    assert sorted(proxy.toxics()) == ["chaos_latency_downstream", "users_own"]
    undo(cluster)
    assert sorted(proxy.toxics()) == ["users_own"]


def test_heal_of_a_toxic_fault_never_injected_is_fine(cluster):
    undo = Undo()
    for _fault in (
        Latency(worker=1, latency_ms=5),
        Bandwidth(worker=1, rate_kbps=800),
        BlockedPort(worker=1, mode="blackholed"),
    ):
        undo(cluster)
    assert not any(call[1] == "destroy_toxic" for call in cluster.calls if len(call) > 1)


def test_heal_after_a_half_injection_removes_what_was_added(cluster):
    undo = Undo()
    proxy = cluster.proxies[1]
    proxy.add_toxic(name="chaos_latency_downstream", type="latency", stream="downstream")  # makes inject fail midway
    fault = Latency(worker=1, latency_ms=5)
    with pytest.raises(Exception):  # noqa: B017 - whatever the proxy client raises for the clash
        fault.inject(cluster, undo)
    undo(cluster)
    assert proxy.toxics() == {}


def test_bandwidth_converts_kilobits_to_toxiproxy_kilobytes(cluster):
    undo = Undo()
    Bandwidth(worker=1, rate_kbps=800).inject(cluster, undo)
    toxics = cluster.proxies[1].toxics()
    assert {t.type for t in toxics.values()} == {"bandwidth"}
    assert all(t.attributes == {"rate": 100} for t in toxics.values())


def test_partition_disconnects_and_reconnects_once(cluster):
    undo = Undo()
    fault = Partition(worker=1)
    undo(cluster)
    fault.inject(cluster, undo)
    assert cluster.disconnected == {1}
    undo(cluster)
    undo(cluster)
    assert cluster.calls == [("disconnect", 1), ("reconnect", 1)]


@pytest.mark.parametrize(
    "name, take, give_back, taken",
    [
        ("node_lost", "lose_node", "restore_node", "lost_nodes"),
        ("node_drained", "drain_node", "activate_node", "drained_nodes"),
    ],
)
def test_a_node_fault_takes_the_workers_node_and_gives_that_node_back_once(cluster, name, take, give_back, taken):
    undo = Undo()
    FAULTS.get(name)(worker=1).inject(cluster, undo)
    assert getattr(cluster, taken) == {"node-of-worker-1"}
    undo(cluster)
    undo(cluster)
    assert cluster.calls == [(take, 1), (give_back, "node-of-worker-1")] and not getattr(cluster, taken)


def test_inject_and_heal_events_name_the_fault_its_target_and_params():
    fault = Latency(worker=1, latency_ms=100)
    inject = fault.inject_event(12.5)
    assert (inject.fault, inject.target, inject.t, inject.source) == ("latency", "worker-1", 12.5, "runner")
    assert inject.params == {"worker": 1, "latency_ms": 100, "jitter_ms": 0, "stream": "both"}
    heal = fault.heal_event(13.0)
    assert (heal.fault, heal.target) == ("latency", "worker-1")


def test_faults_are_frozen_values():
    fault = KillWorker(worker=1)
    with pytest.raises(ValidationError):
        fault.worker = 0  # type: ignore[misc]
    assert fault == KillWorker(worker=1, signal="SIGKILL")


def test_registry_lists_every_fault_with_documented_params():
    assert FAULTS.names() == [
        "kill_worker",
        "preempt_worker",
        "pause_worker",
        "blocked_port",
        "latency",
        "bandwidth",
        "partition",
        "connection_reset",
        "stream_cut",
        "slow_close",
        "sliced",
        "blackhole",
        "packet_loss",
        "packet_corrupt",
        "packet_duplicate",
        "packet_reorder",
        "packet_delay",
        "silent_drop",
        "syn_drop",
        "mtu_blackhole",
        "version_skew",
        "reused_seed",
        "tf_config",
        "corrupt_checkpoint",
        "stale_checkpoint",
        "checkpoint_disk_full",
        "slow_checkpoint_storage",
        "kill_during_save",
        "seed_skew",
        "batch_size_skew",
        "poison_input",
        "device_oom",
        "host_oom",
        "cpu_throttle",
        "node_lost",
        "node_drained",
        "node_link",
    ]
    for cls in FAULTS:
        assert one_line(cls)
        assert all(p.doc for p in params_of(cls)), cls.name
    rows = {p.name: p for p in params_of(Latency)}
    assert rows["jitter_ms"].default == 0 and not rows["jitter_ms"].required
    assert rows["latency_ms"].required


def test_the_once_planned_faults_are_implemented_and_unknown_names_get_a_suggestion():
    for name in ("version_skew", "device_oom", "host_oom", "reused_seed", "cpu_throttle"):
        assert FAULTS.get(name).name == name
    assert FAULTS.planned == {}
    with pytest.raises(ScenarioError, match="did you mean 'latency'"):
        FAULTS.get("latncy")
    with pytest.raises(ScenarioError, match="did you mean 'cpu_throttle'"):
        FAULTS.get("cpu_throtle")


def test_preempt_worker_stops_the_worker_with_its_grace_and_heals_to_nothing():
    undo = Undo()
    cluster = FakeCluster()
    fault = PreemptWorker(worker=1, grace_s=5)
    fault.inject(cluster, undo)
    undo(cluster)
    assert cluster.calls == [("preempt", 1, 5)]
    assert PreemptWorker(worker=0).grace_s == 30  # Kubernetes' default


@pytest.mark.parametrize("grace_s", [-1, 601])
def test_preempt_worker_refuses_a_grace_out_of_range(grace_s):
    with pytest.raises(ValidationError) as info:
        PreemptWorker(worker=1, grace_s=grace_s)
    assert "grace_s" in str(info.value)


# --- inject returns its undo (chaos.faults.undo) ----------------------------------------------


def test_inject_returns_what_undoes_it_and_undoing_twice_does_nothing_more(cluster):
    undo = PauseWorker(worker=1).inject(cluster)
    assert cluster.paused == {1}
    undo(cluster)
    undo(cluster)
    assert cluster.calls == [("pause", 1), ("unpause", 1)]


def test_undo_goes_in_reverse_order_of_the_steps(cluster):
    undo = Undo()
    Partition(worker=0).inject(cluster, undo)
    PauseWorker(worker=1).inject(cluster, undo)
    undo(cluster)
    assert cluster.calls[-2:] == [("unpause", 1), ("reconnect", 0)]


def test_a_fault_written_as_inject_and_heal_has_its_heal_for_undo(cluster):
    from typing import ClassVar

    from chaos.faults.base import WorkerFault

    class OldStyle(WorkerFault):  # a plugin's, written before inject returned its undo
        name: ClassVar[str] = "old_style"

        def inject(self, cluster):
            cluster.signal(self.worker, "SIGSTOP")

        def heal(self, cluster):
            cluster.signal(self.worker, "SIGCONT")

    undo = OldStyle(worker=1).inject(cluster)
    undo(cluster)
    assert cluster.calls == [("signal", 1, "SIGSTOP"), ("signal", 1, "SIGCONT")]


def test_built_in_faults_are_values_that_keep_no_state_of_their_inject():
    stateful = {cls.__module__ for cls in FAULTS if cls.__private_attributes__}
    assert stateful <= {"chaos.faults.packet"}, stateful  # packet.py: still inject + heal (issue 26)
