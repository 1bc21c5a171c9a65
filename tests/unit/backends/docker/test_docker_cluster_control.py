"""The ClusterControl methods DockerCluster gained for the new faults, with a
fake Docker client and containers (no engine): overrides applied at the next
create, commands by exec, memory use, running state, restarts without grace."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from docker.errors import APIError, ImageNotFound, NotFound

from chaos.backends.docker import api as docker_api
from chaos.backends.docker import cluster as dc
from chaos.backends.docker import limits as docker_limits
from chaos.backends.docker.cluster import DockerCluster
from chaos.backends.spec import Deployment, Limits, WriteLimit
from chaos.errors import InfrastructureError
from chaos.events import ExitEvent, RestartEvent, StopEvent
from chaos.worker.control import MemoryDemand, control_file_script
from chaos.worker.settings import ENV_VAR, WorkerSettings

BASE = "tfchaos/worker:tf2.20"


class FakeContainer:
    def __init__(self, name="c", status="running", usage=None, exec_result=(0, b"")):
        self.name = name
        self.status = status
        self.gone = False
        self.usage = usage
        self.exec_result = exec_result
        self.calls: list[tuple] = []

    def reload(self):
        if self.gone:
            raise NotFound("no such container")

    @property
    def attrs(self):
        return {"State": {"Paused": self.status == "paused", "OOMKilled": False}}

    def stats(self, stream, one_shot):
        assert stream is False
        return {"memory_stats": {"usage": self.usage}} if self.usage is not None else {"memory_stats": {}}

    def exec_run(self, argv):
        self.calls.append(("exec_run", argv))
        code, output = self.exec_result
        return SimpleNamespace(exit_code=code, output=output)

    def update(self, **limits):
        self.calls.append(("update", limits))

    def stop(self, timeout):
        self.calls.append(("stop", timeout))

    def remove(self, force=False, v=False):
        self.calls.append(("remove", force, v))

    def start(self):
        self.calls.append(("start",))

    def wait(self):
        raise RuntimeError("removed")  # ends the exit watcher thread at once

    def logs(self, **kwargs):
        return iter(())


class FakeClient:
    def __init__(self, images=(BASE, "tfchaos/worker:tf2.15"), refuse_devices=()):
        self.images = SimpleNamespace(get=self._get_image)
        self.containers = SimpleNamespace(run=self._run)
        self._images = set(images)
        self.asked: list[str] = []
        self.runs: list[dict] = []
        self.refuse_devices = set(refuse_devices)  # as an engine in a container does: no node of its host's disks

    def _run(self, image, **kwargs):
        self.runs.append({"image": image, **kwargs})
        for limit in kwargs.get("device_write_bps") or []:
            if limit["Path"] in self.refuse_devices:
                raise APIError("500 Server Error", explanation=f"stat {limit['Path']}: no such file or directory")
        return b""

    def _get_image(self, tag):
        self.asked.append(tag)
        if tag not in self._images:
            raise ImageNotFound(f"no such image: {tag}")
        return SimpleNamespace(tags=[tag])


@pytest.fixture
def cluster():
    spec = Deployment(images=(BASE, BASE), proxy_image="tfchaos/proxy:latest", settings=WorkerSettings(epochs=3))
    c = DockerCluster(spec, client=FakeClient())
    c.network = SimpleNamespace(name="net")
    c.volume = SimpleNamespace(name="vol")
    return c


def attach(cluster, index, container, running=False):
    """A worker on a fake container; ``running``: its watcher has not seen it exit."""
    watcher = SimpleNamespace(join=lambda timeout: None, is_alive=lambda: running)
    follower = SimpleNamespace(join=lambda timeout: None)
    cluster.workers[index] = dc._Worker(index, 0, container, follower=follower, watcher=watcher)
    return container


# --- overrides --------------------------------------------------------------------


def test_override_changes_only_the_next_config_of_that_worker(cluster):
    cluster.override(1, "version_skew", image="tfchaos/worker:tf2.15", env={"LD_LIBRARY_PATH": "/x"})
    cluster.override(1, "reused_seed", settings={"shard_data": False})
    image, settings, env = cluster.worker_config(1)
    assert image == "tfchaos/worker:tf2.15" and env == {"LD_LIBRARY_PATH": "/x"}
    assert settings.shard_data is False and settings.epochs == 3  # the rest of the spec's settings kept
    assert cluster.worker_config(0) == (BASE, cluster.spec.settings, {})
    assert "tfchaos/worker:tf2.15" in cluster.client.asked


def test_clear_override_removes_only_its_owner_and_is_idempotent(cluster):
    cluster.override(1, "version_skew", env={"A": "1"})
    cluster.override(1, "reused_seed", settings={"shard_data": False})
    cluster.clear_override(1, "version_skew")
    cluster.clear_override(1, "version_skew")
    cluster.clear_override(0, "never_set")
    image, settings, env = cluster.worker_config(1)
    assert (image, env, settings.shard_data) == (BASE, {}, False)


def test_override_with_a_missing_image_fails_now_and_changes_nothing(cluster):
    with pytest.raises(InfrastructureError, match="'tfchaos/worker:tf2.11' is not built"):
        cluster.override(1, "version_skew", image="tfchaos/worker:tf2.11")
    assert cluster.worker_config(1)[0] == BASE


def test_override_with_an_unknown_setting_fails_now(cluster):
    with pytest.raises(TypeError):
        cluster.override(1, "reused_seed", settings={"shard_dta": False})
    assert cluster.overrides.get(1, {}) == {}


def test_a_started_worker_gets_the_overridden_image_env_and_settings(cluster, monkeypatch):
    created = []

    def create_container(client, image, **kwargs):
        created.append((image, kwargs))
        return FakeContainer(kwargs["name"])

    monkeypatch.setattr(docker_api, "create_container", create_container)
    cluster.override(1, "version_skew", image="tfchaos/worker:tf2.15", env={"LD_LIBRARY_PATH": "/x"})
    cluster.override(1, "reused_seed", settings={"shard_data": False})
    cluster._start_worker(0, generation=0)
    cluster._start_worker(1, generation=0)
    (image0, kw0), (image1, kw1) = created
    assert image0 == BASE and image1 == "tfchaos/worker:tf2.15"
    assert "LD_LIBRARY_PATH" not in kw0["environment"] and kw1["environment"]["LD_LIBRARY_PATH"] == "/x"
    assert json.loads(kw0["environment"][ENV_VAR])["shard_data"] is True
    assert json.loads(kw1["environment"][ENV_VAR])["shard_data"] is False
    # healed: the next generation is created as the spec says
    cluster.clear_override(1, "version_skew")
    cluster.clear_override(1, "reused_seed")
    cluster._start_worker(1, generation=1)
    image2, kw2 = created[-1]
    assert image2 == BASE and "LD_LIBRARY_PATH" not in kw2["environment"]
    assert json.loads(kw2["environment"][ENV_VAR])["shard_data"] is True


def test_restart_with_zero_grace_stops_at_once_and_records_restarts(cluster, monkeypatch):
    monkeypatch.setattr(docker_api, "create_container", lambda client, image, **kw: FakeContainer(kw["name"]))
    old = [attach(cluster, i, FakeContainer(f"old-{i}")) for i in range(2)]
    cluster.restart([0, 1], reason="redeploy: version_skew healed", grace_s=0)
    # force, and its anonymous volumes too
    assert [c.calls[:2] for c in old] == [[("stop", 0), ("remove", True, True)]] * 2
    restarts = [e for e in cluster.events.snapshot() if isinstance(e, RestartEvent)]
    assert [(e.source, e.reason) for e in restarts] == [
        ("worker-0", "redeploy: version_skew healed"),
        ("worker-1", "redeploy: version_skew healed"),
    ]
    assert [cluster.workers[i].generation for i in range(2)] == [1, 1]
    other = attach(cluster, 0, FakeContainer("other"))
    cluster.restart([0], reason="failed")
    assert other.calls[0] == ("stop", dc.STOP_GRACE_S)  # the default grace for a failure restart


def test_a_restart_says_which_workers_it_stops_while_they_still_run(cluster, monkeypatch):
    """Only a running worker's stop is the runner's doing: its stop event comes before its exit,
    so a reader of its log (chaos diagnose) does not take the SIGTERM/SIGKILL for the failure's."""
    monkeypatch.setattr(docker_api, "create_container", lambda client, image, **kw: FakeContainer(kw["name"]))
    attach(cluster, 0, FakeContainer("exited"), running=False)
    attach(cluster, 1, FakeContainer("lingering"), running=True)
    cluster.restart([0, 1], reason="worker-0 failed")
    kinds = [(e.kind, e.source) for e in cluster.events.snapshot() if isinstance(e, (StopEvent, RestartEvent))]
    assert kinds == [("stop", "worker-1"), ("restart", "worker-0"), ("restart", "worker-1")]
    (stop,) = [e for e in cluster.events.snapshot() if isinstance(e, StopEvent)]
    assert stop.reason == "worker-0 failed"


