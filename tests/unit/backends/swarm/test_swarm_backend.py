"""The Swarm backend against a fake swarm at the SDK boundary (fake_swarm.py):
placement, the services it asks for (constraints, network, env, mounts, labels),
what reaches a task's container through its node's engine, restarts, teardown,
and the abilities it serves, by type (the others refused before anything starts)."""

from __future__ import annotations

import json

import pytest
from docker.types import Mount
from fake_swarm import FakeProxies, FakeSwarm, node_attrs, services, wait_for
from fake_swarm import make_cluster as make

from chaos import LABEL_PROJECT, LABEL_RUN, PROJECT
from chaos.backends.abilities import (
    CheckpointDamage,
    CheckpointFill,
    CheckpointListing,
    CheckpointSnapshots,
    Freezing,
    NamespacesAhead,
    NodeDrain,
    NodeLinks,
    NodeLoss,
    OrchestratorRestarts,
    PacketNamespaces,
    Partitions,
    ProxyLinks,
    ResourceLimits,
    RestartsAhead,
    SpareAddresses,
    StorageWriteLimits,
    UnsupportedVerb,
    WorkerCommands,
    WorkerOverrides,
    serves,
    verbs,
)
from chaos.backends.docker.ownership import LABEL_OWNER, LABEL_SESSION
from chaos.backends.spec import Limits
from chaos.backends.swarm import cluster as swarm_cluster
from chaos.backends.swarm import specs
from chaos.backends.swarm.backend import SwarmBackend
from chaos.backends.swarm.cluster import SwarmCluster
from chaos.backends.swarm.placement import Node, place
from chaos.errors import InfrastructureError
from chaos.events import AddressEvent, ExitEvent, NoticeEvent, RestartEvent
from chaos.topology import PROXY_API_PORT

WORKER = "tfchaos/worker:tf2.20"
PROXY = "tfchaos/proxy:latest"


def nodes(*specs_):
    return [Node.of(node_attrs(*s)) for s in specs_]


# --- placement --------------------------------------------------------------------------


def test_two_workers_go_to_the_two_worker_nodes_and_the_proxy_to_the_manager():
    p = place(nodes(("node-1", "manager"), ("node-2",), ("node-3",)), 2)
    assert p.workers == ("node-2", "node-3") and p.proxy == "node-1" and p.spread


def test_more_workers_than_nodes_go_round_robin_worker_nodes_first():
    p = place(nodes(("node-1", "manager"), ("node-3",), ("node-2",)), 4)
    assert p.workers == ("node-2", "node-3", "node-1", "node-2") and not p.spread


def test_nodes_not_ready_or_drained_get_no_worker():
    p = place(
        nodes(("node-1", "manager"), ("node-2", "worker", "down"), ("node-3", "worker", "ready", "drain"), ("node-4",)),
        2,
    )
    assert p.workers == ("node-4", "node-1")


def test_a_one_node_swarm_holds_everything():
    p = place(nodes(("node-1", "manager")), 2)
    assert p.workers == ("node-1", "node-1") and p.proxy == "node-1"


FIVE = (("node-1", "manager"), ("node-2",), ("node-3",), ("node-4",), ("node-5",))


def test_runs_side_by_side_go_to_the_nodes_with_fewest_workers_of_other_runs():
    """`chaos run -j N --backend swarm`: a second run's workers avoid the first's nodes."""
    p = place(nodes(*FIVE), 2, busy={"node-2": 1, "node-3": 1})
    assert p.workers == ("node-4", "node-5") and p.proxy == "node-1"
    p = place(nodes(*FIVE), 2, busy={"node-2": 1, "node-3": 1, "node-4": 1, "node-5": 1})
    assert p.workers == ("node-2", "node-3")  # worker nodes all busy alike: still never the manager first


def test_the_manager_is_last_however_busy_the_worker_nodes_are():
    p = place(nodes(("node-1", "manager"), ("node-2",), ("node-3",)), 2, busy={"node-2": 3, "node-3": 2})
    assert p.workers == ("node-3", "node-2")


def test_the_cluster_counts_the_workers_other_runs_have_on_each_node(monkeypatch):
    swarm = FakeSwarm(nodes=[node_attrs(*n) for n in FIVE])
    monkeypatch.setattr(swarm_cluster, "ProxyClient", FakeProxies)
    monkeypatch.setattr(swarm_cluster.requests, "get", lambda url, timeout: type("R", (), {"ok": True})())
    first = make(swarm)
    first.start_infrastructure()
    first.start_workers()
    second = make(swarm)
    second.start_infrastructure()
    assert second._workers_per_node() == {h: 1 for h in first.placement.workers}
    assert not set(second.placement.workers) & set(first.placement.workers)  # the other two worker nodes
    for service in services(swarm, "worker"):
        service.container.exit(0)  # the first run's workers are done: their nodes are free again
    first.teardown()
    second.teardown()
    third = make(swarm)
    third.start_infrastructure()
    assert third._workers_per_node() == {} and third.placement.workers == ("node-2", "node-3")
    third.teardown()


