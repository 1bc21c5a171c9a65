"""Standby workers (chaos.backends.docker.standby, chaos.worker.standby): a container
made ahead serves only when it was created exactly as a fresh one would be;
its go file carries only what the harness reads after importing TensorFlow."""

from __future__ import annotations

import io
import json
import os
import tarfile

import pytest

from chaos.backends.docker import api as docker_api
from chaos.backends.docker.cluster import DockerCluster
from chaos.backends.docker.standby import ACTIVE_CPU_SHARES, GO_FILE, STANDBY_CPU_SHARES, Recipe, go_archive
from chaos.backends.spec import Deployment
from chaos.worker import standby as worker_standby
from chaos.worker.settings import ENV_VAR, WorkerSettings
from chaos.worker.standby import LATE_ENV, STANDBY_ENV
from tests.unit.backends.docker.test_docker_cluster_control import BASE, FakeClient, FakeContainer

ENV = {"TF_CONFIG": "{}", ENV_VAR: "{}", "CHAOS_WORKER_INDEX": "1", "LD_LIBRARY_PATH": "/x"}


def test_a_recipe_serves_another_that_differs_only_in_what_the_go_file_carries():
    made = Recipe.of(BASE, ENV, {"mem_limit": 1 << 30}, None)
    assert made.serves(
        Recipe.of(BASE, {**ENV, "TF_CONFIG": '{"task": 1}', ENV_VAR: '{"seed": 7}'}, {"mem_limit": 1 << 30}, None)
    )
    # Anything TensorFlow's import or the container itself sees must be equal.
    assert not made.serves(Recipe.of("tfchaos/worker:tf2.15", ENV, {"mem_limit": 1 << 30}, None))
    assert not made.serves(Recipe.of(BASE, {**ENV, "LD_LIBRARY_PATH": "/y"}, {"mem_limit": 1 << 30}, None))
    assert not made.serves(Recipe.of(BASE, {**ENV, "TF_ENABLE_ONEDNN_OPTS": "0"}, {"mem_limit": 1 << 30}, None))
    assert not made.serves(Recipe.of(BASE, ENV, {"mem_limit": 2 << 30}, None))
    assert not made.serves(Recipe.of(BASE, ENV, {"mem_limit": 1 << 30}, ["python", "x.py"]))


def test_a_standby_is_created_at_the_lowest_cpu_weight_with_no_late_keys_and_its_go_path():
    recipe = Recipe.of(BASE, ENV, {"cpu_quota": 2000}, None)
    env = recipe.standby_env()
    assert not set(env) & LATE_ENV and env["LD_LIBRARY_PATH"] == "/x" and env[STANDBY_ENV].endswith(GO_FILE)
    assert recipe.standby_resources() == {"cpu_quota": 2000, "cpu_shares": STANDBY_CPU_SHARES}


def test_the_go_archive_holds_one_readable_json_file():
    with tarfile.open(fileobj=io.BytesIO(go_archive({"TF_CONFIG": "{}"}))) as tar:
        (member,) = tar.getmembers()
        assert member.name == GO_FILE and member.mode == 0o644
        assert json.load(tar.extractfile(member)) == {"TF_CONFIG": "{}"}


def test_the_worker_imports_first_then_waits_for_the_go_and_takes_its_environment(tmp_path, monkeypatch):
    go = tmp_path / GO_FILE
    order = []
    polls = []

    def wait():
        polls.append(1)
        if len(polls) == 3:
            go.write_text("{not json")  # a write in progress: read again
        if len(polls) == 5:
            go.write_text(json.dumps({"TF_CONFIG": '{"task": {"index": 1}}'}))

    monkeypatch.delenv("TF_CONFIG", raising=False)
    env = worker_standby.wait_for_go(str(go), preload=lambda: order.append("import"), wait=wait)
    assert order == ["import"] and len(polls) == 5
    assert env == {"TF_CONFIG": '{"task": {"index": 1}}'} and os.environ["TF_CONFIG"] == env["TF_CONFIG"]


def test_a_go_file_that_sets_anything_else_stops_the_worker(tmp_path):
    go = tmp_path / GO_FILE
    go.write_text(json.dumps({"LD_LIBRARY_PATH": "/y"}))
    with pytest.raises(SystemExit, match="LD_LIBRARY_PATH"):
        worker_standby.read_go(str(go))


