"""The image's venv on a volume (chaos.backends.docker.venv_cache), against a fake engine."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from docker.errors import APIError, ImageNotFound, NotFound

from chaos.backends.docker import venv_cache


class FakeVolume:
    def __init__(self, engine, name, labels):
        self.engine, self.name, self.attrs = engine, name, {"Labels": dict(labels)}
        self.content: str | None = None  # the fingerprint of what a scan of it would read

    def remove(self, force=False):
        if self.name in self.engine.in_use:
            raise APIError("volume is in use", response=SimpleNamespace(status_code=409, reason="Conflict"))
        self.engine.volumes_by_name.pop(self.name, None)
        self.engine.log.append(("remove volume", self.name))


A20, B15 = "a" * 64, "b" * 64  # the venvs' fingerprints


class FakeEngine:
    """Images (tag -> id), each id's venv fingerprint, volumes, and the containers run."""

    def __init__(self, images, venvs=None, driver="fuse-overlayfs"):
        self.images_by_tag = dict(images)  # tag -> id
        self.venvs = dict(venvs or {})  # image id -> fingerprint of its /opt/venv
        self.not_ours: set[str] = set()  # image ids without our TF label
        self.driver = driver
        self.volumes_by_name: dict[str, FakeVolume] = {}
        self.in_use: set[str] = set()
        self.log: list[tuple] = []
        self.fill_fails = False
        self.images = SimpleNamespace(get=self._image, list=self._images)
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

    def _images(self, filters=None):
        assert filters == {"label": "io.tfchaos.tf_version"}
        return [SimpleNamespace(id=i) for i in sorted(set(self.images_by_tag.values()) - self.not_ours)]

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
        assert kw["remove"] and kw["network_disabled"] and kw["user"] == "0"
        volumes = kw.get("volumes") or {}
        if "-c" in kw["entrypoint"] and "hashlib" in kw["entrypoint"][2]:  # the scan
            (name,) = volumes or (None,)
            self.log.append(("scan", image, name))
            digest = self.venvs[image] if name is None else self.volumes_by_name[name].content
            if digest is None:
                raise RuntimeError("exec /opt/venv/bin/python: no such file or directory")
            return f"27751 {digest}\n".encode()
        (name,) = volumes
        self.log.append(("fill", name, volumes[name]["bind"], image))
        if self.fill_fails:
            self.volumes_by_name[name].content = "half"
            raise RuntimeError("killed during the copy")
        self.volumes_by_name[name].content = self.venvs[image]
        return b"/opt/venv\n"

    def scans(self):
        return [e for e in self.log if e[0] == "scan"]


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TFCHAOS_CACHE", str(tmp_path))
    monkeypatch.delenv("TFCHAOS_VENV_VOLUME", raising=False)
    return tmp_path


def test_images_with_the_same_venv_share_one_copy_filled_once():
    """The harness's worker image, its deps image and a job built on them: one venv layer, one copy."""
    engine = FakeEngine(
        {
            "tfchaos/worker:tf2.20": "sha256:w20",
            "tfchaos/worker-deps:tf2.20": "sha256:d20",
            "job:dev": "sha256:job",
            "tfchaos/worker:tf2.15": "sha256:w15",
        },
        {"sha256:w20": A20, "sha256:d20": A20, "sha256:job": A20, "sha256:w15": B15},
    )
    names = [
        venv_cache.venv_volume(engine, image)
        for image in ("tfchaos/worker:tf2.20", "job:dev", "tfchaos/worker-deps:tf2.20", "tfchaos/worker:tf2.20")
    ]
    other = venv_cache.venv_volume(engine, "tfchaos/worker:tf2.15")
    assert set(names) == {"tfchaos-venv-" + "a" * 16} and other == "tfchaos-venv-" + "b" * 16
    assert [e[1] for e in engine.log if e[0] == "fill"] == [names[0], other]
    labels = engine.volumes_by_name[names[0]].attrs["Labels"]
    assert labels["io.tfchaos.role"] == "venv" and labels["io.tfchaos.venv"] == A20
    assert "io.tfchaos.run" not in labels  # a cache, not a run's object
    assert sorted(e[1] for e in engine.scans()) == ["sha256:d20", "sha256:job", "sha256:w15", "sha256:w20"]  # once each


