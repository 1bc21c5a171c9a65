"""The image's venv on a volume (chaos.backends.docker.venv_cache), against a fake engine."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from docker.errors import ImageNotFound, NotFound

from chaos.backends.docker import venv_cache


class FakeVolume:
    def __init__(self, engine, name, labels):
        self.engine, self.name, self.attrs = engine, name, {"Labels": dict(labels)}

    def remove(self, force=False):
        self.engine.volumes_by_name.pop(self.name, None)
        self.engine.log.append(("remove volume", self.name))


class FakeEngine:
    def __init__(self, images, driver="fuse-overlayfs"):
        self.images_by_tag = dict(images)  # tag -> id
        self.driver = driver
        self.volumes_by_name: dict[str, FakeVolume] = {}
        self.log: list[tuple] = []
        self.fill_fails = False
        self.images = SimpleNamespace(get=self._image)
        self.volumes = SimpleNamespace(get=self._volume, create=self._create, list=self._list)
        self.containers = SimpleNamespace(run=self._run)

    def info(self):
        return {"Driver": self.driver}

    def _image(self, ref):
        if ref in self.images_by_tag:
            return SimpleNamespace(id=self.images_by_tag[ref])
        if ref in self.images_by_tag.values():
            return SimpleNamespace(id=ref)
        raise ImageNotFound(ref)

    def _volume(self, name):
        if name not in self.volumes_by_name:
            raise NotFound(name)
        return self.volumes_by_name[name]

    def _create(self, name, labels):
        self.volumes_by_name[name] = FakeVolume(self, name, labels)
        self.log.append(("create volume", name))

    def _list(self, filters):
        return list(self.volumes_by_name.values())

    def _run(self, image, **kw):
        (volume,) = kw["volumes"]
        self.log.append(("fill", volume, kw["volumes"][volume]["bind"], kw["user"]))
        assert kw["remove"] and kw["network_disabled"]
        if self.fill_fails:
            raise RuntimeError("killed during the copy")
        return b"/opt/venv\n"


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TFCHAOS_CACHE", str(tmp_path))
    monkeypatch.delenv("TFCHAOS_VENV_VOLUME", raising=False)


def test_the_volume_is_filled_once_per_image_and_reused():
    engine = FakeEngine({"tfchaos/worker:tf2.20": "sha256:aaaaaaaaaaaa1111", "tfchaos/worker:tf2.15": "sha256:bbbbbbbbbbbb2222"})
    first = venv_cache.venv_volume(engine, "tfchaos/worker:tf2.20")
    again = venv_cache.venv_volume(engine, "tfchaos/worker:tf2.20")
    other = venv_cache.venv_volume(engine, "tfchaos/worker:tf2.15")
    assert first == again == "tfchaos-venv-aaaaaaaaaaaa" and other == "tfchaos-venv-bbbbbbbbbbbb"
    fills = [e for e in engine.log if e[0] == "fill"]
    assert fills == [("fill", first, "/opt/venv", "0"), ("fill", other, "/opt/venv", "0")]
    labels = engine.volumes_by_name[first].attrs["Labels"]
    assert labels["io.tfchaos.role"] == "venv" and labels["io.tfchaos.image"] == "sha256:aaaaaaaaaaaa1111"
    assert "io.tfchaos.run" not in labels  # a cache, not a run's object


def test_a_fill_that_broke_off_is_made_again_from_empty():
    engine = FakeEngine({"w": "sha256:aaaaaaaaaaaa1111"})
    engine.fill_fails = True
    with pytest.raises(RuntimeError):
        venv_cache.venv_volume(engine, "w")
    engine.fill_fails = False
    name = venv_cache.venv_volume(engine, "w")
    assert ("remove volume", name) in engine.log  # the half-filled one went first
    assert [e[0] for e in engine.log].count("fill") == 2


def test_a_rebuilt_image_gets_a_new_volume_and_the_old_one_goes():
    engine = FakeEngine({"w": "sha256:aaaaaaaaaaaa1111"})
    old = venv_cache.venv_volume(engine, "w")
    engine.images_by_tag = {"w": "sha256:cccccccccccc3333"}  # rebuilt: the old id is gone
    new = venv_cache.venv_volume(engine, "w")
    assert new != old and old not in engine.volumes_by_name and new in engine.volumes_by_name


def test_only_where_image_reads_cost_a_host_process_unless_told():
    assert venv_cache.wanted(FakeEngine({}, driver="fuse-overlayfs"))
    assert not venv_cache.wanted(FakeEngine({}, driver="overlay2"))


def test_the_environment_decides_when_set(monkeypatch):
    monkeypatch.setenv("TFCHAOS_VENV_VOLUME", "0")
    assert not venv_cache.wanted(FakeEngine({}, driver="fuse-overlayfs"))
    monkeypatch.setenv("TFCHAOS_VENV_VOLUME", "1")
    assert venv_cache.wanted(FakeEngine({}, driver="overlay2"))
