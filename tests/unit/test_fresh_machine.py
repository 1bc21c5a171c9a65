"""A fresh machine has two commands (README "Two commands"), and what
``bin/up`` installs runs every command the README then shows, including
``pytest --chaos-scenarios scenarios/`` (pytest is one of the project's parts;
before, bin/up installed no pytest and that command failed with
"No module named pytest")."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def installed_by(script: Path) -> set[str]:
    """The distributions a script's ``pip install -e '.[extras]'`` brings beside the project's own."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (extras,) = re.findall(r"pip install [^\n]*-e '\.\[([^\]]*)\]'", script.read_text())
    requirements = list(pyproject["dependencies"])
    for extra in extras.split(","):
        requirements += pyproject["optional-dependencies"][extra.strip()]
    return {re.split(r"[<>=!~\[ ;]", r, maxsplit=1)[0].lower() for r in requirements}


def test_bin_up_installs_pytest_and_its_timeout_plugin_for_the_scenario_items():
    got = installed_by(ROOT / "bin" / "up")
    # pytest-timeout: pyproject's `timeout` option bounds each scenario item.
    assert {"pytest", "pytest-timeout"} <= got, sorted(got)


def test_the_readme_gives_a_fresh_machine_exactly_two_commands():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```bash\n(.*?)```", section, re.S)
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.split("#")[0].strip()]
    assert commands == ["bin/up", "bin/test"]


def test_the_readme_says_which_extra_brings_pytest_to_an_installed_package():
    readme = (ROOT / "README.md").read_text()
    assert "pip install 'tfchaos[test]'" in readme