class StandbyContainer(FakeContainer):
    def kill(self, signal):
        self.calls.append(("kill", signal))

    def put_archive(self, path, data):
        self.calls.append(("put_archive", path, data))
        return True


class FakeNetwork:
    name = "net"

    def __init__(self):
        self.calls = []

    def disconnect(self, container, force=False):
        self.calls.append(("disconnect", container.name))

    def connect(self, container, aliases):
        self.calls.append(("connect", container.name, tuple(aliases)))


@pytest.fixture
def cluster(monkeypatch):
    created = []

    def create_container(client, image, **kwargs):
        container = StandbyContainer(kwargs["name"])
        created.append((container, kwargs))
        return container

    monkeypatch.setattr(docker_api, "create_container", create_container)
    spec = Deployment(images=(BASE, BASE), proxy_image="p", settings=WorkerSettings(epochs=3), standby=True)
    c = DockerCluster(spec, client=FakeClient())
    c.network = FakeNetwork()
    c.volume = type("V", (), {"name": "vol"})()
    c.created = created
    return c


def _made(cluster):
    for maker in cluster._standby_makers:
        maker.join()
    return cluster.created


def test_a_restart_takes_the_standby_made_after_the_last_start(cluster):
    for i in range(2):
        cluster._start_worker(i, 0)
    cluster._make_standbys([0, 1])
    made = _made(cluster)
    standbys = [(c, kw) for c, kw in made if kw["labels"]["io.tfchaos.role"] == "standby"]
    assert [kw["name"].rsplit("-", 1)[-1] for _, kw in standbys] == ["g1", "g1"]
    for _, kw in standbys:
        assert kw["aliases"] == [] and kw["resources"]["cpu_shares"] == STANDBY_CPU_SHARES
        assert ENV_VAR not in kw["environment"] and "TF_CONFIG" not in kw["environment"]
    cluster.override(1, "reused_seed", settings={"shard_data": False})  # late: the standby still serves
    before = len(made)
    cluster.restart([0, 1], reason="failed", grace_s=0)
    fresh = [kw["name"] for _, kw in made[before:] if kw["labels"]["io.tfchaos.role"] == "worker"]
    assert fresh == []  # both came from standbys
    standby1 = standbys[1][0]
    assert cluster.workers[1].container is standby1
    assert ("disconnect", standby1.name) in cluster.network.calls
    assert ("connect", standby1.name, ("worker-1",)) in cluster.network.calls
    assert ("update", {"cpu_shares": ACTIVE_CPU_SHARES}) in standby1.calls
    ((_, path, data),) = [c for c in standby1.calls if c[0] == "put_archive"]
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        late = json.load(tar.extractfile(GO_FILE))
    assert json.loads(late[ENV_VAR])["shard_data"] is False and set(late) <= LATE_ENV
    # The order that keeps the worker unreachable until it is the worker: network, weight, go.
    kinds = [c[0] for c in standby1.calls]
    assert kinds.index("update") < kinds.index("put_archive") < kinds.index("kill")
    assert ("kill", "SIGWINCH") in standby1.calls  # it sleeps until signalled


def test_a_standby_made_for_another_image_is_removed_and_a_fresh_worker_created(cluster):
    for i in range(2):
        cluster._start_worker(i, 0)
    cluster._make_standbys([0, 1])
    made = _made(cluster)
    stale = made[-1][0]
    cluster.override(1, "version_skew", image="tfchaos/worker:tf2.15")
    before = len(made)
    cluster.restart([1], reason="redeploy", grace_s=0)
    assert ("remove", True, True) in stale.calls
    (fresh, kw), *_ = made[before:]
    assert kw["labels"]["io.tfchaos.role"] == "worker" and kw["aliases"] == ["worker-1"]
    assert cluster.workers[1].container is fresh and ("start",) in fresh.calls


def test_no_standby_once_teardown_began(cluster):
    cluster._closing = True
    cluster._make_standbys([0, 1])
    assert _made(cluster) == []


