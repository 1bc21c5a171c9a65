"""tfchaos as a user has it (issue 10): the built wheel installed into a fresh
virtualenv (no system site-packages), used from a folder outside the source
tree. The Dockerfiles, TF locks, shipped scenarios and field entries come from the wheel, and
the images built from the checkout count as up to date there (same input
hashes), so nothing is rebuilt.

The virtualenv with the dependencies is cached under $TFCHAOS_CACHE/test-venvs,
keyed by the wheel's declared dependencies and the Python version; the wheel
itself is built and reinstalled on every run. Measured here: a new venv with
the dependencies from the index takes 14-21 s (18 s without pip's cache), the
reinstall of the wheel into the cached one about 2 s.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from chaos.images import DEFAULT_TF_VERSIONS, ensure_images
from chaos.images.wheelhouse import cache_root

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
SCENARIO = "killed-worker-recovers-from-checkpoint.yaml"
# What a wheel is built from (what setup.py and pyproject.toml name).
PACKAGE_INPUTS = ["chaos", "docker", "scenarios", "field", "pyproject.toml", "setup.py", "README.md"]


def _run(argv: list[str], cwd: Path, timeout: float = 600, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def _ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, f"{proc.args} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


@pytest.fixture(scope="module")
def images_from_the_checkout():
    return ensure_images(DEFAULT_TF_VERSIONS, progress=lambda m: print(f"[images] {m}", flush=True))


@pytest.fixture(scope="module")
def wheel(images_from_the_checkout, tmp_path_factory) -> Path:
    """The wheel of the working tree, built from a copy (a build writes build/ and *.egg-info).

    Copied right after the images are ensured, so both see the same files even
    where someone edits the tree meanwhile (the hashes compare file contents).
    """
    src = tmp_path_factory.mktemp("src")
    for name in PACKAGE_INPUTS:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy(path, src / name)
    out = tmp_path_factory.mktemp("dist")
    _ok(
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--disable-pip-version-check",
                "-q",
                str(src),
                "-w",
                str(out),
            ],
            cwd=out,
        )
    )
    (built,) = out.glob("tfchaos-*.whl")
    return built


def _requirements(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        text = zf.read(meta).decode()
    return sorted(
        line.split(":", 1)[1].strip()
        for line in text.splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    )


@pytest.fixture(scope="module")
def venv(wheel) -> Path:
    """A virtualenv with the wheel's dependencies (cached) and this wheel (installed now).

    The lock is held while the module runs: another session reinstalling its own
    wheel into the same venv would change the package under this one's feet.
    """
    reqs = _requirements(wheel)
    key = hashlib.sha256(json.dumps([sys.version_info[:2], reqs]).encode()).hexdigest()[:16]
    root = Path(cache_root()) / "test-venvs"
    root.mkdir(parents=True, exist_ok=True)
    path = root / key
    with open(root / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        python = path / "bin" / "python"
        if not (path / ".complete").exists():
            shutil.rmtree(path, ignore_errors=True)
            _ok(_run([sys.executable, "-m", "venv", str(path)], cwd=root))  # no --system-site-packages
            _ok(_run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *reqs], cwd=root))
            (path / ".complete").write_text("\n".join(reqs) + "\n")
        _ok(
            _run(
                [
                    str(python),
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--disable-pip-version-check",
                    "--no-deps",
                    "--force-reinstall",
                    str(wheel),
                ],
                cwd=root,
            )
        )
        yield path
        fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(scope="module")
def user_repo(tmp_path_factory) -> Path:
    """A folder outside the source tree with one scenario of the user's."""
    folder = tmp_path_factory.mktemp("user-repo")
    assert REPO not in folder.parents
    (folder / "scen").mkdir()
    shutil.copy(REPO / "scenarios" / SCENARIO, folder / "scen" / SCENARIO)
    return folder


