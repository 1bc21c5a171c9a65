"""Failures become one-line InfrastructureErrors with a hint, never tracebacks."""

import io

import pytest

from chaos.cli import main
from chaos.errors import InfrastructureError
from chaos.images import base, engine, wheelhouse


class FakePopen:
    def __init__(self, output, rc):
        self.stdout = io.StringIO(output)
        self._rc = rc

    def wait(self, timeout=None):
        return self._rc

    def poll(self):
        return self._rc


def _fake_pip(monkeypatch, output, rc=1):
    calls = []

    def popen(cmd, **kw):
        calls.append(cmd)
        return FakePopen(output, rc)

    monkeypatch.setattr(wheelhouse.subprocess, "Popen", popen)
    return calls


def test_no_wheel_for_version(monkeypatch, tmp_path):
    monkeypatch.setenv("TFCHAOS_CACHE", str(tmp_path))
    _fake_pip(
        monkeypatch,
        "ERROR: Could not find a version that satisfies the requirement tensorflow-cpu==2.99.*\n"
        "ERROR: No matching distribution found for tensorflow-cpu==2.99.*\n",
    )
    with pytest.raises(InfrastructureError) as exc:
        wheelhouse.ensure_wheelhouse("tf2.99", None, wheelhouse.Lock(("tensorflow-cpu==2.99.*",)))
    assert "tensorflow-cpu==2.99.*" in exc.value.message and "\n" not in exc.value.message
    assert "manylinux x86_64" in exc.value.message
    assert "--platform manylinux1_x86_64" in exc.value.hint and "'tensorflow-cpu==2.99.*'" in exc.value.hint
    assert not (tmp_path / "wheels" / "tf2.99" / ".lock").exists()  # nothing half-locked


def test_no_network(monkeypatch, tmp_path):
    monkeypatch.setenv("TFCHAOS_CACHE", str(tmp_path))
    _fake_pip(
        monkeypatch,
        "WARNING: Retrying ... NewConnectionError('<pip._vendor.urllib3.connection...>: "
        "Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')\n"
        "ERROR: Could not install packages due to ...\n",
    )
    with pytest.raises(InfrastructureError) as exc:
        wheelhouse.ensure_wheelhouse("proxy", wheelhouse.Lock(("aiohttp==3.14.5",)))
    assert "cannot reach the package index" in exc.value.message
    assert str(tmp_path / "wheels" / "proxy") in exc.value.hint


def test_download_uses_target_platform_and_no_deps_for_locks(monkeypatch, tmp_path):
    monkeypatch.setenv("TFCHAOS_CACHE", str(tmp_path))
    calls = _fake_pip(monkeypatch, "", rc=0)
    with pytest.raises(InfrastructureError):  # the fake downloads nothing
        wheelhouse.ensure_wheelhouse("proxy", wheelhouse.Lock(("aiohttp==3.14.5",), ("tf-keras==2.20.1",)))
    cmd = calls[0]
    assert cmd[1:4] == ["-m", "pip", "download"]
    assert "--no-deps" in cmd and "aiohttp==3.14.5" in cmd and "tf-keras==2.20.1" in cmd
    assert ["--python-version", "3.11"] == cmd[cmd.index("--python-version") : cmd.index("--python-version") + 2]
    assert "manylinux_2_17_x86_64" in cmd and "--only-binary=:all:" in cmd


def test_unlocked_resolution_writes_a_lock(monkeypatch, tmp_path):
    """tensorflow-cpu with deps, tf-keras without; the lock records both groups."""
    monkeypatch.setenv("TFCHAOS_CACHE", str(tmp_path))

    def popen(cmd, **kw):
        dest = cmd[cmd.index("--dest") + 1]
        names = (
            ["tf_keras-2.18.0-py3-none-any.whl"]
            if "--no-deps" in cmd
            else [
                "tensorflow_cpu-2.18.1-cp311-cp311-manylinux_2_17_x86_64.whl",
                "numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.whl",
            ]
        )
        for n in names:
            open(f"{dest}/{n}", "wb").write(b"x")
        return FakePopen("", 0)

    monkeypatch.setattr(wheelhouse.subprocess, "Popen", popen)
    d, lock, files = wheelhouse.ensure_wheelhouse(
        "tf2.18", None, wheelhouse.Lock(("tensorflow-cpu==2.18.*",), ("tf-keras==2.18.*",))
    )
    assert lock.requirements == ("numpy==1.26.4", "tensorflow-cpu==2.18.1")
    assert lock.nodeps == ("tf-keras==2.18.0",)
    assert wheelhouse.read_lock(f"{d}/.lock") == lock and len(files) == 3
    # second time: offline, no pip at all
    monkeypatch.setattr(wheelhouse.subprocess, "Popen", None)
    assert wheelhouse.ensure_wheelhouse("tf2.18", None, None)[1] == lock


def test_docker_not_running(monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(InfrastructureError) as exc:
        engine.docker_client()
    assert "Docker engine" in exc.value.message and exc.value.hint


def test_cli_renders_errors_without_traceback(monkeypatch, capsys):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    assert main(["images", "status"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: cannot reach the Docker engine") and "Traceback" not in err


def test_cli_bad_version(capsys):
    assert main(["images", "build", "--tf", "banana"]) == 2
    assert "bad TensorFlow version 'banana'" in capsys.readouterr().err


def test_debootstrap_needs_root(monkeypatch):
    monkeypatch.setattr(base.os, "geteuid", lambda: 1000)
    with pytest.raises(InfrastructureError) as exc:
        base.bootstrap_base(client=None)
    assert "root" in exc.value.message and "--base-image" in exc.value.hint


def test_debootstrap_failure_is_clear(monkeypatch, tmp_path):
    monkeypatch.setattr(base.os, "geteuid", lambda: 0)
    monkeypatch.setattr(base, "_debootstrap_path", lambda: "/usr/sbin/debootstrap")
    monkeypatch.setenv("TFCHAOS_DEBIAN_MIRROR", "http://mirror.example/debian")
    monkeypatch.setenv("TFCHAOS_TMP", str(tmp_path))

    def popen(cmd, **kw):
        assert cmd[-1] == "http://mirror.example/debian" and "--variant=minbase" in cmd
        return FakePopen("I: Retrieving InRelease\nE: Failed getting release file http://mirror.example/...\n", 1)

    monkeypatch.setattr(base.subprocess, "Popen", popen)
    with pytest.raises(InfrastructureError) as exc:
        base.bootstrap_base(client=None)
    assert "debootstrap" in exc.value.message and "E: Failed getting release file" in exc.value.message
    assert list(tmp_path.iterdir()) == []  # scratch dir removed


def test_unknown_build_method_is_a_clear_error(monkeypatch):
    from chaos.images import builder

    monkeypatch.setenv("TFCHAOS_BUILD_METHOD", "buildkit")
    with pytest.raises(InfrastructureError) as exc:
        builder.build_method()
    assert "'buildkit'" in exc.value.message and "commit, dockerfile" in exc.value.hint
    monkeypatch.delenv("TFCHAOS_BUILD_METHOD")
    assert builder.build_method() == "commit"