class ExitedContainer(FakeContainer):
    """Stopped: the engine answers its wait with its exit code."""

    def wait(self, timeout=None):
        return {"StatusCode": 137}


def test_an_exit_the_watcher_has_not_recorded_by_the_restart_is_recorded_before_it_once(cluster, monkeypatch):
    """A watcher slower than the restart's join (a loaded engine) recorded the old container's exit
    after the new generation started, whose runner then took its new workers for failed."""
    monkeypatch.setattr(docker_api, "create_container", lambda client, image, **kw: FakeContainer(kw["name"]))
    attach(cluster, 0, FakeContainer("exited"), running=False)
    attach(cluster, 1, ExitedContainer("killed"), running=True)  # its watcher is still waiting
    old = cluster.workers[1]
    cluster.restart([0, 1], reason="no progress for 30s")
    kinds = [(e.kind, e.source) for e in cluster.events.snapshot() if isinstance(e, (ExitEvent, RestartEvent))]
    assert kinds == [("exit", "worker-1"), ("restart", "worker-0"), ("restart", "worker-1")]
    cluster._record_exit(old, {"StatusCode": 137})  # the watcher, at last: said already
    exits = [e for e in cluster.events.snapshot() if isinstance(e, ExitEvent)]
    assert [(e.source, e.exit_code) for e in exits] == [("worker-1", 137)]