def test_runs_of_one_process_placed_together_see_each_other_before_their_workers_are_up(monkeypatch):
    """`chaos run -j 2`: both runs place before either has a worker task on the swarm."""
    swarm = FakeSwarm(nodes=[node_attrs(*n) for n in FIVE])
    monkeypatch.setattr(swarm_cluster, "ProxyClient", FakeProxies)
    monkeypatch.setattr(swarm_cluster.requests, "get", lambda url, timeout: type("R", (), {"ok": True})())
    a, b = make(swarm), make(swarm)
    a.start_infrastructure()
    b.start_infrastructure()
    assert a.placement.workers == ("node-2", "node-3") and b.placement.workers == ("node-4", "node-5")
    a.teardown()
    c = make(swarm)
    c.start_infrastructure()
    assert c.placement.workers == ("node-2", "node-3")  # a's nodes are free again; b's are not
    b.teardown()
    c.teardown()


def test_a_managers_address_comes_from_its_raft_address_when_its_status_says_0_0_0_0():
    attrs = node_attrs("node-1", "manager", addr="0.0.0.0")
    attrs["ManagerStatus"] = {"Addr": "172.30.0.7:2377", "Leader": True}
    assert Node.of(attrs).addr == "172.30.0.7"
    assert Node.of(node_attrs("node-2", addr="172.30.0.2")).addr == "172.30.0.2"


def test_no_usable_node_is_an_error_naming_each_node_and_a_hint():
    with pytest.raises(InfrastructureError) as err:
        place(nodes(("node-1", "manager", "down"), ("node-2", "worker", "ready", "drain")), 2)
    assert "node-1 down/active" in err.value.message and "node-2 ready/drain" in err.value.message
    assert "docker node update --availability active" in err.value.hint


# --- service specs -------------------------------------------------------------------------

LABELS = specs.run_labels("abc12345", {LABEL_OWNER: "h:1:2", LABEL_SESSION: "s"})


def test_a_worker_service_is_pinned_to_its_node_on_the_runs_overlay_with_the_store_at_its_checkpoint_dir():
    spec = specs.worker_service(
        name="tfchaos-abc12345-worker-1-g0",
        worker="worker-1",
        index=1,
        image=WORKER,
        env={"TF_CONFIG": "{}", "B": "2"},
        args=None,
        network="tfchaos-abc12345",
        node="node-3",
        store_dir="/mnt/tfchaos-store/tfchaos-abc12345",
        checkpoint_dir="/backup",
        labels=LABELS,
        limits=Limits(cpus=0.5, memory_bytes=1 << 30),
    )
    assert spec["constraints"] == ["node.hostname==node-3"]
    assert [(n["Target"], n["Aliases"]) for n in spec["networks"]] == [("tfchaos-abc12345", ["worker-1"])]
    assert spec["endpoint_spec"] == {"Mode": "dnsrr"}
    assert spec["restart_policy"]["Condition"] == "none"
    assert spec["mode"] == {"replicated": {"Replicas": 1}}
    assert spec["mounts"] == [Mount(target="/backup", source="/mnt/tfchaos-store/tfchaos-abc12345", type="bind")]
    assert spec["env"] == ["B=2", "TF_CONFIG={}"]
    assert spec["init"] is True and "command" not in spec and "args" not in spec  # the image's entrypoint and CMD
    for labels in (spec["labels"], spec["container_labels"]):
        assert labels[LABEL_PROJECT] == PROJECT and labels[LABEL_RUN] == "abc12345"
        assert labels[LABEL_OWNER] == "h:1:2" and labels["io.tfchaos.role"] == "worker"
        assert labels["io.tfchaos.worker"] == "1"
    assert spec["resources"] == {"Limits": {"NanoCPUs": 500_000_000, "MemoryBytes": 1 << 30}}


def test_a_jobs_command_is_the_tasks_cmd_not_its_entrypoint():
    spec = specs.worker_service(
        name="n",
        worker="worker-0",
        index=0,
        image=WORKER,
        env={},
        args=["python", "t.py"],
        network="net",
        node="node-2",
        store_dir="/s/r",
        checkpoint_dir="/ckpt",
        labels=LABELS,
    )
    assert spec["args"] == ["python", "t.py"] and "command" not in spec and "resources" not in spec


