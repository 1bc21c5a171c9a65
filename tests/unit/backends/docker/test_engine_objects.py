"""Teardown never raises and leaves nothing: objects that vanish, appear late,
are paused, or an engine that goes away mid-teardown (fake low-level API)."""

from __future__ import annotations

import requests

from chaos import LABEL_PROJECT, LABEL_RUN, PROJECT
from chaos.backends.docker.engine_objects import list_objects, remove_objects
from chaos.backends.docker.ownership import LABEL_OWNER, Liveness, Owner, process_start
from chaos.backends.docker.runs import clean, runs_on_engine


class NotFound(Exception):
    def __init__(self, status=404):
        super().__init__(f"{status} no such object")
        self.response = type("R", (), {"status_code": status})()


class FakeAPI:
    def __init__(self, containers=(), networks=(), volumes=()):
        self.c = {c["Id"]: c for c in containers}
        self.n = {n["Id"]: n for n in networks}
        self.v = {v["Name"]: v for v in volumes}
        self.calls = []
        self.on_list = []  # callbacks run at each containers() listing (things appearing late)
        self.dead = False

    def containers(self, all=True, filters=None):
        if self.dead:
            raise requests.ConnectionError("engine gone")
        for hook in self.on_list:
            hook(self)
        return [c for c in self.c.values() if _match(c["Labels"], filters)]

    def networks(self, filters=None):
        return [n for n in self.n.values() if _match(n["Labels"], filters)]

    def volumes(self, filters=None):
        return {"Volumes": [v for v in self.v.values() if _match(v["Labels"], filters)] or None}

    def images(self, filters=None, all=False):
        return []

    def unpause(self, id):
        self.calls.append(("unpause", id))
        self.c[id]["State"] = "running"

    def remove_container(self, id, v=False, force=False):
        self.calls.append(("remove_container", id, v))
        if id not in self.c:
            raise NotFound()
        if self.c[id]["State"] == "paused":
            raise NotFound(409)
        del self.c[id]

    def remove_network(self, id):
        self.calls.append(("remove_network", id))
        if any(c.get("net") == id for c in self.c.values()):
            raise NotFound(403)  # active endpoints
        self.n.pop(id, None) or (_ for _ in ()).throw(NotFound())

    def remove_volume(self, name, force=False):
        self.calls.append(("remove_volume", name))
        if name not in self.v:
            raise NotFound()
        del self.v[name]


def _match(labels, filters):
    for want in (filters or {}).get("label", []):
        key, _, value = want.partition("=")
        if key not in (labels or {}) or (value and labels[key] != value):
            return False
    return True


class Client:
    def __init__(self, api):
        self.api = api


RUN = {LABEL_PROJECT: PROJECT, LABEL_RUN: "abc"}


def c(id, state="running", labels=RUN, net=None):
    return {"Id": id, "Names": [f"/{id}"], "Labels": dict(labels), "State": state, "net": net}


def select(api):
    client = Client(api)
    return lambda: list_objects(client, RUN)


def test_removes_containers_before_networks_and_volumes_and_their_anonymous_volumes():
    api = FakeAPI(
        [c("w0", net="n"), c("w1", state="paused", net="n")],
        [{"Id": "n", "Name": "net", "Labels": RUN}],
        [{"Name": "backup", "Labels": RUN}],
    )
    result = remove_objects(Client(api), select(api), pause_s=0)
    assert result.complete and api.c == {} and api.n == {} and api.v == {}
    assert ("unpause", "w1") in api.calls  # a paused container is thawed before removal
    assert all(call[2] for call in api.calls if call[0] == "remove_container")  # v=True
    assert (result.count("container"), result.count("network"), result.count("volume")) == (2, 1, 1)


def test_a_container_that_vanishes_between_list_and_remove_is_not_an_error():
    api = FakeAPI([c("w0"), c("w1")])
    real = api.remove_container

    def racing(id, **kw):
        api.c.pop("w1", None)  # removed by someone else meanwhile
        return real(id, **kw)

    api.remove_container = racing
    result = remove_objects(Client(api), select(api), pause_s=0)
    assert result.complete and api.c == {}