class JournalNetwork:
    """The run's network, writing what is done to it into the journal the containers write to."""

    name = "net"

    def __init__(self, journal: list[tuple]) -> None:
        self.journal = journal

    def disconnect(self, container, force=False):
        self.journal.append(("disconnect", container.name))

    def connect(self, container, aliases=()):
        self.journal.append(("connect", container.name, list(aliases)))


class StandbyContainer(FakeContainer):
    def __init__(self, name, journal):
        super().__init__(name)
        self.journal = journal

    def start(self):
        self.journal.append(("start", self.name))

    def put_archive(self, path, data):
        self.journal.append(("go file", self.name))

    def kill(self, signal):
        self.journal.append(("go", self.name))


def test_a_standby_starts_off_the_network_and_joins_it_as_the_worker_at_its_go(cluster, monkeypatch):
    """Docker hands a started container the lowest free address, and the MAC made from it: a standby
    started during a partition took the cut-off worker's, and its resets to the packets still sent
    there closed the chief's connection through the proxy (``Socket closed`` at +1.7 s, not the
    heartbeat timeout the partition scenario asserts)."""
    journal: list[tuple] = []
    cluster.network = JournalNetwork(journal)
    monkeypatch.setattr(
        docker_api, "create_container", lambda client, image, **kw: StandbyContainer(kw["name"], journal)
    )
    recipe = cluster._recipe(1)
    cluster._make_standby_containers({1: (1, recipe)})
    standby = cluster.standbys[1].container
    assert journal == [("disconnect", standby.name), ("start", standby.name)]  # no address while it waits
    journal.clear()
    assert cluster._take_standby(1, 1, recipe) is standby
    assert journal == [("connect", standby.name, ["worker-1"]), ("go file", standby.name), ("go", standby.name)]


# --- commands, resources, state -------------------------------------------------------


def test_command_writes_the_control_file_by_exec_with_a_new_seq_each_time(cluster):
    container = attach(cluster, 1, FakeContainer())
    cluster.command(1, MemoryDemand(2048, cap_mb=512))
    cluster.command(1, MemoryDemand(0))
    assert container.calls == [
        ("exec_run", control_file_script(1, "memory_demand", {"demand_mb": 2048, "cap_mb": 512})),
        ("exec_run", control_file_script(2, "memory_demand", {"demand_mb": 0, "cap_mb": None})),
    ]


def test_a_failed_command_is_an_infrastructure_error_naming_the_worker(cluster):
    attach(cluster, 1, FakeContainer(exec_result=(126, b"container is paused\n")))
    with pytest.raises(
        InfrastructureError, match=r"could not send 'memory_demand' to worker-1: exit 126: container is paused"
    ):
        cluster.command(1, MemoryDemand(1))


def test_memory_usage_reads_the_cgroup_usage_or_says_the_worker_is_not_running(cluster):
    attach(cluster, 0, FakeContainer(usage=123_456_789))
    attach(cluster, 1, FakeContainer(usage=None))
    assert cluster.memory_usage(0) == 123_456_789
    with pytest.raises(InfrastructureError, match="worker-1 is not running"):
        cluster.memory_usage(1)


def test_is_running_is_false_for_exited_paused_or_removed_containers(cluster):
    container = attach(cluster, 1, FakeContainer(status="running"))
    assert cluster.is_running(1)
    for status in ("exited", "paused", "created"):
        container.status = status
        assert not cluster.is_running(1), status
    container.status = "running"
    container.gone = True
    assert not cluster.is_running(1)


def test_cpu_limits_are_a_cfs_quota_per_short_period_never_below_dockers_minimum(cluster):
    container = attach(cluster, 1, FakeContainer())
    cluster.limit_cpu(1, 0.5)
    cluster.limit_cpu(1, 0.01)
    assert container.calls == [
        ("update", {"cpu_period": 10_000, "cpu_quota": 5_000}),
        ("update", {"cpu_period": 10_000, "cpu_quota": 1_000}),
    ]


