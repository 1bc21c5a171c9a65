"""chaos.resources: the wheel's copy of docker/, scenarios/ and field/ first, then the checkout's;
a clear error when neither is there (never a path inside another package)."""

from pathlib import Path

import pytest

from chaos import resources
from chaos.errors import InfrastructureError

REPO = Path(__file__).resolve().parents[3]


def _layout(monkeypatch, package_dir: Path) -> None:
    monkeypatch.setattr(resources, "PACKAGE_DIR", package_dir)
    monkeypatch.setattr(resources, "ASSETS_DIR", package_dir / "_assets")


def _installed(tmp_path, monkeypatch, with_assets=True):
    """site-packages/chaos as a wheel lays it out; site-packages/docker is the docker SDK's folder."""
    site = tmp_path / "site-packages"
    (site / "chaos").mkdir(parents=True)
    (site / "docker").mkdir()  # the SDK: must never be taken for ours
    (site / "docker" / "worker").mkdir()
    (site / "docker" / "worker" / "Dockerfile").write_text("not ours")
    if with_assets:
        (site / "chaos" / "_assets" / "docker" / "worker").mkdir(parents=True)
        (site / "chaos" / "_assets" / "docker" / "worker" / "Dockerfile").write_text("FROM x\n")
        (site / "chaos" / "_assets" / "scenarios").mkdir(parents=True)
        (site / "chaos" / "_assets" / "field").mkdir(parents=True)
    _layout(monkeypatch, site / "chaos")
    return site


def test_this_checkout_is_found():
    assert resources.source_checkout() == REPO
    assert resources.package_root() == REPO
    assert resources.docker_dir() == REPO / "docker"
    assert resources.builtin_scenarios_dir() == REPO / "scenarios"
    assert resources.builtin_field_dir() == REPO / "field"
    assert resources.compose_root() == REPO


def test_installed_wheel_uses_the_packaged_assets(tmp_path, monkeypatch):
    site = _installed(tmp_path, monkeypatch)
    monkeypatch.chdir(tmp_path)
    assert resources.source_checkout() is None
    assert resources.package_root() == site
    assert resources.docker_dir() == site / "chaos" / "_assets" / "docker"
    assert resources.builtin_scenarios_dir() == site / "chaos" / "_assets" / "scenarios"
    assert resources.builtin_field_dir() == site / "chaos" / "_assets" / "field"
    assert resources.compose_root() == tmp_path  # the user's folder, not site-packages


def test_missing_assets_are_a_clear_error_not_the_docker_sdk_folder(tmp_path, monkeypatch):
    site = _installed(tmp_path, monkeypatch, with_assets=False)
    with pytest.raises(InfrastructureError) as exc:
        resources.docker_dir()
    assert str(site / "chaos" / "_assets" / "docker") in exc.value.message
    assert "worker/Dockerfile" in exc.value.message and "reinstall" in exc.value.hint
    assert resources.builtin_scenarios_dir() == site / "chaos" / "_assets" / "scenarios"  # reported missing by callers
    assert resources.builtin_field_dir() == site / "chaos" / "_assets" / "field"


def test_a_checkout_needs_our_pyproject(tmp_path, monkeypatch):
    (tmp_path / "chaos").mkdir()
    (tmp_path / "docker" / "worker").mkdir(parents=True)
    (tmp_path / "docker" / "worker" / "Dockerfile").write_text("FROM x\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "someone-else"\n')
    _layout(monkeypatch, tmp_path / "chaos")
    assert resources.source_checkout() is None
    with pytest.raises(InfrastructureError):
        resources.docker_dir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "tfchaos"\n')
    assert resources.docker_dir() == tmp_path / "docker"


def test_no_path_is_computed_from_file_locations_elsewhere():
    """Every lookup of docker/, scenarios/ and field/ goes through chaos.resources (issue 10)."""
    offenders = []
    for path in (REPO / "chaos").rglob("*.py"):
        if path.name == "resources.py":
            continue
        text = path.read_text(encoding="utf-8")
        for n, line in enumerate(text.splitlines(), 1):
            if "parents[" in line or "dirname(os.path.dirname" in line:
                offenders.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    assert offenders == [], "use chaos.resources (package_root, docker_dir, builtin_scenarios_dir, ...) instead"