def test_each_image_is_scanned_once_also_by_a_later_process():
    engine = FakeEngine({"w": "sha256:w20"}, {"sha256:w20": A20})
    venv_cache.venv_volume(engine, "w")
    venv_cache.venv_volume(engine, "w")
    later = FakeEngine({"w": "sha256:w20"}, {"sha256:w20": A20})  # another run, same cache folder
    later.volumes_by_name = engine.volumes_by_name
    venv_cache.venv_volume(later, "w")
    assert engine.scans() == [("scan", "sha256:w20", None)] and later.scans() == []


def test_a_copy_filled_by_a_process_with_another_cache_folder_is_scanned_not_refilled(cache_dir, monkeypatch):
    engine = FakeEngine({"w": "sha256:w20"}, {"sha256:w20": A20})
    name = venv_cache.venv_volume(engine, "w")
    engine.in_use = {name}  # a run next door mounts it
    monkeypatch.setenv("TFCHAOS_CACHE", str(cache_dir / "elsewhere"))
    assert venv_cache.venv_volume(engine, "w") == name
    assert engine.scans()[-1] == ("scan", "sha256:w20", name)
    assert [e[0] for e in engine.log].count("fill") == 1 and ("remove volume", name) not in engine.log


def test_a_scan_that_prints_no_fingerprint_is_an_error_and_remembers_nothing():
    engine = FakeEngine({"w": "sha256:w20"}, {"sha256:w20": "not hex"})
    with pytest.raises(RuntimeError, match="printed"):
        venv_cache.venv_volume(engine, "w")
    engine.venvs["sha256:w20"] = A20
    assert venv_cache.venv_volume(engine, "w") == "tfchaos-venv-" + "a" * 16


def test_a_fill_that_broke_off_is_made_again_from_empty(cache_dir, monkeypatch):
    engine = FakeEngine({"w": "sha256:w20"}, {"sha256:w20": A20})
    engine.fill_fails = True
    with pytest.raises(RuntimeError):
        venv_cache.venv_volume(engine, "w")
    engine.fill_fails = False
    monkeypatch.setenv("TFCHAOS_CACHE", str(cache_dir / "elsewhere"))  # no memory of it: the scan tells
    name = venv_cache.venv_volume(engine, "w")
    assert ("scan", "sha256:w20", name) in engine.log and ("remove volume", name) in engine.log
    assert [e[0] for e in engine.log].count("fill") == 2 and engine.volumes_by_name[name].content == A20


def test_a_broken_copy_in_use_is_left_and_the_image_runs_as_it_is():
    engine = FakeEngine({"w": "sha256:w20"}, {"sha256:w20": A20})
    engine.fill_fails = True
    with pytest.raises(RuntimeError):
        venv_cache.venv_volume(engine, "w")
    (name,) = engine.volumes_by_name
    venv_cache._marker(name).unlink(missing_ok=True)
    engine.in_use = {name}
    assert venv_cache.venv_volume(engine, "w") is None
    assert name in engine.volumes_by_name


def test_a_rebuilt_venv_gets_a_new_copy_and_the_old_one_goes_once_no_image_holds_it():
    engine = FakeEngine(
        {"w": "sha256:old", "job": "sha256:job"}, {"sha256:old": A20, "sha256:new": B15, "sha256:job": A20}
    )
    old = venv_cache.venv_volume(engine, "w")
    assert venv_cache.venv_volume(engine, "job") == old  # the job shares it
    engine.images_by_tag = {"w": "sha256:new", "job": "sha256:job"}
    new = venv_cache.venv_volume(engine, "w")
    assert new != old and old in engine.volumes_by_name  # the job's image still holds that venv
    del engine.images_by_tag["job"]
    engine.in_use = {old}  # a run still mounts it
    engine.images_by_tag["x"] = "sha256:x"
    engine.venvs["sha256:x"] = "c" * 64
    venv_cache.venv_volume(engine, "x")
    assert old in engine.volumes_by_name  # the engine refused; the next prune tries again
    engine.in_use = set()
    engine.images_by_tag["y"] = "sha256:y"
    engine.venvs["sha256:y"] = "d" * 64
    venv_cache.venv_volume(engine, "y")
    assert old not in engine.volumes_by_name and new in engine.volumes_by_name