def test_memory_limits_leave_no_swap_to_escape_into(cluster):
    container = attach(cluster, 1, FakeContainer())
    cluster.limit_memory(1, 300 << 20)
    assert container.calls == [("update", {"mem_limit": 300 << 20, "memswap_limit": 300 << 20})]


def test_restoring_a_limit_of_a_worker_created_without_one_lifts_it(cluster):
    container = attach(cluster, 1, FakeContainer())
    cluster.restore_cpu(1)
    cluster.restore_memory(1)
    # Docker cannot remove a memory limit from a running container: out of reach instead.
    assert container.calls == [
        ("update", {"cpu_quota": -1}),
        ("update", {"mem_limit": docker_limits.UNLIMITED_MEMORY, "memswap_limit": -1}),
    ]
    assert docker_limits.UNLIMITED_MEMORY >= 1 << 40


def test_restoring_goes_back_to_the_limits_the_scenario_created_the_worker_with():
    spec = Deployment(
        images=(BASE, BASE),
        proxy_image="tfchaos/proxy:latest",
        resources={1: Limits(cpus=1.5, memory_bytes=4096 << 20)},
    )
    cluster = DockerCluster(spec, client=FakeClient())
    container = attach(cluster, 1, FakeContainer())
    cluster.restore_cpu(1)
    cluster.restore_memory(1)
    assert container.calls == [
        ("update", {"cpu_period": 10_000, "cpu_quota": 15_000}),
        ("update", {"mem_limit": 4096 << 20, "memswap_limit": 4096 << 20}),
    ]


def test_a_write_limit_is_set_when_the_worker_is_created(cluster):
    cluster.limit_writes(0, "slow_checkpoint_storage", WriteLimit("/dev/vda", iops=10, bytes_per_s=256 * 1024))
    assert cluster._limits(0) == {
        "device_write_iops": [{"Path": "/dev/vda", "Rate": 10}],
        "device_write_bps": [{"Path": "/dev/vda", "Rate": 256 * 1024}],
    }
    assert cluster._limits(1) == {}
    cluster.clear_override(0, "slow_checkpoint_storage")
    assert cluster._limits(0) == {}
    # The engine was asked once whether it can throttle that device, by a helper with the limit.
    cluster.limit_writes(1, "slow_checkpoint_storage", WriteLimit("/dev/vda", iops=10))
    helpers = [r for r in cluster.client.runs if r.get("device_write_bps")]
    assert len(helpers) == 1 and helpers[0]["device_write_bps"][0]["Path"] == "/dev/vda"
    assert helpers[0]["remove"] is True and helpers[0]["labels"]["io.tfchaos.role"] == "helper"


def test_an_engine_that_cannot_throttle_the_device_is_a_clear_error_before_any_worker_has_the_limit():
    # Measured on a dind engine (DOCKER_HOST=tcp://...): every container with the limit was refused
    # at start with `stat /dev/vda: no such file or directory`, and the run broke at the redeploy.
    spec = Deployment(images=(BASE, BASE), proxy_image="tfchaos/proxy:latest", settings=WorkerSettings(epochs=3))
    c = DockerCluster(spec, client=FakeClient(refuse_devices={"/dev/vda"}))
    with pytest.raises(InfrastructureError) as err:
        c.limit_writes(0, "slow_checkpoint_storage", WriteLimit("/dev/vda", iops=10))
    assert "cannot limit writes to /dev/vda (slow_checkpoint_storage): stat /dev/vda: no such file" in err.value.message
    assert "Docker in Docker" in err.value.hint
    assert c._limits(0) == {}  # nothing set: no worker is created with a limit its engine refuses


def test_proxy_clients_of_clusters_side_by_side_each_reach_their_own_api(monkeypatch):
    """toxiproxy-python reads its API address from class attributes at every
    request: two scenarios in threads must not send each other's requests."""
    import threading

    from toxiproxy.api import APIConsumer

    from chaos.backends.proxy_client import BoundProxy, ProxyClient

    seen = []

    class FakeProxy:
        name = "worker-1"

        def disable(self):
            seen.append(("disable", APIConsumer.port))

    a, b = ProxyClient("127.0.0.1", 1111), ProxyClient("127.0.0.1", 2222)
    proxies = [BoundProxy(a, FakeProxy()), BoundProxy(b, FakeProxy())]

    def hammer(proxy):
        for _ in range(200):
            proxy.disable()

    threads = [threading.Thread(target=hammer, args=(p,)) for p in proxies]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(set(seen)) == [("disable", 1111), ("disable", 2222)]
    assert seen.count(("disable", 1111)) == 200 and proxies[0].name == "worker-1"