def test_an_object_that_appears_during_teardown_is_removed_by_a_later_pass():
    api = FakeAPI([c("w0")])
    created = []

    def late_create(api_):
        if not created and ("remove_container", "w0", True) in api_.calls:
            created.append(True)
            api_.c["w1-late"] = c("w1-late")  # a create interrupted by Ctrl-C lands now

    api.on_list.append(late_create)
    result = remove_objects(Client(api), select(api), pause_s=0)
    assert result.complete and api.c == {}
    assert result.count("container") == 2


def test_an_engine_that_goes_away_is_reported_not_raised():
    api = FakeAPI([c("w0")])
    api.dead = True
    result = remove_objects(Client(api), select(api), pause_s=0)
    assert not result.complete
    ((obj, why),) = result.left
    assert obj.kind == "engine" and "engine gone" in why


def test_what_cannot_be_removed_is_reported_with_why():
    api = FakeAPI([c("w0", net="n")], [{"Id": "n", "Name": "net", "Labels": RUN}])
    api.remove_container = lambda id, **kw: (_ for _ in ()).throw(NotFound(500))
    result = remove_objects(Client(api), select(api), passes=2, pause_s=0)
    assert sorted(o.describe() for o, _ in result.left) == ["container w0", "network net"]
    why = {o.kind: text for o, text in result.left}
    assert "500" in why["container"] and "403" in why["network"]  # in use by the container


# --- ownership and chaos clean --------------------------------------------------------------


def test_owner_liveness_uses_pid_and_start_time():
    me = Owner.current()
    assert Owner.parse(me.label()) == me and me.liveness() is Liveness.ALIVE
    assert Owner(me.host, me.pid, "1").liveness() is Liveness.GONE  # a recycled pid is not the owner
    assert Owner(me.host, 2**22 + 7, "5").liveness() is Liveness.GONE
    assert Owner("another-host", me.pid, me.start).liveness() is Liveness.UNKNOWN
    assert Owner.parse("garbage") is None and process_start(2**22 + 7) is None


def test_clean_removes_only_runs_whose_owner_is_gone_unless_told():
    me = Owner.current()
    live = {**RUN, LABEL_RUN: "live", LABEL_OWNER: me.label()}
    dead = {**RUN, LABEL_RUN: "dead", LABEL_OWNER: Owner(me.host, me.pid, "1").label()}
    remote = {**RUN, LABEL_RUN: "remote", LABEL_OWNER: Owner("elsewhere", 1, "1").label()}

    def api():
        return FakeAPI([c("a", labels=live), c("b", labels=dead), c("d", labels=remote)])

    a = api()
    result = clean(Client(a))
    assert [r.run_id for r, _ in result.removed] == ["dead"]
    assert sorted((r.run_id, l.value) for r, l in result.kept) == [("live", "alive"), ("remote", "unknown")]
    assert sorted(a.c) == ["a", "d"]
    a = api()
    clean(Client(a), run_id="live")
    assert sorted(a.c) == ["b", "d"]
    a = api()
    clean(Client(a), everything=True)
    assert a.c == {}
    assert [r.run_id for r in runs_on_engine(Client(api()))] == ["dead", "live", "remote"]


class SwarmManagerAPI(FakeAPI):
    """The fake engine as a swarm manager: it also has services (a swarm run's workers,
    proxy and keepers); removing a service removes its tasks' containers."""

    def __init__(self, services=(), **kw):
        super().__init__(**kw)
        self.s = {x["ID"]: x for x in services}

    def services(self, filters=None):
        return [x for x in self.s.values() if _match(x["Spec"]["Labels"], filters)]

    def remove_service(self, id):
        self.calls.append(("remove_service", id))
        if id not in self.s:
            raise NotFound()
        del self.s[id]
        for cid in [cid for cid, c in self.c.items() if c.get("service") == id]:
            del self.c[cid]


def service(id, labels):
    return {"ID": id, "Spec": {"Name": f"tfchaos-{id}", "Labels": dict(labels)}}


