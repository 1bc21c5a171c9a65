"""The project's one style: ruff's linter and formatter over all of its Python (pyproject.toml
[tool.ruff] says which rules and why). Seconds, so it runs with the unit tests."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def ruff(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("ruff")
    cmd = [exe] if exe else [sys.executable, "-m", "ruff"]
    return subprocess.run([*cmd, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args", [("check", "."), ("format", "--check", ".")], ids=["check", "format"])
def test_ruff_passes(args):
    done = ruff(*args)
    assert done.returncode == 0, (
        f"ruff {' '.join(args)} found:\n{done.stdout}{done.stderr}\n(fix: ruff check --fix . && ruff format .)"
    )


def test_ruff_fails_on_a_lint_error(tmp_path):
    """The check can fail: an unused import and a badly formatted line in a file of its own."""
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nx = {  'a':1}\n")
    assert ruff("check", "--config", str(ROOT / "pyproject.toml"), str(bad)).returncode == 1
    assert ruff("format", "--check", "--config", str(ROOT / "pyproject.toml"), str(bad)).returncode == 1