def test_the_proxy_publishes_its_api_in_host_mode_on_its_node_as_proxy_on_the_overlay():
    spec = specs.proxy_service(
        name="tfchaos-abc12345-proxy", image=PROXY, network="tfchaos-abc12345", node="node-1", labels=LABELS
    )
    assert spec["constraints"] == ["node.hostname==node-1"]
    assert [(n["Target"], n["Aliases"]) for n in spec["networks"]] == [("tfchaos-abc12345", ["proxy"])]
    assert spec["endpoint_spec"] == {
        "Mode": "dnsrr",
        "Ports": [{"Protocol": "tcp", "TargetPort": PROXY_API_PORT, "PublishMode": "host"}],
    }
    assert spec["labels"]["io.tfchaos.role"] == "proxy"


def test_the_runs_overlay_is_attachable_with_the_swarms_mtu_and_labelled():
    spec = specs.overlay("tfchaos-abc12345", LABELS)
    assert spec["driver"] == "overlay" and spec["attachable"] is True
    assert spec["options"] == {"com.docker.network.driver.mtu": "1400"} and spec["labels"] == LABELS


# --- the cluster against a fake swarm ------------------------------------------------------------

# The ``swarm`` fixture: tests/unit/backends/swarm/conftest.py.


def test_bring_up_places_each_worker_on_its_own_node_and_says_where(swarm):
    with make(swarm) as cluster:
        cluster.start_workers()
        prefix = cluster.prefix
        assert [n.name for n in swarm.networks.live] == [prefix]
        [mkdir] = services(swarm, "helper")
        assert mkdir.spec["command"][-1] == f"/store/{prefix}" and mkdir.removed  # one-shot, removed
        assert mkdir.spec["mounts"] == [Mount(target="/store", source="/mnt/tfchaos-store", type="bind")]
        keepers = services(swarm, "keeper")  # each worker's node holds the overlay between generations
        assert sorted(k.node for k in keepers) == ["node-2", "node-3"]
        assert all(k.spec["networks"][0]["Target"] == prefix and not k.removed for k in keepers)
        [proxy] = services(swarm, "proxy")
        assert proxy.node == "node-1" and cluster.proxies.host == "172.30.0.1" and cluster.proxies.port == 30001
        workers = services(swarm, "worker")
        assert [(s.name, s.node) for s in workers] == [
            (f"{prefix}-worker-0-g0", "node-2"),
            (f"{prefix}-worker-1-g0", "node-3"),
        ]
        for i, s in enumerate(workers):
            env = dict(e.split("=", 1) for e in s.spec["env"])
            assert json.loads(env["TF_CONFIG"])["cluster"]["worker"] == ["proxy:23600", "proxy:23601"]
            assert json.loads(env["TF_CONFIG"])["task"] == {"type": "worker", "index": i}
            assert s.spec["mounts"][0]["Source"] == f"/mnt/tfchaos-store/{prefix}"
            assert s.spec["labels"][LABEL_RUN] == cluster.run_id
        assert set(cluster.proxies.routes) == {"worker-0", "worker-1"}
        assert wait_for(lambda: sum(isinstance(e, AddressEvent) for e in cluster.events.snapshot()) == 2)
        places = {e.task: e.node for e in cluster.events.snapshot() if isinstance(e, AddressEvent)}
        assert places == {"worker-0": "node-2", "worker-1": "node-3"}
        cluster.wait_started(timeout=5)


def test_a_kill_reaches_the_container_through_its_nodes_engine_and_its_exit_is_recorded(swarm):
    with make(swarm) as cluster:
        cluster.start_workers()
        cluster.signal(1, "SIGKILL")
        container = cluster.container(1)
        assert container.node == "node-3" and ("kill", "SIGKILL") in container.calls
        assert wait_for(lambda: any(isinstance(e, ExitEvent) for e in cluster.events.snapshot()))
        [exit_] = [e for e in cluster.events.snapshot() if isinstance(e, ExitEvent)]
        assert (exit_.source, exit_.exit_code) == ("worker-1", 137)
        cluster.pause(0)
        cluster.unpause(0)
        assert [c[0] for c in cluster.container(0).calls] == ["pause", "unpause"]


def test_a_container_the_engine_could_not_start_is_said_with_the_engines_error(swarm):
    with make(swarm) as cluster:
        cluster.start_workers()
        container = cluster.container(1)
        container.attrs["State"]["Error"] = "failed to create shim task: context deadline exceeded"
        container.exit(128)
        assert wait_for(lambda: any(isinstance(e, ExitEvent) for e in cluster.events.snapshot()))
        [notice] = [e for e in cluster.events.snapshot() if isinstance(e, NoticeEvent)]
        assert notice.topic == "task_failed"
        assert notice.text == (
            "worker-1 on node-3: its container did not start: failed to create shim task: context deadline exceeded"
        )