def test_clean_removes_a_dead_swarm_runs_services_first_and_keeps_a_live_ones():
    """`chaos run --backend swarm` killed with SIGKILL leaves its services on the manager
    (workers, proxy, keepers) and its overlay: `chaos clean`, with DOCKER_HOST at the
    manager, removes them like a run's containers, services first (their tasks hold the
    overlay)."""
    me = Owner.current()
    dead = {**RUN, LABEL_RUN: "dead", LABEL_OWNER: Owner(me.host, me.pid, "1").label(), "io.tfchaos.backend": "swarm"}
    live = {**RUN, LABEL_RUN: "live", LABEL_OWNER: me.label(), "io.tfchaos.backend": "swarm"}
    api = SwarmManagerAPI(
        services=[service("w0", dead), service("proxy", dead), service("w0-live", live)],
        containers=[{**c("task-w0", labels=dead, net="overlay"), "service": "w0"}],
        networks=[{"Id": "overlay", "Name": "tfchaos-dead", "Labels": dead}],
    )
    result = clean(Client(api))
    ((record, removal),) = result.removed
    assert record.run_id == "dead" and removal.complete
    assert removal.count("service") == 2 and removal.count("network") == 1
    assert removal.summary().startswith("removed 2 services, ")
    assert sorted(api.s) == ["w0-live"] and api.n == {} and api.c == {}
    first_network = next(i for i, call in enumerate(api.calls) if call[0] == "remove_network")
    assert all(i < first_network for i, call in enumerate(api.calls) if call[0] == "remove_service")
    assert [r.run_id for r, _ in result.kept] == ["live"]


def test_an_engine_that_is_no_swarm_manager_lists_no_service():
    class NotAManager(FakeAPI):
        def services(self, filters=None):
            raise NotFound(503)  # "This node is not a swarm manager"

    api = NotAManager([c("w0")])
    assert [o.kind for o in list_objects(Client(api), RUN)] == ["container"]
    assert (
        remove_objects(Client(api), select(api), pause_s=0).summary() == "removed 1 containers, 0 networks, 0 volumes"
    )


# --- only what the framework created and marked: never what merely inherited its labels ------------

# The labels a framework image carries (chaos.images.plans.labels_for), and so
# every image built FROM it and every container of such an image.
IMAGE_LABELS = {
    LABEL_PROJECT: PROJECT,
    "io.tfchaos.kind": "deps",
    "io.tfchaos.inputs": "cebef6",
    "io.tfchaos.tf_version": "2.20.0",
}


class ImageAPI(FakeAPI):
    """The fake engine with images: a container's labels include its image's, as Docker's do."""

    def __init__(self, containers=(), images=None, **kw):
        self.image_labels = dict(images or {})
        super().__init__(
            [{**c, "Labels": {**self.image_labels.get(c.get("ImageID"), {}), **c["Labels"]}} for c in containers], **kw
        )

    def inspect_image(self, id):
        if id not in self.image_labels:
            raise NotFound()
        return {"Config": {"Labels": self.image_labels[id]}}


def test_clean_all_never_removes_a_users_container_of_an_image_built_on_ours():
    me = Owner.current()
    run = {LABEL_PROJECT: PROJECT, LABEL_RUN: "r1", LABEL_OWNER: me.label(), "io.tfchaos.role": "worker"}
    api = ImageAPI(
        [
            # `docker run -d --name userjob my-image sleep 300`: my-image is FROM tfchaos/worker-deps
            {**c("userjob", labels={}), "ImageID": "sha256:my-image"},
            # a run's worker of the same image: the run id and owner are its own
            {**c("run-worker", labels=run), "ImageID": "sha256:my-image"},
            # a build container of a killed image build: kind=build is its own (its image says deps)
            {**c("build", labels={LABEL_PROJECT: PROJECT, "io.tfchaos.kind": "build"}), "ImageID": "sha256:deps"},
        ],
        images={"sha256:my-image": IMAGE_LABELS, "sha256:deps": IMAGE_LABELS},
        networks=[{"Id": "n", "Name": "net", "Labels": {LABEL_PROJECT: PROJECT, LABEL_RUN: "r1"}}],
    )
    client = Client(api)
    (userjob,) = [o for o in list_objects(client) if o.name == "userjob"]
    assert userjob.labels == {} and userjob.inherited == IMAGE_LABELS and not userjob.framework_made
    result = clean(client, everything=True)
    assert sorted(api.c) == ["userjob"] and api.n == {}
    assert [r.run_id for r, _ in result.removed] == ["r1"] and result.extra.count("container") == 1