def test_no_standby_for_a_users_job_or_a_run_that_never_restarts(cluster):
    import dataclasses

    from chaos.workload.launch import Launch

    cluster.spec = dataclasses.replace(cluster.spec, launch=Launch(harness_settings=False))
    cluster._make_standbys([0, 1])
    cluster.spec = dataclasses.replace(cluster.spec, launch=Launch(), standby=False)
    cluster._make_standbys([0, 1])
    assert _made(cluster) == []


def test_once_no_restart_is_expected_the_restart_still_takes_its_standbys_and_none_is_made_after(cluster):
    for i in range(2):
        cluster._start_worker(i, 0)
    cluster._make_standbys([0, 1])
    made = list(_made(cluster))
    standbys = [c for c, kw in made if kw["labels"]["io.tfchaos.role"] == "standby"]
    cluster.expect_restarts(False)  # said just before the last restart
    cluster.restart([1], reason="failed", grace_s=0)
    assert cluster.workers[1].container is standbys[1]  # it served
    assert ("remove", True, True) in standbys[0].calls and cluster.standbys == {}  # the idle one went
    assert len(_made(cluster)) == len(made)  # and no new one was made
    cluster.restart([0, 1], reason="failed again", grace_s=0)  # restarted all the same, from fresh containers
    fresh = _made(cluster)[len(made) :]
    assert [kw["labels"]["io.tfchaos.role"] for _, kw in fresh] == ["worker", "worker"]


def test_workers_and_standbys_mount_their_images_venv_read_only_where_wanted(cluster, monkeypatch):
    from chaos.backends.docker import venv_cache

    asked = []
    monkeypatch.setattr(venv_cache, "venv_volume", lambda client, image: asked.append(image) or f"venv-of-{image}")
    cluster._venv_wanted = True
    cluster._start_worker(0, 0)
    cluster._make_standbys([0])
    made = _made(cluster)
    assert [kw["readonly_volumes"] for _, kw in made] == [{f"venv-of-{BASE}": "/opt/venv"}] * 2
    assert asked == [BASE]  # filled or found once per image


def test_the_go_signal_wakes_a_waiting_standby_at_once(tmp_path):
    import signal
    import threading
    import time

    go = tmp_path / GO_FILE
    main = threading.get_ident()

    def runner_says_go():
        go.write_text(json.dumps({"TF_CONFIG": "{}"}))
        signal.pthread_kill(main, worker_standby.GO_SIGNAL)

    worker_standby.hold_go_signal()
    try:
        threading.Timer(0.1, runner_says_go).start()
        started = time.monotonic()
        assert worker_standby.wait_for_go(str(go), preload=lambda: None) == {"TF_CONFIG": "{}"}
        assert time.monotonic() - started < worker_standby.LOOK_S  # woken, not found by the next look
    finally:
        signal.sigtimedwait({worker_standby.GO_SIGNAL}, 0)  # none should be left, but never deliver one to pytest
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {worker_standby.GO_SIGNAL})


def test_limits_reach_docker_as_they_came_lists_of_dicts_included():
    iops = {"device_write_iops": [{"Path": "/dev/vda", "Rate": 10}], "cpu_quota": 2000}
    recipe = Recipe.of(BASE, ENV, iops, None)
    assert recipe.resources == iops and isinstance(recipe.resources["device_write_iops"], list)
    assert recipe.standby_resources()["device_write_iops"] == [{"Path": "/dev/vda", "Rate": 10}]
    assert recipe.serves(Recipe.of(BASE, ENV, dict(reversed(list(iops.items()))), None))  # order does not matter


def test_a_job_image_built_on_ours_mounts_its_venv_and_another_runs_as_it_is(cluster, monkeypatch):
    """A user's job (no harness settings) gets the venv copy only when venv_cache.serves its image."""
    from chaos.backends.docker import venv_cache

    monkeypatch.setattr(venv_cache, "venv_volume", lambda client, image: f"venv-of-{image}")
    cluster._venv_wanted = True
    from dataclasses import replace

    cluster.spec = replace(cluster.spec, launch=replace(cluster.spec.launch, harness_settings=False))
    monkeypatch.setattr(venv_cache, "serves", lambda client, image: image == "job-on-ours")
    assert cluster._venv_volumes("job-on-ours") == {"venv-of-job-on-ours": "/opt/venv"}
    assert cluster._venv_volumes("job-elsewhere") == {}
