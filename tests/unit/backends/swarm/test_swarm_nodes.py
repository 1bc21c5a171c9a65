"""The local swarm's pure parts: its names, labels and node arguments, the
overlay's options, bad input refused with the valid values and a hint (never a
traceback), the node image's input hash, and the fan-out that streams one
``docker save`` into every node's ``docker load``. No engine: fakes at the SDK
boundary."""

from __future__ import annotations

import pytest
from docker.errors import ImageNotFound

import chaos.cli
from chaos import LABEL_PROJECT, LABEL_RUN
from chaos.backends.docker.ownership import LABEL_OWNER, LABEL_SESSION
from chaos.backends.swarm import nodes as swarm_nodes
from chaos.backends.swarm.nodes import LocalSwarm, make_plan, require_images
from chaos.backends.swarm.plan import (
    ENDPOINT_MODE,
    LABEL_NODE,
    LABEL_SWARM,
    MAX_NODES,
    OVERLAY_MTU,
    OVERLAY_NETWORK,
    SwarmPlan,
    check_name,
    check_nodes,
    describe_access,
)
from chaos.errors import InfrastructureError, ScenarioError


def plan(nodes: int = 3, name: str = "local", owner=()) -> SwarmPlan:
    return SwarmPlan(name, nodes, "/root/.cache/tfchaos/swarm", owner)


# --- input ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, -1, MAX_NODES + 1, "x", "", "2.5", None])
def test_bad_node_counts_name_the_valid_range(value):
    with pytest.raises(ScenarioError) as err:
        check_nodes(value)
    assert f"from 1 to {MAX_NODES}" in err.value.message and repr(value) in err.value.message
    assert "chaos swarm up --nodes 3" in err.value.hint


@pytest.mark.parametrize("value,want", [(1, 1), ("3", 3), (MAX_NODES, MAX_NODES)])
def test_good_node_counts(value, want):
    assert check_nodes(value) == want


@pytest.mark.parametrize("name", ["", "Local", "-x", "a b", "x" * 25, "a_b"])
def test_bad_names_are_refused(name):
    with pytest.raises(ScenarioError) as err:
        check_name(name)
    assert "lower-case letters, digits or dashes" in err.value.message and "--name" in err.value.hint


def test_a_socket_path_too_long_for_unix_is_refused_with_the_cure():
    with pytest.raises(ScenarioError) as err:
        SwarmPlan("local", 3, "/" + "d" * 90, ())
    assert "longer than a unix socket allows" in err.value.message and "TFCHAOS_CACHE" in err.value.hint


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["swarm", "up", "--nodes", "0"], "--nodes must be a whole number from 1 to 8"),
        (["swarm", "up", "--nodes", "three"], "not 'three'"),
        (["swarm", "down", "--name", "No"], "swarm name 'No' is not valid"),
        (["swarm", "status", "--name", "a b"], "swarm name 'a b' is not valid"),
    ],
)
def test_the_command_refuses_bad_input_before_asking_the_engine(argv, needle, capsys, monkeypatch):
    def no_engine():
        raise AssertionError("the engine was asked before the input was checked")

    monkeypatch.setattr("chaos.images.engine.docker_client", no_engine)
    assert chaos.cli.main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and "hint:" in err and "Traceback" not in err


