"""Faults and checks from outside the package: registered after import (a
plugin module named in TFCHAOS_PLUGINS or an entry point), they are valid in
scenario files, listed, and run; a broken plugin is one clear error."""

from __future__ import annotations

import sys

import pytest

from chaos import plugins
from chaos.checks import RECOVERY_CHECKS, SYMPTOM_CHECKS
from chaos.errors import ScenarioError
from chaos.faults import FAULTS
from chaos.scenario.loader import scenario_from_dict

PLUGIN = '''
from typing import ClassVar
from pydantic import Field
from chaos.faults.base import WorkerFault, register_fault
from chaos.checks.base import SymptomCheck, register_check
from chaos.checks.verdict import passed


@register_fault
class SlowDisk(WorkerFault):
    """A plugin fault."""

    name: ClassVar[str] = "slow_disk_{tag}"
    mb_per_s: int = Field(10, ge=1)

    def inject(self, cluster):
        cluster.record_call = ("slow_disk", self.worker, self.mb_per_s)


@register_check
class SawIt(SymptomCheck):
    """A plugin check."""

    name: ClassVar[str] = "saw_it_{tag}"

    def judge(self, timeline):
        return passed("saw it", [self.window(timeline).inject])
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch, request):
    tag = request.node.name[-6:].strip("_[]").replace("-", "_") or "x"
    module = f"chaos_test_plugin_{tag}"
    (tmp_path / f"{module}.py").write_text(PLUGIN.replace("{tag}", tag))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(plugins.ENV, module)
    yield tag
    sys.modules.pop(module, None)
    for registry in (FAULTS, SYMPTOM_CHECKS, RECOVERY_CHECKS):  # leave the registries as they were
        for name in [n for n in registry.names() if n.endswith(tag) and n.startswith(("slow_disk", "saw_it"))]:
            registry._classes.pop(name)
            registry.version += 1


def scenario(tag):
    return {
        "name": "plugin",
        "description": "d",
        "explain": {"symptom": "s", "cause": "c", "fix": "f"},
        "faults": [{f"slow_disk_{tag}": {"worker": 1, "mb_per_s": 5}, "at": {"step": 3}}],
        "expect": [{f"saw_it_{tag}": None}],
    }


def test_a_plugin_fault_and_check_registered_after_import_are_valid_in_a_scenario(plugin):
    sc = scenario_from_dict(scenario(plugin))
    assert sc.faults[0].fault.name == f"slow_disk_{plugin}" and sc.faults[0].fault.mb_per_s == 5
    assert sc.expect[0].name == f"saw_it_{plugin}"


def test_without_the_plugin_the_fault_is_unknown_with_the_valid_names(monkeypatch, tmp_path):
    with pytest.raises(ScenarioError, match="unknown fault 'slow_disk_nope'"):
        scenario_from_dict(scenario("nope"))


def test_a_plugin_that_fails_to_import_is_one_clear_error(monkeypatch, tmp_path):
    (tmp_path / "chaos_broken_plugin.py").write_text("raise RuntimeError('boom')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(plugins.ENV, "chaos_broken_plugin")
    with pytest.raises(ScenarioError) as exc:
        plugins.load()
    assert "plugin 'chaos_broken_plugin' (TFCHAOS_PLUGINS) failed to load: RuntimeError: boom" in exc.value.message


def test_chaos_list_shows_plugin_faults(plugin, capsys):
    from chaos.cli import main

    assert main(["list"]) == 0
    assert f"slow_disk_{plugin}" in capsys.readouterr().out