@pytest.fixture(scope="module")
def chaos_cmd(venv, user_repo):
    """Run the installed ``chaos`` in the user's folder, with nothing of the checkout on the path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"

    def chaos(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        return _run([str(venv / "bin" / "chaos"), *args], cwd=user_repo, timeout=timeout, env=env)

    return chaos


def test_the_wheel_carries_what_the_framework_needs_at_run_time(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for rel in [
        "docker/worker/Dockerfile",
        "docker/proxy/Dockerfile",
        "docker/venv/Dockerfile",
        "docker/venv/install-venv.sh",
        "docker/venv/add-user.sh",
        "docker/worker/tf2.21/requirements.txt",
        "docker/proxy/requirements.txt",
        f"scenarios/{SCENARIO}",
    ]:
        assert f"chaos/_assets/{rel}" in names, rel
    assert "chaos/scenario/schema.json" in names and "chaos/worker/__main__.py" in names
    shipped = {n.rsplit("/", 1)[1] for n in names if n.startswith("chaos/_assets/scenarios/")}
    assert shipped == {p.name for p in (REPO / "scenarios").glob("*.yaml")}
    field = {n.rsplit("/", 1)[1] for n in names if n.startswith("chaos/_assets/field/")}
    assert field == {p.name for p in (REPO / "field").glob("*.yaml")} | {"README.md"}
    # never top-level "docker": the SDK's name
    assert not any(n.startswith(("docker/", "scenarios/", "field/")) for n in names)


def test_the_installed_package_is_the_wheel_not_the_checkout(venv, user_repo):
    out = _ok(
        _run(
            [
                str(venv / "bin" / "python"),
                "-c",
                "import chaos, chaos.resources as r; from chaos.diagnose.field import field_entries; "
                "print(chaos.__file__); print(r.docker_dir()); print(r.builtin_scenarios_dir()); "
                "print(r.builtin_field_dir()); print(len(field_entries())); print(r.source_checkout())",
            ],
            cwd=user_repo,
        )
    )
    module, docker_dir, scenarios, field, entries, checkout = out.split()
    site = venv / "lib"
    assert Path(module).is_relative_to(site) and Path(docker_dir).is_relative_to(site)
    assert Path(scenarios).is_relative_to(site) and Path(field).is_relative_to(site) and checkout == "None"
    assert int(entries) == len(list((REPO / "field").glob("*.yaml")))


def test_images_status_and_build_from_the_wheel_see_the_checkouts_images(images_from_the_checkout, chaos_cmd):
    status = chaos_cmd("images", "status")
    # 0: every image exists and its inputs hash equals the one computed from the wheel's files
    assert status.returncode == 0, status.stdout + status.stderr
    rows = [line.split() for line in status.stdout.splitlines()[1:]]
    assert {row[0] for row in rows} >= {"base", "proxy", "proxy-deps", "worker:tf2.21", "worker-deps:tf2.15"}
    assert {row[2] for row in rows} == {"exists"}
    build = _ok(chaos_cmd("images", "build"))
    assert "building" not in build and "up to date" in build, build


def test_list_and_validate_from_another_folder(chaos_cmd, venv):
    listing = _ok(chaos_cmd("list"))
    assert SCENARIO.removesuffix(".yaml") in listing
    assert str(venv / "lib") in listing  # the shipped scenarios, from the wheel
    assert chaos_cmd("validate", f"scen/{SCENARIO}").returncode == 0
    bad = chaos_cmd("validate", "scen/missing.yaml")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_run_a_scenario_from_another_folder(images_from_the_checkout, chaos_cmd, user_repo):
    proc = chaos_cmd("run", f"scen/{SCENARIO}", "--report-dir", "reports", timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "building" not in proc.stdout  # nothing rebuilt
    report = json.loads((user_repo / "reports" / SCENARIO.replace(".yaml", ".json")).read_text())
    assert report["status"] == "pass"
    assert {v["status"] for v in report["verdicts"]} == {"pass"}