def test_a_restart_stops_the_old_task_and_starts_the_next_generation_on_the_same_node(swarm):
    with make(swarm) as cluster:
        cluster.start_workers()
        old = cluster.container(0)
        cluster.restart([0, 1], reason="worker-1 exited 137", grace_s=2)
        assert ("stop", 2) in old.calls
        assert f"{cluster.prefix}-worker-0-g0" in swarm.removed and f"{cluster.prefix}-worker-1-g0" in swarm.removed
        live = [(s.name, s.node) for s in services(swarm, "worker") if not s.removed]
        assert live == [(f"{cluster.prefix}-worker-0-g1", "node-2"), (f"{cluster.prefix}-worker-1-g1", "node-3")]
        restarts = [e.source for e in cluster.events.snapshot() if isinstance(e, RestartEvent)]
        assert restarts == ["worker-0", "worker-1"]
        assert cluster.container(0) is not old


def test_teardown_removes_every_service_the_overlay_and_the_store_folder_and_kills_first(swarm):
    cluster = make(swarm)
    with cluster:
        cluster.start_workers()
        containers = [cluster.container(0), cluster.container(1)]
        swarm.networks.live[0].remove_refusals = 2  # tasks still detaching
    assert all(("remove", True) in c.calls for c in containers)
    assert swarm.services.list(filters={"label": f"{LABEL_RUN}={cluster.run_id}"}) == []
    assert swarm.networks.live == [] and swarm.networks.removed == [cluster.prefix]
    [rm] = [s for s in services(swarm, "helper") if "rmtree" in s.spec["command"][2]]
    assert rm.spec["command"][-1] == f"/store/{cluster.prefix}" and rm.removed
    assert not [e for e in cluster.events.snapshot() if isinstance(e, NoticeEvent)]


def test_a_failed_bring_up_is_torn_down_too(swarm):
    swarm.images.tags.discard(PROXY)
    cluster = make(swarm)
    with pytest.raises(InfrastructureError) as err:
        cluster.__enter__()
    assert "tfchaos/proxy:latest" in err.value.message and "chaos swarm up --image" in err.value.hint
    assert swarm.networks.live == [] and swarm.services.list(filters={"label": f"{LABEL_RUN}={cluster.run_id}"}) == []


def test_an_engine_that_is_no_swarm_manager_is_refused_with_how_to_name_one():
    fake = FakeSwarm(manager=False)
    with pytest.raises(InfrastructureError) as err:
        SwarmBackend(manager=fake).check()
    assert "not a swarm manager" in err.value.message and "chaos swarm up" in err.value.hint


def test_a_partition_cuts_the_task_off_the_overlay_on_its_node_and_the_heal_attaches_it_again(swarm):
    with make(swarm) as cluster:
        cluster.start_workers()
        container = cluster.container(1)
        container.attrs["NetworkSettings"] = {"Networks": {cluster.network_name: {}}}
        cluster.disconnect(1)
        cluster.reconnect(1)
        cluster.reconnect(1)  # attached already: nothing more
        assert swarm.engines["node-3"].api.calls == [
            ("disconnect", container.id, cluster.network_name, True),
            ("connect", container.id, cluster.network_name, ["worker-1"]),
        ]
        assert swarm.engines["node-2"].api.calls == []


class JoinedHelper:
    """A packet fault's helper as chaos.backends.docker.netns.DockerNetns.join makes it."""

    def __init__(self, client, target, *, labels, prefix, image=None) -> None:
        self.client, self.target, self.labels, self.name = client, target, labels, f"{prefix}-netns"
        self.closed = False

    def is_running(self):
        return not self.closed

    def capabilities(self):
        return "probed"

    def close(self):
        self.closed = True


def test_a_packet_faults_helper_joins_the_task_on_its_node_and_goes_with_the_teardown(swarm, monkeypatch):
    from chaos.backends.docker import netns as docker_netns

    joined: list[JoinedHelper] = []
    monkeypatch.setattr(
        docker_netns.DockerNetns,
        "join",
        classmethod(lambda cls, *a, **kw: joined.append(JoinedHelper(*a, **kw)) or joined[-1]),
    )
    with make(swarm) as cluster:
        cluster.start_workers()
        cluster.netns_ahead(1)
        helper = cluster.netns(1)
        assert helper is joined[0]  # the one started ahead serves
        assert helper.client is swarm.engines["node-3"] and helper.target is cluster.container(1)
        assert helper.labels["io.tfchaos.run"] == cluster.run_id
        cluster.netns(0)
        assert joined[1].client is swarm.engines["node-2"]
        assert not any(h.closed for h in joined)
    assert all(h.closed for h in joined)