def test_no_engine_is_one_line_with_a_hint(capsys, monkeypatch):
    def no_engine():
        raise InfrastructureError("cannot reach the Docker engine (refused)", hint="start it")

    monkeypatch.setattr("chaos.images.engine.docker_client", no_engine)
    assert chaos.cli.main(["swarm", "status"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: cannot reach the Docker engine") and "hint: start it" in err


class _Images:
    def __init__(self, have):
        self.have = have

    def get(self, ref):
        if ref not in self.have:
            raise ImageNotFound(f"no such image: {ref}")
        return self.have[ref]


class _Client:
    def __init__(self, have=None, name=None):
        self.images = _Images(have or {})
        self.name = name

    def info(self):  # the engine's host name: this machine's unless told (chaos.images.engine.shares_host)
        return {"Name": self.name or __import__("socket").gethostname()}


def test_a_missing_image_is_named_with_how_to_build_it():
    with pytest.raises(InfrastructureError) as err:
        require_images(_Client({"tfchaos/proxy:latest": object()}), ["tfchaos/proxy:latest", "tfchaos/worker:tf2.20"])
    assert "'tfchaos/worker:tf2.20' is not on this Docker engine" in err.value.message
    assert "chaos images build" in err.value.hint and "--image" in err.value.hint


# --- what a swarm is made of -----------------------------------------------------------


def test_names_follow_the_swarm_name():
    p = plan(3, "ci-2")
    assert p.run_id == "swarm-ci-2" and p.network == "tfchaos-swarm-ci-2"
    assert [p.node_container(i) for i in p.indices()] == [f"tfchaos-swarm-ci-2-node-{i}" for i in (1, 2, 3)]
    assert p.hostname(2) == "node-2" and p.volume(3) == "tfchaos-swarm-ci-2-node-3-docker"
    assert p.docker_host(1) == "unix:///root/.cache/tfchaos/swarm/ci-2/node-1/docker.sock"


def test_labels_mark_every_object_as_the_swarms_run():
    p = plan()
    assert p.labels() == {LABEL_PROJECT: "tfchaos", LABEL_RUN: "swarm-local", LABEL_SWARM: "local"}
    node = p.labels(2)
    assert node[LABEL_NODE] == "2" and node["io.tfchaos.role"] == "swarm-node"


def test_only_an_owned_swarm_carries_an_owner():
    """``chaos swarm up`` makes a swarm that outlives the command (no owner: ``chaos clean``
    keeps it); the test fixture's is owned, so ``chaos clean`` removes it once its process is gone."""
    assert LABEL_OWNER not in make_plan("local", 2).labels()
    owned = make_plan("local", 2, owned=True).labels()
    assert owned[LABEL_OWNER].count(":") >= 2 and owned[LABEL_SESSION]


def test_a_node_gets_capabilities_never_privileged():
    args = plan().node_create(2, "tfchaos/swarm-node:latest")
    assert "privileged" not in args
    assert sorted(args["cap_add"]) == ["MKNOD", "NET_ADMIN", "SYS_ADMIN", "SYS_PTRACE"]
    assert args["security_opt"] == ["seccomp=unconfined", "apparmor=unconfined"]
    assert args["volumes"]["tfchaos-swarm-local-node-2-docker"] == {"bind": "/var/lib/docker", "mode": "rw"}
    assert args["volumes"]["/sys/fs/cgroup"] == {"bind": "/sys/fs/cgroup", "mode": "rw"}
    assert args["volumes"]["/root/.cache/tfchaos/swarm/local/node-2"]["bind"] == "/run/tfchaos"
    assert args["hostname"] == "node-2" and args["network"] == "tfchaos-swarm-local"
    assert args["labels"][LABEL_NODE] == "2"
    assert args["devices"] == ["/dev/fuse:/dev/fuse:rwm"]
    assert "/root/.cache/tfchaos/swarm/local/store" not in args["volumes"]
    with_store = plan().node_create(2, "tfchaos/swarm-node:latest", store=True)["volumes"]
    assert with_store["/root/.cache/tfchaos/swarm/local/store"] == {"bind": "/run/tfchaos-store", "mode": "ro"}
    assert "devices" not in plan().node_create(2, "tfchaos/swarm-node:latest", fuse=False)


def test_the_inner_engine_listens_on_sockets_only():
    cmd = plan().dockerd_command()
    hosts = [cmd[i + 1] for i, word in enumerate(cmd) if word == "--host"]
    assert hosts == ["unix:///var/run/docker.sock", "unix:///run/tfchaos/docker.sock"]
    assert not any("tcp://" in word for word in cmd)


def test_the_node_empties_its_engines_runtime_state_before_each_start_as_a_reboot_does():
    from chaos.backends.swarm.plan import RUNTIME_STATE

    cmd = plan().dockerd_command()
    assert cmd[:2] == ["sh", "-c"] and cmd[2].startswith("rm -rf ") and cmd[2].endswith('&& exec dockerd "$@"')
    assert {"/run/docker", "/run/docker.pid", "/run/containerd"} <= set(RUNTIME_STATE)
    assert all(path in cmd[2] for path in RUNTIME_STATE) and "/run/tfchaos" not in cmd[2]  # the host's socket folder


def test_the_overlay_is_attachable_with_a_smaller_mtu():
    args = plan().overlay_create()
    assert args["name"] == OVERLAY_NETWORK and args["driver"] == "overlay" and args["attachable"] is True
    assert args["options"] == {"com.docker.network.driver.mtu": str(OVERLAY_MTU)} and OVERLAY_MTU == 1400


def test_the_access_lines_say_how_to_reach_and_place():
    text = "\n".join(describe_access(plan(3, "x")))
    assert "export DOCKER_HOST=unix:///root/.cache/tfchaos/swarm/x/node-1/docker.sock" in text
    assert f"--endpoint-mode {ENDPOINT_MODE}" in text and "node.hostname==node-2" in text
    assert "chaos swarm down --name x" in text
    assert "node.hostname==node-1" in "\n".join(describe_access(plan(1)))


# --- the node image --------------------------------------------------------------------


def test_the_node_images_hash_follows_its_packages(tmp_path, monkeypatch):
    from chaos.images import swarm_node

    monkeypatch.setenv("TFCHAOS_CACHE", str(tmp_path))
    want, why = swarm_node.wanted_hash("sha256:base")
    assert want is None and "not fetched" in why
    folder = tmp_path / "debs" / "swarm-node"
    folder.mkdir(parents=True)
    for name in (
        "docker.io_20.10_amd64.deb",
        "iptables_1.8_amd64.deb",
        "sshfs_3.7_amd64.deb",
        "openssh-server_9.2_amd64.deb",
        "runc_1.1_amd64.deb",
    ):
        (folder / name).write_bytes(b"x" * 10)
    first, _ = swarm_node.wanted_hash("sha256:base")
    assert first and first != swarm_node.wanted_hash("sha256:other")[0]
    (folder / "runc_1.1_amd64.deb").write_bytes(b"x" * 11)
    assert swarm_node.wanted_hash("sha256:base")[0] != first


# --- loading images: one save streamed into every node ---------------------------------


class _NodeApi:
    def __init__(self, fail_after: int | None = None):
        self.got = b""
        self.fail_after = fail_after

    def load_image(self, data):
        for n, chunk in enumerate(data):
            if self.fail_after is not None and n >= self.fail_after:
                raise OSError("no space left on device")
            self.got += chunk
        return iter([{"stream": "Loaded image"}])


class _NodeClient:
    def __init__(self, api):
        self.api = api


class _HostApi:
    def __init__(self, chunks):
        self.chunks = chunks
        self.saves = 0

    def get_image(self, tag, chunk_size):
        self.saves += 1
        yield from self.chunks


class _Host:
    def __init__(self, chunks):
        self.api = _HostApi(chunks)


def _swarm(chunks, apis, parallel=True):
    swarm = LocalSwarm(_Host(chunks), plan(len(apis)))
    swarm._clients = {i: _NodeClient(api) for i, api in enumerate(apis, start=1)}
    swarm.parallel_load = parallel
    return swarm


def test_one_save_reaches_every_node_whole():
    chunks = [bytes([i]) * 1000 for i in range(50)]  # more chunks than a node's queue holds
    apis = [_NodeApi(), _NodeApi(), _NodeApi()]
    swarm = _swarm(chunks, apis)
    swarm._fan_out("tfchaos/worker:tf2.20", [1, 2, 3])
    assert all(api.got == b"".join(chunks) for api in apis)
    assert swarm.host.api.saves == 1


def test_a_node_that_fails_to_load_is_named_and_nothing_hangs():
    chunks = [b"y" * 100 for _ in range(50)]
    swarm = _swarm(chunks, [_NodeApi(), _NodeApi(fail_after=3)])
    with pytest.raises(InfrastructureError) as err:
        swarm._fan_out("tfchaos/worker:tf2.20", [1, 2])
    assert "node-2: OSError: no space left on device" in err.value.message
    assert "node-1" not in err.value.message and "df -h" in err.value.hint


def test_down_of_a_swarm_that_is_not_there_says_so(monkeypatch, tmp_path):
    monkeypatch.setenv("TFCHAOS_CACHE", str(tmp_path))
    monkeypatch.setattr(swarm_nodes, "swarm_objects", lambda client, name: [])
    assert swarm_nodes.down(object(), "local") is None


def test_chaos_clean_keeps_a_swarm_made_by_the_command_and_says_how_to_remove_it(monkeypatch, capsys):
    from chaos.backends.docker import api as docker_api
    from chaos.backends.docker import runs
    from chaos.backends.docker.engine_objects import EngineObject
    from chaos.backends.docker.ownership import Liveness

    record = runs.RunRecord(
        "swarm-local", [EngineObject("container", "c1", "tfchaos-swarm-local-node-1", plan().labels(1), "running")]
    )
    monkeypatch.setattr(docker_api, "connect", lambda: object())
    monkeypatch.setattr(runs, "clean", lambda client, **kw: runs.CleanResult(kept=[(record, Liveness.UNKNOWN)]))
    assert chaos.cli.main(["clean"]) == 0
    out = capsys.readouterr().out
    assert "a swarm made by `chaos swarm up` (`chaos swarm down --name local` removes it)" in out


@pytest.mark.parametrize(
    "raised,expected",
    [
        (
            lambda: __import__("docker").errors.APIError("500", explanation="invalid device /dev/fuse"),
            InfrastructureError,
        ),
        (lambda: KeyboardInterrupt(), KeyboardInterrupt),
    ],
)
def test_a_failed_or_interrupted_bring_up_removes_what_it_made(monkeypatch, raised, expected):
    calls = []
    monkeypatch.setattr(swarm_nodes, "swarm_objects", lambda client, name: [])
    swarm = LocalSwarm(_Client(), plan(2))

    def start(node_image):
        calls.append("start")
        raise raised()

    monkeypatch.setattr(swarm, "_start_nodes", start)
    monkeypatch.setattr(swarm, "down", lambda: calls.append("down"))
    with pytest.raises(expected) as err:
        swarm.up([], node_image="tfchaos/swarm-node:latest", store=False)
    assert calls == ["start", "down"]
    if expected is InfrastructureError:
        assert "Docker refused to bring up swarm 'local': invalid device /dev/fuse" in err.value.message
        assert "everything it made was removed" in err.value.hint


def test_the_store_is_an_sftp_export_every_node_mounts_with_caches_off():
    p = plan(3, "x")
    store = p.store_create("tfchaos/swarm-node:latest")
    assert store["name"] == p.store_container == "tfchaos-swarm-x-store"
    assert store["labels"]["io.tfchaos.role"] == "swarm-store" and store["labels"][LABEL_SWARM] == "x"
    assert store["volumes"]["tfchaos-swarm-x-store-data"]["bind"] == "/export"
    assert "/usr/sbin/sshd -D" in store["command"][0] and "privileged" not in store
    mount = p.store_mount_command()[-1]
    assert "sshfs" in mount and "root@tfchaos-swarm-x-store:/export /mnt/tfchaos-store" in mount
    for option in ("allow_other", "dir_cache=no", "entry_timeout=0", "attr_timeout=0", "negative_timeout=0"):
        assert option in mount.split("-o ", 1)[1].split()[0].split(",")
    assert "/mnt/tfchaos-store" in "\n".join(describe_access(p, store=True))
    assert "shared store" not in "\n".join(describe_access(p))


def test_no_fuse_no_store_said_before_anything_starts(monkeypatch):
    monkeypatch.setattr(swarm_nodes.os.path, "exists", lambda path: path != "/dev/fuse")
    with pytest.raises(InfrastructureError) as err:
        LocalSwarm(_Client(), plan(2)).up([], node_image="n")
    assert "no /dev/fuse" in err.value.message and "--no-store" in err.value.hint


def test_a_local_swarm_is_refused_on_an_engine_that_is_not_on_this_machine(monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", "tcp://172.30.0.2:2375")
    monkeypatch.setattr(swarm_nodes, "swarm_objects", lambda client, name: pytest.fail("looked up before refusing"))
    with pytest.raises(InfrastructureError) as err:
        LocalSwarm(_Client(name="dind-1"), plan(2)).up([], node_image="tfchaos/swarm-node:latest", store=False)
    assert "a local swarm (`chaos swarm up`) needs a Docker engine on this machine" in err.value.message
    assert "tcp://172.30.0.2:2375 (DOCKER_HOST)" in err.value.message
    assert "bind-mounts" in err.value.message and "unset DOCKER_HOST" in err.value.hint
