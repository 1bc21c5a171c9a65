"""Images our builds replaced are removed once nothing uses them, and only
those: a CI run's prune by label removed an intermediate image of a user's
``docker build`` FROM one of ours (it inherits our labels) mid-build."""

from __future__ import annotations

from dataclasses import dataclass, field

import docker.errors
import pytest

from chaos.images import engine


@dataclass
class Image:
    id: str
    tags: list[str] = field(default_factory=list)
    in_use: bool = False

    @property
    def short_id(self) -> str:
        return self.id[:19]


class FakeEngine:
    """Images by id; a tag points at one; removing one in use fails as Docker's does."""

    def __init__(self, *images: Image) -> None:
        self.by_id = {i.id: i for i in images}
        self.api = self
        self.images = self
        self.removed: list[str] = []

    def get(self, ref: str) -> Image:
        for image in self.by_id.values():
            if image.id == ref or ref in image.tags:
                return image
        raise docker.errors.ImageNotFound(ref)

    def tag(self, image_id: str, repo: str, tag: str) -> None:
        name = f"{repo}:{tag}"
        for image in self.by_id.values():
            if name in image.tags:
                image.tags.remove(name)
        self.by_id[image_id].tags.append(name)

    def remove_image(self, image_id: str, noprune: bool = False) -> None:
        if self.by_id[image_id].in_use:
            raise docker.errors.APIError(
                "conflict: unable to remove repository reference (must force) - container is using it"
            )
        del self.by_id[image_id]
        self.removed.append(image_id)


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("TFCHAOS_CACHE", str(tmp_path))


def test_a_replaced_image_in_use_is_removed_by_a_later_build_once_free():
    old = Image("sha256:old", ["tfchaos/worker:tf2.20"], in_use=True)
    users = Image("sha256:users-intermediate")  # untagged, our labels inherited: a user's build
    client = FakeEngine(old, Image("sha256:new"), users)
    engine.retag(client, "sha256:new", "tfchaos/worker:tf2.20", progress=lambda _: None)
    assert "sha256:old" in client.by_id  # a run next door still uses it
    engine.drop_replaced(client)
    assert "sha256:old" in client.by_id  # still used: kept, and still remembered
    old.in_use = False
    engine.drop_replaced(client)
    assert client.removed == ["sha256:old"]
    assert "sha256:users-intermediate" in client.by_id  # never ours to remove
    engine.drop_replaced(client)
    assert client.removed == ["sha256:old"]  # forgotten once removed


def test_a_replaced_image_tagged_again_is_forgotten_not_removed():
    old = Image("sha256:old", ["tfchaos/worker:tf2.20"], in_use=True)
    client = FakeEngine(old, Image("sha256:new"))
    engine.retag(client, "sha256:new", "tfchaos/worker:tf2.20", progress=lambda _: None)
    old.in_use = False
    old.tags.append("someone/kept:it")
    engine.drop_replaced(client)
    assert client.removed == [] and "sha256:old" in client.by_id
    old.tags.clear()
    engine.drop_replaced(client)
    assert client.removed == []  # it left the list when it was tagged


def test_a_multi_stage_build_notes_the_image_each_earlier_stage_ended_with():
    output = [
        "Step 1/6 : ARG BASE_IMAGE",  # no image (the legacy builder's output, as measured)
        "Step 2/6 : FROM ${BASE_IMAGE} AS install",
        " ---> 5555base5555",
        "Step 3/6 : RUN install-venv.sh",
        " ---> Running in 2b",
        "Removing intermediate container 2b",
        " ---> 6666inst6666",
        "Step 4/6 : FROM ${BASE_IMAGE}",
        " ---> 5555base5555",
        "Step 5/6 : COPY --from=install /opt/venv /opt/venv",
        " ---> 7777fina7777",
        "Step 6/6 : USER tfchaos",
        " ---> Running in 3c",
        " ---> 8888done8888",
        "Successfully built 8888done8888",
    ]

    class Api:
        def build(self, **kwargs):
            return [{"stream": line + "\n"} for line in output]

    class Client:
        api = Api()

    stages: list[str] = []
    assert engine.stream_build(Client(), lambda _: None, stage_ends=stages) == "8888done8888"
    assert stages == ["6666inst6666"]  # the install stage's last image


class Engine(FakeEngine):
    def __init__(self, engine_id: str, *images: Image) -> None:
        super().__init__(*images)
        self.engine_id = engine_id

    def info(self) -> dict:
        return {"ID": self.engine_id}


def test_an_image_remembered_on_one_engine_is_neither_dropped_nor_forgotten_by_a_build_on_another():
    here = Engine("AAAA:1111", Image("sha256:old", in_use=True))
    there = Engine("BBBB:2222")  # a remote engine (DOCKER_HOST): the image is not there
    engine.remove_later(["sha256:old"], here)
    engine.drop_replaced(there)
    assert there.removed == [] and ("AAAA:1111", "sha256:old") in engine._read_replaced()
    here.by_id["sha256:old"].in_use = False
    engine.drop_replaced(here)
    assert here.removed == ["sha256:old"] and engine._read_replaced() == set()


def test_a_line_written_before_engines_were_recorded_is_any_engines_as_it_was(tmp_path):
    (tmp_path / "replaced-images").write_text("sha256:legacy\n")
    client = Engine("AAAA:1111", Image("sha256:legacy"))
    engine.drop_replaced(client)
    assert client.removed == ["sha256:legacy"]