@pytest.mark.parametrize(
    "ability", [CheckpointDamage, CheckpointSnapshots, CheckpointFill, StorageWriteLimits, RestartsAhead]
)
def test_what_it_cannot_serve_yet_it_does_not_implement_no_stub_stands_in(swarm, ability):
    cluster = make(swarm)
    assert not serves(cluster, ability) and not serves(SwarmCluster, ability)
    assert not any(hasattr(cluster, verb) for verb in verbs(ability))


@pytest.mark.parametrize(
    "ability",
    [
        ProxyLinks,
        Partitions,
        PacketNamespaces,
        NamespacesAhead,
        Freezing,
        WorkerCommands,
        ResourceLimits,
        WorkerOverrides,
        SpareAddresses,
        CheckpointListing,
        NodeLoss,
        NodeDrain,
        NodeLinks,
        OrchestratorRestarts,
    ],
)
def test_what_it_serves_its_class_implements(ability):
    assert serves(SwarmCluster, ability) and issubclass(SwarmCluster, ability)


def test_a_size_limited_store_is_refused_before_anything_is_made(swarm):
    cluster = make(swarm, backup_volume_mb=8)
    with pytest.raises(UnsupportedVerb):
        cluster.__enter__()
    assert swarm.services.created == [] and swarm.networks.live == []


# --- refused before anything starts; the report says where it ran --------------------------------

CORRUPT = "scenarios/corrupt-checkpoint-fails-every-restore-until-restarts-run-out.yaml"
PACKET = "scenarios/packet-loss-5pct-on-one-worker-stretches-every-step-without-an-error.yaml"
KILLED = "scenarios/killed-worker-recovers-from-checkpoint.yaml"


def test_chaos_run_refuses_a_scenario_whose_fault_the_swarm_cannot_serve_before_any_engine_is_asked(
    capsys, monkeypatch
):
    import chaos.cli
    from chaos.runner import cli as run_cli

    # Where `chaos run` looks it up: patching chaos.runner.entries instead leaked into every later
    # test when this one imported chaos.runner.cli first (it bound the patched function for good).
    monkeypatch.setattr(run_cli, "backend_named", lambda name: pytest.fail("a backend was made"))
    assert chaos.cli.main(["run", KILLED, CORRUPT, "--backend", "swarm"]) == 2
    err = capsys.readouterr().err
    assert "1 of 2 scenarios cannot run on the swarm backend; nothing was run" in err
    assert "fault 1 (corrupt_checkpoint) needs damage_backup" in err and "--backend docker" in err
    assert "Traceback" not in err


def test_chaos_run_names_the_valid_backends(capsys):
    import chaos.cli

    assert chaos.cli.main(["run", KILLED, "--backend", "k8s"]) == 2
    err = capsys.readouterr().err
    assert "unknown backend 'k8s'; valid: docker, swarm" in err


def test_chaos_validate_with_the_swarm_backend_refuses_what_it_cannot_serve(capsys):
    import chaos.cli

    assert chaos.cli.main(["validate", KILLED, "--backend", "swarm"]) == 0
    assert chaos.cli.main(["validate", KILLED, CORRUPT, "--backend", "swarm"]) == 2
    out = capsys.readouterr().out
    assert "fault 1 (corrupt_checkpoint) needs damage_backup, which the swarm backend cannot do yet" in out
    assert "1 valid, 1 invalid" in out
    assert chaos.cli.main(["validate", CORRUPT]) == 0  # the default backend serves it
    assert chaos.cli.main(["validate", PACKET, "--backend", "swarm"]) == 0  # a helper joins the task on its node


def test_a_swarm_runs_report_reproduces_it_on_the_swarm():
    from chaos.report import build_report
    from chaos.report.model import Report
    from chaos.scenario.loader import load_many
    from chaos.timeline import Timeline

    [scenario], _ = load_many([KILLED])
    timeline = Timeline.from_events(scenario.run_info(), [])
    on_swarm = build_report(scenario, KILLED, [], timeline, backend="swarm")
    assert on_swarm.reproduce == f"chaos run {KILLED} --backend swarm"
    assert Report.from_dict(on_swarm.to_dict()).backend == "swarm"
    assert build_report(scenario, KILLED, [], timeline, backend="docker").reproduce == f"chaos run {KILLED}"