def test_a_container_whose_image_carries_a_run_id_is_not_that_runs():
    # e.g. `docker commit` of a run's worker, run again by hand: the run id is inherited
    committed = {LABEL_PROJECT: PROJECT, LABEL_RUN: "old", LABEL_OWNER: "host:1:1"}
    api = ImageAPI([{**c("mine", labels={}), "ImageID": "sha256:committed"}], images={"sha256:committed": committed})
    assert runs_on_engine(Client(api)) == []
    clean(Client(api), run_id="old")
    clean(Client(api), everything=True)
    assert sorted(api.c) == ["mine"]


def test_a_label_the_container_was_given_with_another_value_than_its_images_is_its_own():
    image = {LABEL_PROJECT: PROJECT, LABEL_RUN: "old"}
    api = ImageAPI([{**c("w", labels={LABEL_RUN: "new"}), "ImageID": "sha256:i"}], images={"sha256:i": image})
    (obj,) = list_objects(Client(api))
    assert obj.labels == {LABEL_RUN: "new"} and [r.run_id for r in runs_on_engine(Client(api))] == ["new"]


def test_a_container_whose_image_cannot_be_read_claims_nothing():
    api = ImageAPI([{**c("w", labels=RUN), "ImageID": "sha256:gone"}])
    (obj,) = list_objects(Client(api))
    assert obj.labels == {} and obj.inherited == RUN
    clean(Client(api), everything=True)
    assert sorted(api.c) == ["w"]


def test_images_never_carry_a_run_id_owner_or_session():
    """What would make a child image's containers look like a run's: no image the
    framework builds or commits carries them (labels_for, the agent layer)."""
    from chaos.backends.docker.ownership import LABEL_SESSION
    from chaos.images import plans
    from chaos.images import workload as workload_images
    from chaos.images.versions import parse_tf_version

    marks = {LABEL_RUN, LABEL_OWNER, LABEL_SESSION}
    for plan in (*plans.worker_plans(parse_tf_version("2.20")), *plans.proxy_plans()):
        assert not marks & set(plans.labels_for(plan)), plan
    made = {}

    class API:
        def images(self, filters=None):
            return []

        def create_container(self, image, labels=None, **kw):
            made["container"] = labels
            return {"Id": "b"}

        def put_archive(self, *a):
            pass

        def commit(self, id, repository, tag, changes):
            made["changes"] = changes
            return {"Id": "sha256:layer"}

        def remove_container(self, *a, **kw):
            pass

    source = type("Image", (), {"id": "sha256:0123456789abcdef", "attrs": {"Config": {"Env": []}}})()
    gets = iter([source, None])
    client = type("C", (), {"api": API(), "images": type("I", (), {"get": lambda self, ref: next(gets)})()})()
    workload_images.with_agent(client, "acme/trainer:1")
    labels = set(made["container"]) | {
        c.split(" ", 1)[1].split("=", 1)[0] for c in made["changes"] if c.startswith("LABEL ")
    }
    assert labels and not marks & labels


def test_clean_all_keeps_an_images_venv_copy_a_cache_like_the_image():
    venv = {"Name": "tfchaos-venv-aaaaaaaaaaaa", "Labels": {LABEL_PROJECT: PROJECT, "io.tfchaos.role": "venv"}}
    stray = {"Name": "tfchaos-x-backup", "Labels": {LABEL_PROJECT: PROJECT}}
    api = FakeAPI(volumes=[venv, stray])
    clean(Client(api), everything=True)
    assert sorted(api.v) == ["tfchaos-venv-aaaaaaaaaaaa"]
