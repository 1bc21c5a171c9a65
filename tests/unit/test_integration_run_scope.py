"""tests/integration/run_scope.py: the integration tests' leftover check
compares everything on the engine, and counts only the test's own objects
(fake Docker client at the low-level API boundary)."""

from __future__ import annotations

import sys
from pathlib import Path

from chaos import LABEL_PROJECT, LABEL_RUN, PROJECT
from chaos.backends.docker.ownership import LABEL_SESSION

sys.path.insert(0, str(Path(__file__).parents[1] / "integration"))
import run_scope  # noqa: E402


class FakeAPI:
    def __init__(self):
        self.containers_ = []
        self.networks_ = []
        self.volumes_ = []
        self.images_ = []
        self.removed = []

    def containers(self, all=True, filters=None):
        return list(self.containers_)

    def networks(self, filters=None):
        return list(self.networks_)

    def volumes(self, filters=None):
        return {"Volumes": list(self.volumes_)}

    def images(self, filters=None, all=False):
        return list(self.images_)

    def remove_container(self, id, **kw):
        self.removed.append(id)
        self.containers_ = [c for c in self.containers_ if c["Id"] != id]

    def remove_volume(self, name, **kw):
        self.removed.append(name)
        self.volumes_ = [v for v in self.volumes_ if v["Name"] != name]

    def remove_network(self, id):
        self.removed.append(id)
        self.networks_ = [n for n in self.networks_ if n["Id"] != id]


class FakeClient:
    def __init__(self):
        self.api = FakeAPI()


def container(id, labels=None, mounts=()):
    return {
        "Id": id,
        "Names": [f"/{id}"],
        "Labels": labels or {},
        "State": "running",
        "Mounts": [{"Type": "volume", "Name": m} for m in mounts],
    }


ANON_DANGLING = "5f" * 32  # Docker names an anonymous volume with 64 hex digits
MINE = {LABEL_PROJECT: PROJECT, LABEL_RUN: "r1", LABEL_SESSION: "me"}
OTHER = {LABEL_PROJECT: PROJECT, LABEL_RUN: "r2", LABEL_SESSION: "someone-else"}


def test_only_new_objects_of_this_session_or_unattributable_ones_are_leftovers():
    client = FakeClient()
    api = client.api
    api.containers_ = [container("old")]
    api.volumes_ = [{"Name": "old-volume", "Labels": None}]
    before = run_scope.Snapshot.take(client)
    api.containers_ += [
        container("mine", MINE),
        container("theirs", OTHER, mounts=["their-anon"]),
        container("unlabelled"),
        container("someones-probe", {LABEL_PROJECT: PROJECT}),
        container("our-build", {LABEL_PROJECT: PROJECT, "io.tfchaos.kind": "build", "io.tfchaos.build-session": "me"}),
        # another session's image build on the same engine (seen removed by a test once)
        container(
            "their-build",
            {LABEL_PROJECT: PROJECT, "io.tfchaos.kind": "build", "io.tfchaos.build-session": "someone-else"},
        ),
    ]
    api.networks_ = [
        {"Id": "n1", "Name": "mine-net", "Labels": MINE},
        {"Id": "n2", "Name": "their-net", "Labels": OTHER},
    ]
    api.volumes_ += [
        {"Name": ANON_DANGLING, "Labels": None},
        {"Name": "their-anon", "Labels": None},
        {"Name": "k3m-cnt", "Labels": None},
    ]  # someone's named volume, made while the test ran
    api.images_ = [
        {
            "Id": "sha256:built",
            "RepoTags": ["tfchaos/worker:tf2.20"],
            "Labels": {LABEL_PROJECT: PROJECT, "io.tfchaos.kind": "app"},
        },
        {
            "Id": "sha256:runimg",
            "RepoTags": ["tfchaos/run-r1:agent"],
            "Labels": {LABEL_PROJECT: PROJECT, LABEL_RUN: "r1"},
        },
    ]
    left = run_scope.leftovers(client, before, "me")
    assert sorted(o.describe() for o in left) == [
        "container mine",
        "container our-build",  # a build container left by an interrupted build
        "image tfchaos/run-r1:agent",
        "network mine-net",
        f"volume {ANON_DANGLING}",  # an anonymous volume no container uses: a leak
    ]
    run_scope.remove(client, [o for o in left if o.kind != "image"])
    assert sorted(api.removed) == sorted([ANON_DANGLING, "mine", "n1", "our-build"])
    assert "theirs" in [c["Id"] for c in api.containers_] and "old" in [c["Id"] for c in api.containers_]


def test_a_users_container_of_an_image_carrying_our_labels_is_never_a_leftover_of_ours():
    """The same rule as chaos clean: only labels a container was given at its
    creation count, not those of the image it was made from."""
    client = FakeClient()
    api = client.api
    # An image built FROM an image that carries a build container's labels and our session.
    image = {LABEL_PROJECT: PROJECT, "io.tfchaos.kind": "build", LABEL_SESSION: "me"}
    api.inspect_image = lambda id: {"Config": {"Labels": image}}
    before = run_scope.Snapshot.take(client)
    api.containers_ = [
        {**container("userjob", image), "ImageID": "sha256:child"},
        {**container("mine", {**image, LABEL_RUN: "r1"}), "ImageID": "sha256:child"},
    ]
    left = run_scope.leftovers(client, before, "me")
    assert [o.describe() for o in left] == []  # "mine" carries the session only by inheritance too
    api.containers_[1]["Labels"][LABEL_SESSION] = "me-again"
    assert [o.describe() for o in run_scope.leftovers(client, before, "me-again")] == ["container mine"]


def test_an_images_venv_copy_is_a_cache_like_the_image_not_a_leftover():
    client = FakeClient()
    before = run_scope.Snapshot.take(client)
    client.api.volumes_ = [
        {
            "Name": "tfchaos-venv-aaaaaaaaaaaa",
            "Labels": {LABEL_PROJECT: PROJECT, "io.tfchaos.role": "venv", "io.tfchaos.image": "sha256:a"},
        },
        {"Name": ANON_DANGLING, "Labels": {"io.tfchaos.role": "venv"}},  # not ours: no project label
    ]
    assert [o.describe() for o in run_scope.leftovers(client, before, "me")] == [f"volume {ANON_DANGLING}"]


def test_a_by_hand_clusters_volume_of_a_neighbour_lane_is_not_a_leftover_of_ours():
    """bin/test runs lanes side by side: a compose project brought up by another lane
    (its volume unused for a moment) carries that lane's session, as docker-compose.yml
    labels every object with ${TFCHAOS_SESSION:-by-hand} (a rehearsal's lane 2 once took
    lane 1's tfchaos-by-hand-7763_backup for its own and removed it)."""
    from chaos.compose.files import compose_dict
    from chaos.topology import Topology

    label = compose_dict(Topology(2))["volumes"]["backup"]["labels"][LABEL_SESSION]
    assert label == "${TFCHAOS_SESSION:-by-hand}"
    client = FakeClient()
    before = run_scope.Snapshot.take(client)
    client.api.volumes_ = [
        {"Name": "tfchaos-by-hand-7763_backup", "Labels": {LABEL_PROJECT: PROJECT, LABEL_SESSION: "lane-1"}},
        {"Name": "tfchaos-by-hand-9999_backup", "Labels": {LABEL_PROJECT: PROJECT, LABEL_SESSION: "me"}},
    ]
    assert [o.describe() for o in run_scope.leftovers(client, before, "me")] == ["volume tfchaos-by-hand-9999_backup"]
