"""The TensorFlow distribution and wheels per engine architecture (issue 41, item 4).

The resolution runs the real ``pip download`` with the platform options the build
uses (chaos.images.wheelhouse.pip_target), offline: ``--no-index`` and a find-links
folder of small wheels made here, named and tagged as PyPI's are (``tensorflow-cpu``
for x86-64 only, ``tensorflow`` for both), through pip's own environment settings.
"""

from __future__ import annotations

import zipfile

import pytest

from chaos.errors import InfrastructureError
from chaos.images import engine, wheelhouse
from chaos.images.plans import installed_tf_version, proxy_plans, worker_plans
from chaos.images.versions import engine_arch, parse_tf_version

X86 = "manylinux_2_17_x86_64.manylinux2014_x86_64"
ARM = "manylinux_2_17_aarch64.manylinux2014_aarch64"


def wheel(folder, name: str, version: str, tag: str, requires: tuple[str, ...] = ()) -> str:
    """A minimal installable-looking wheel: METADATA with its dependencies, WHEEL with its tag."""
    dist = name.replace("-", "_")
    filename = f"{dist}-{version}-{tag}.whl"
    info = f"{dist}-{version}.dist-info"
    with zipfile.ZipFile(folder / filename, "w") as z:
        z.writestr(
            f"{info}/METADATA",
            "Metadata-Version: 2.1\n"
            f"Name: {name}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires),
        )
        z.writestr(f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: {tag}\n")
        z.writestr(f"{info}/RECORD", "")
    return filename


@pytest.fixture
def index(tmp_path, monkeypatch):
    """PyPI's shape for these names, as a find-links folder; pip told to use only it."""
    links = tmp_path / "index"
    links.mkdir()
    wheel(links, "numpy", "2.4.6", f"cp311-cp311-{X86}")
    wheel(links, "numpy", "2.4.6", f"cp311-cp311-{ARM}")
    wheel(links, "tensorflow-cpu", "2.20.0", f"cp311-cp311-{X86}", ("numpy>=1.26",))  # x86-64 only
    wheel(links, "tensorflow", "2.20.0", f"cp311-cp311-{X86}", ("numpy>=1.26",))
    wheel(links, "tensorflow", "2.20.0", f"cp311-cp311-{ARM}", ("numpy>=1.26",))
    wheel(links, "tf-keras", "2.20.1", "py3-none-any", ("tensorflow<2.21,>=2.20",))
    wheel(links, "tensorflow-cpu", "2.14.1", f"cp311-cp311-{X86}", ("numpy>=1.23",))  # no aarch64 wheel at all
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    monkeypatch.setenv("TFCHAOS_CACHE", str(tmp_path / "cache"))
    return links


def resolve(version: str, arch: str):
    spec = parse_tf_version(version, arch)
    unlocked = wheelhouse.Lock(tuple(spec.requirements()), tuple(spec.nodeps_requirements()))
    return spec, wheelhouse.ensure_wheelhouse(spec.wheelhouse_key, None, unlocked, arch=arch)


def test_an_aarch64_engine_gets_tensorflow_and_aarch64_wheels_in_a_wheelhouse_of_its_own(index):
    spec, (directory, lock, files) = resolve("2.20", "aarch64")
    assert spec.requirements() == ["tensorflow==2.20.*"] and spec.nodeps_requirements() == ["tf-keras==2.20.*"]
    assert directory.endswith("/wheels/tf2.20-aarch64")
    assert lock.requirements == ("numpy==2.4.6", "tensorflow==2.20.0") and lock.nodeps == ("tf-keras==2.20.1",)
    assert sorted(files) == [
        f"numpy-2.4.6-cp311-cp311-{ARM}.whl",
        f"tensorflow-2.20.0-cp311-cp311-{ARM}.whl",
        "tf_keras-2.20.1-py3-none-any.whl",
    ]


def test_an_x86_64_engine_resolves_tensorflow_cpu_as_before(index):
    spec, (directory, lock, files) = resolve("2.20", "x86_64")
    assert spec.requirements() == ["tensorflow-cpu==2.20.*"] and spec.wheelhouse_key == "tf2.20"
    assert directory.endswith("/wheels/tf2.20")
    assert lock.requirements == ("numpy==2.4.6", "tensorflow-cpu==2.20.0")
    assert all("aarch64" not in f for f in files)


def test_a_version_without_an_aarch64_wheel_is_one_clear_error(index):
    with pytest.raises(InfrastructureError) as err:
        resolve("2.14", "aarch64")
    assert err.value.message == (
        "no wheel of tensorflow==2.14.* for Python 3.11 on manylinux aarch64 (the engine's architecture)"
    )
    assert "--platform manylinux2014_aarch64" in err.value.hint and "\n" not in err.value.message
    assert not (index.parent / "cache" / "wheels" / "tf2.14-aarch64" / ".lock").exists()


@pytest.mark.parametrize(
    "reported,ours", [("x86_64", "x86_64"), ("amd64", "x86_64"), ("aarch64", "aarch64"), ("arm64", "aarch64")]
)
def test_the_engines_architecture_names_map_to_ours(reported, ours):
    assert engine_arch(reported) == ours


def test_an_architecture_without_tensorflow_wheels_is_named_with_the_valid_ones():
    with pytest.raises(InfrastructureError) as err:
        engine_arch("s390x", "the Docker engine at tcp://docker:2375")
    assert err.value.message == (
        "the Docker engine at tcp://docker:2375 runs on 's390x', and the images are built for x86_64 and aarch64 only"
    )


class _Engine:
    def __init__(self, arch):
        self.arch = arch

    def info(self):
        return {"Architecture": self.arch}


def test_the_architecture_is_asked_of_the_engine_not_of_this_machine():
    assert engine.architecture(_Engine("aarch64")) == "aarch64"


def test_the_x86_64_plans_are_the_ones_of_before():
    deps, app = worker_plans(parse_tf_version("2.20"))
    assert (deps.wheelhouse_name, deps.arch, deps.tag, app.tag) == (
        "tf2.20",
        "x86_64",
        "tfchaos/worker-deps:tf2.20",
        "tfchaos/worker:tf2.20",
    )
    assert deps.lock is not None and deps.lock.pins["tensorflow-cpu"] == "2.20.0"  # the committed lock
    assert installed_tf_version(deps) == "2.20.0"
    assert proxy_plans()[0].wheelhouse_name == "proxy" and proxy_plans("aarch64")[0].wheelhouse_name == "proxy-aarch64"
    assert "--platform" in wheelhouse.pip_target() and "manylinux1_x86_64" in wheelhouse.pip_target()


def test_an_aarch64_deps_image_has_the_same_tag_and_reports_its_tensorflow_version():
    deps, _ = worker_plans(parse_tf_version("2.20", "aarch64"))
    assert deps.tag == "tfchaos/worker-deps:tf2.20" and deps.wheelhouse_name == "tf2.20-aarch64"
    deps.lock = wheelhouse.Lock(("numpy==2.4.6", "tensorflow==2.20.0"), ("tf-keras==2.20.1",))
    assert installed_tf_version(deps) == "2.20.0"


@pytest.mark.parametrize("version", ["2.20", "2.21"])
def test_the_committed_aarch64_lock_is_the_x86_64_one_with_tensorflow_for_tensorflow_cpu(version):
    x86, arm = parse_tf_version(version), parse_tf_version(version, "aarch64")
    assert arm.lock_dir is not None and arm.lock_dir.endswith(f"docker/worker/tf{version}-aarch64")
    x86_lock, arm_lock = wheelhouse.read_lock(x86.lock_dir), wheelhouse.read_lock(arm.lock_dir)
    want = {("tensorflow" if name == "tensorflow-cpu" else name): v for name, v in x86_lock.pins.items()}
    assert arm_lock.pins == want and arm_lock.nodeps == x86_lock.nodeps and arm_lock.fully_pinned


def test_the_debian_package_images_are_refused_for_an_engine_of_another_architecture(monkeypatch):
    from chaos.images import deb_image, netns_helper

    monkeypatch.setenv("DOCKER_HOST", "tcp://192.0.2.7:2375")
    monkeypatch.setattr(deb_image, "this_machine_arch", lambda: "x86_64")
    with pytest.raises(InfrastructureError) as err:
        netns_helper.ensure_helper_image(_Engine("aarch64"))
    assert err.value.message == (
        "the network helper is made of Debian packages that apt fetches on this machine "
        "(x86_64), and the engine at tcp://192.0.2.7:2375 is aarch64"
    )


def test_the_debian_base_is_not_bootstrapped_here_for_an_engine_of_another_architecture(monkeypatch):
    from chaos.images import base

    monkeypatch.setattr(base, "this_machine_arch", lambda: "x86_64")
    monkeypatch.setattr(base, "bootstrap_base", lambda *a, **k: pytest.fail("bootstrapped"))
    with pytest.raises(InfrastructureError) as err:
        base._refuse_other_arch("aarch64", "python:3.11-slim-bookworm")
    assert "is aarch64 and has no base image; the Debian base bootstrapped here would be x86_64" in err.value.message
    assert "docker pull python:3.11-slim-bookworm" in err.value.hint
    base._refuse_other_arch("x86_64", "python:3.11-slim-bookworm")  # the same: nothing raised