def test_images_not_built_on_ours_hold_nothing_and_an_unreadable_one_stops_the_prune():
    engine = FakeEngine({"w": "sha256:w", "other": "sha256:o"}, {"sha256:w": A20, "sha256:o": B15})
    engine.not_ours = {"sha256:o"}
    engine._create(
        "tfchaos-venv-" + "b" * 16, {"io.tfchaos.project": "tfchaos", "io.tfchaos.role": "venv", "io.tfchaos.venv": B15}
    )
    engine.images_by_tag["broken"] = "sha256:broken"
    engine.venvs["sha256:broken"] = None  # its scan fails: what it holds is unknown
    venv_cache.venv_volume(engine, "w")
    assert "tfchaos-venv-" + "b" * 16 in engine.volumes_by_name  # nothing removed on a guess
    del engine.images_by_tag["broken"]
    engine.images_by_tag["y"] = "sha256:y"
    engine.venvs["sha256:y"] = "d" * 64
    venv_cache.venv_volume(engine, "y")
    assert "tfchaos-venv-" + "b" * 16 not in engine.volumes_by_name  # only a foreign image had that venv


def test_copies_keyed_by_image_id_from_before_are_removed():
    engine = FakeEngine({"w": "sha256:w20"}, {"sha256:w20": A20})
    engine._create(
        "tfchaos-venv-aaaaaaaaaaaa",
        {"io.tfchaos.project": "tfchaos", "io.tfchaos.role": "venv", "io.tfchaos.image": "sha256:w20"},
    )
    venv_cache.venv_volume(engine, "w")
    assert "tfchaos-venv-aaaaaaaaaaaa" not in engine.volumes_by_name


def test_only_where_image_reads_cost_a_host_process_unless_told():
    assert venv_cache.wanted(FakeEngine({}, driver="fuse-overlayfs"))
    assert not venv_cache.wanted(FakeEngine({}, driver="overlay2"))


def test_the_environment_decides_when_set(monkeypatch):
    monkeypatch.setenv("TFCHAOS_VENV_VOLUME", "0")
    assert not venv_cache.wanted(FakeEngine({}, driver="fuse-overlayfs"))
    monkeypatch.setenv("TFCHAOS_VENV_VOLUME", "1")
    assert venv_cache.wanted(FakeEngine({}, driver="overlay2"))


# --- a job's image: served when built on ours, with our venv as its Python --------------------


def _image_engine(config):
    return SimpleNamespace(images=SimpleNamespace(get=lambda ref: SimpleNamespace(attrs={"Config": config})))


OURS = {"io.tfchaos.project": "tfchaos", "io.tfchaos.tf_version": "2.20.0", "io.tfchaos.kind": "example"}
VENV_ENV = ["PATH=/opt/venv/bin:/usr/bin", "VIRTUAL_ENV=/opt/venv"]


@pytest.mark.parametrize(
    "config, served",
    [
        ({"Labels": OURS, "Env": VENV_ENV}, True),  # the example job: FROM tfchaos/worker-deps
        ({"Labels": OURS, "Env": ["PATH=/opt/venv/bin:/usr/bin"]}, True),
        ({"Labels": {}, "Env": VENV_ENV}, False),  # another origin: its /opt/venv may be written at run time
        ({"Labels": OURS, "Env": ["PATH=/usr/local/bin:/usr/bin"]}, False),  # built on ours, Python elsewhere
        ({"Labels": None, "Env": None}, False),
    ],
)
def test_a_job_image_is_served_only_when_built_on_ours_with_our_venv(config, served):
    assert venv_cache.serves(_image_engine(config), "job:latest") is served


def test_an_image_that_cannot_be_read_is_used_as_it_is():
    def missing(ref):
        raise ImageNotFound(ref)

    assert venv_cache.serves(SimpleNamespace(images=SimpleNamespace(get=missing)), "gone:latest") is False


class EngineWithId(FakeEngine):
    def __init__(self, engine_id, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.engine_id = engine_id

    def info(self):
        return {**super().info(), "ID": self.engine_id}


def test_a_copy_seen_filled_on_one_engine_is_not_trusted_on_another_by_its_name():
    here = EngineWithId("AAAA:1111", {"w": "sha256:w20"}, {"sha256:w20": A20})
    name = venv_cache.venv_volume(here, "w")
    assert venv_cache._marker(name, here).exists()
    there = EngineWithId("BBBB:2222", {"w": "sha256:w20"}, {"sha256:w20": A20})  # DOCKER_HOST elsewhere
    there.fill_fails = True
    with pytest.raises(RuntimeError):
        venv_cache.venv_volume(there, "w")  # its copy of that name broke off while filling
    there.fill_fails = False
    assert not venv_cache._marker(name, there).exists()
    assert venv_cache.venv_volume(there, "w") == name  # judged by a scan there, refilled, not by here's note
    assert ("scan", "sha256:w20", name) in there.log and ("remove volume", name) in there.log
