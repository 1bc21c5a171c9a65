import pytest

from chaos.errors import ChaosError
from chaos.images import parse_tf_version, plans, wheelhouse, worker_image_tag


def test_215_has_no_tf_keras_and_no_legacy_env():
    spec = parse_tf_version("2.15")
    assert spec.requirements() == ["tensorflow-cpu==2.15.*"]
    assert spec.nodeps_requirements() == []
    assert spec.env() == {}
    assert not spec.legacy_keras


def test_218_gets_tf_keras_without_deps_and_legacy_env():
    spec = parse_tf_version("2.18")
    assert spec.requirements() == ["tensorflow-cpu==2.18.*"]
    assert spec.nodeps_requirements() == ["tf-keras==2.18.*"]
    assert spec.env() == {"TF_USE_LEGACY_KERAS": "1"}
    assert spec.lock_dir is not None and spec.lock_dir.endswith("docker/worker/tf2.18")  # committed lock (c1a413e)
    assert parse_tf_version("2.17").lock_dir is None  # no committed lock: resolved by pip and locked in the cache


def test_patch_version_is_pinned_exactly():
    spec = parse_tf_version("2.18.1")
    assert spec.requirements() == ["tensorflow-cpu==2.18.1"]
    assert spec.nodeps_requirements() == ["tf-keras==2.18.1"]
    assert worker_image_tag("2.18.1") == "tfchaos/worker:tf2.18.1"


def test_tags():
    assert worker_image_tag("2.20") == "tfchaos/worker:tf2.20"
    assert worker_image_tag("tf2.15") == "tfchaos/worker:tf2.15"


@pytest.mark.parametrize("bad", ["", "2", "two.twenty", "2.20.x", "3.1", "2.11", "1.15", "2.20;rm"])
def test_bad_versions_are_clear_errors(bad):
    with pytest.raises(ChaosError) as exc:
        parse_tf_version(bad)
    assert exc.value.hint
    assert "\n" not in exc.value.message


def test_committed_locks():
    """2.20 -> tensorflow-cpu 2.20.0 + tf-keras 2.20.1 (no deps), never the full
    tensorflow wheel; 2.15 -> tensorflow-cpu 2.15.1 only."""
    d20, _ = plans.worker_plans(parse_tf_version("2.20"))
    assert d20.lock.pins["tensorflow-cpu"] == "2.20.0"
    assert d20.lock.nodeps == ("tf-keras==2.20.1",)
    assert "tensorflow" not in d20.lock.pins and "tf-keras" not in {r.split("==")[0] for r in d20.lock.requirements}
    assert d20.lock.fully_pinned
    assert d20.env == {"TF_USE_LEGACY_KERAS": "1"}
    d15, _ = plans.worker_plans(parse_tf_version("2.15"))
    assert d15.lock.pins["tensorflow-cpu"] == "2.15.1"
    assert d15.lock.nodeps == () and "tf-keras" not in d15.lock.pins and "tensorflow" not in d15.lock.pins
    assert d15.env == {}
    proxy, _ = plans.proxy_plans()
    assert {"aiohttp", "uvloop"} <= set(proxy.lock.pins)
    assert proxy.lock.fully_pinned


def test_wheel_names_and_lock_matching(tmp_path):
    assert wheelhouse.wheel_name_version("tf_keras-2.20.1-py3-none-any.whl") == ("tf-keras", "2.20.1")
    assert wheelhouse.wheel_name_version("Foo.Bar-1.0-py3-none-any.whl") == ("foo-bar", "1.0")
    assert wheelhouse.wheel_name_version("notawheel.tar.gz") is None
    lock = wheelhouse.Lock(("tensorflow-cpu==2.20.0",), ("tf-keras==2.20.1",))
    (tmp_path / "tensorflow_cpu-2.20.0-cp311-cp311-manylinux_2_17_x86_64.whl").write_bytes(b"x")
    assert wheelhouse.wheels_for(str(tmp_path), lock) is None  # tf-keras missing
    (tmp_path / "tf_keras-2.20.1-py3-none-any.whl").write_bytes(b"y")
    (tmp_path / "tensorflow-2.20.0-cp311-cp311-manylinux_2_17_x86_64.whl").write_bytes(b"z")  # ignored
    assert wheelhouse.wheels_for(str(tmp_path), lock) == [
        "tensorflow_cpu-2.20.0-cp311-cp311-manylinux_2_17_x86_64.whl",
        "tf_keras-2.20.1-py3-none-any.whl",
    ]


def test_cache_root_env(monkeypatch, tmp_path):
    monkeypatch.setenv("TFCHAOS_CACHE", str(tmp_path))
    assert wheelhouse.wheelhouse_dir("tf2.18") == str(tmp_path / "wheels" / "tf2.18")
