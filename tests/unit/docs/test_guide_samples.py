"""The guide's sample plugin (examples/plugins/tfchaos_samples.py, walked through in
docs/write-a-fault.md and docs/write-a-check.md) loads as a plugin, validates in a
scenario, injects and heals on the fake cluster, and judges hand-built timelines;
and every Python block of those two pages compiles, the sample's own blocks word
for word as the file has them."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import pytest
from fake_backend import FakeCluster, FakeWorkers

from chaos import plugins
from chaos.checks import RECOVERY_CHECKS, SYMPTOM_CHECKS, run_check
from chaos.checks.verdict import Status
from chaos.errors import ScenarioError
from chaos.events import RUNNER, ErrorEvent, HealEvent, InjectEvent, RestartEvent, StartEvent, StepEvent
from chaos.faults import FAULTS
from chaos.scenario.loader import scenario_from_dict
from chaos.timeline import RunInfo, Timeline

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "examples" / "plugins"
MODULE = "tfchaos_samples"
NAMES = {"pause_workers", "first_to_fail", "restart_rounds_at_most"}
PAGES = [ROOT / "docs" / "write-a-fault.md", ROOT / "docs" / "write-a-check.md"]


@pytest.fixture(scope="module")
def samples():
    sys.path.insert(0, str(SAMPLES))
    import os

    before = os.environ.get(plugins.ENV)
    os.environ[plugins.ENV] = MODULE
    try:
        plugins.load()
        yield sys.modules[MODULE]
    finally:
        if before is None:
            os.environ.pop(plugins.ENV, None)
        else:
            os.environ[plugins.ENV] = before
        sys.path.remove(str(SAMPLES))
        sys.modules.pop(MODULE, None)
        plugins._loaded.discard(MODULE)
        for registry in (FAULTS, SYMPTOM_CHECKS, RECOVERY_CHECKS):  # leave the registries as they were
            for name in [n for n in registry.names() if n in NAMES]:
                registry._classes.pop(name)
                registry.version += 1


def scenario(**fault):
    return {
        "name": "samples",
        "description": "d",
        "explain": {"symptom": "s", "cause": "c", "fix": "f"},
        "cluster": {"workers": 4},
        "faults": [{"pause_workers": fault or {"workers": [1, 2]}, "at": {"step": 30}, "for": 20}],
        "expect": [{"first_to_fail": {"workers": [0]}}],
        "recover": [{"restart_rounds_at_most": {"rounds": 1}}],
    }


def test_the_sample_plugin_registers_a_fault_and_two_checks(samples):
    assert FAULTS.get("pause_workers") is samples.PauseWorkers
    assert "first_to_fail" in SYMPTOM_CHECKS and "restart_rounds_at_most" in RECOVERY_CHECKS


def test_a_scenario_using_the_samples_validates(samples):
    sc = scenario_from_dict(scenario())
    assert sc.faults[0].fault.workers == [1, 2]
    assert sc.expect[0].workers == [0] and sc.recover[0].rounds == 1


def test_a_worker_the_cluster_lacks_is_refused_like_a_built_in_faults(samples):
    with pytest.raises(ScenarioError, match=r"faults\[0\]\.pause_workers\.workers.*4 is out of range"):
        scenario_from_dict(scenario(workers=[1, 4]))


def test_pause_workers_pauses_each_and_its_undo_unpauses_them_in_reverse(samples):
    cluster = FakeCluster(num_slots=3)
    undo = FAULTS.get("pause_workers")(workers=[1, 2]).inject(cluster)
    assert cluster.paused == {1, 2}
    undo(cluster)
    undo(cluster)  # a second call does nothing more
    assert cluster.paused == set()
    assert cluster.calls == [("pause", 1), ("pause", 2), ("unpause", 2), ("unpause", 1)]


def test_a_cluster_without_the_freezing_ability_is_refused_by_type(samples):
    from chaos.backends.abilities import UnsupportedVerb

    cluster = FakeWorkers(num_slots=3)  # the required interface only
    with pytest.raises(UnsupportedVerb, match="pause"):
        FAULTS.get("pause_workers")(workers=[1, 2]).inject(cluster)
    assert cluster.calls == []


def test_a_half_done_pause_is_undone_as_far_as_it_got(samples):
    from chaos.faults.undo import Undo

    cluster = FakeCluster(num_slots=3)
    cluster.paused.add(2)  # pausing worker 2 raises, as the engine's 409 does
    undo = Undo()
    with pytest.raises(RuntimeError):
        FAULTS.get("pause_workers")(workers=[1, 2]).inject(cluster, undo)
    undo(cluster)
    assert cluster.paused == {2} and cluster.calls[-1] == ("unpause", 1)


def timeline(*events):
    return Timeline(RunInfo(num_workers=2, steps_per_epoch=10, epochs=3, save_interval_steps=10), list(events))


def steps(t, step, workers=(0, 1)):
    return [StepEvent(t=t, source=f"worker-{w}", step=step, epoch=(step - 1) // 10) for w in workers]


INJECT = InjectEvent(t=10.0, source=RUNNER, fault="pause_workers", target="worker-1")


def error(t, worker):
    return ErrorEvent(t=t, source=f"worker-{worker}", error_class="UnavailableError", message="Socket closed")


@pytest.mark.parametrize(
    "errors, status",
    [
        ([error(11.0, 0), error(11.5, 1)], Status.PASS),
        ([error(11.0, 1), error(11.5, 0)], Status.FAIL),
        ([], Status.FAIL),
        ([error(90.0, 0)], Status.FAIL),  # after within_s
    ],
)
def test_first_to_fail(samples, errors, status):
    check = SYMPTOM_CHECKS.get("first_to_fail")(workers=[0])
    verdict = run_check(check, timeline(StartEvent(t=1.0, source="worker-0"), *steps(5.0, 1), INJECT, *errors))
    assert verdict.status is status, verdict.reason


def test_first_to_fail_without_the_inject_is_unknown(samples):
    check = SYMPTOM_CHECKS.get("first_to_fail")(workers=[0])
    verdict = run_check(check, timeline(*steps(5.0, 1), error(11.0, 0)))
    assert verdict.status is Status.UNKNOWN and "never injected" in verdict.reason


def restart(t, worker):
    return RestartEvent(t=t, source=f"worker-{worker}", reason="restart policy: all")


def test_restart_rounds_counts_restarts_with_no_step_between_as_one(samples):
    check = RECOVERY_CHECKS.get("restart_rounds_at_most")(rounds=1)
    one = timeline(*steps(5.0, 1), INJECT, restart(12.0, 0), restart(12.1, 1), *steps(15.0, 2))
    two = timeline(*steps(5.0, 1), INJECT, restart(12.0, 0), *steps(15.0, 2), restart(16.0, 0), *steps(18.0, 3))
    assert run_check(check, one).status is Status.PASS
    verdict = run_check(check, two)
    assert verdict.status is Status.FAIL and verdict.reason == "2 restart round(s); allowed 1"


def test_restart_rounds_with_nothing_restarted_or_healed_is_unknown(samples):
    check = RECOVERY_CHECKS.get("restart_rounds_at_most")(rounds=1)
    assert run_check(check, timeline(*steps(5.0, 1), INJECT)).status is Status.UNKNOWN
    healed = timeline(*steps(5.0, 1), INJECT, HealEvent(t=20.0, source=RUNNER, fault="pause_workers"), *steps(21.0, 2))
    assert run_check(check, healed).status is Status.PASS  # no restart round: 0 <= 1


def python_blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(), re.S)


def quoted(block: str) -> tuple[Path | None, str]:
    """A block whose first line is ``# <path>`` quotes that file: (the file, the rest)."""
    first, _, rest = block.partition("\n")
    path = ROOT / first[2:].strip() if first.startswith("# ") else None
    return (path, rest) if path is not None and path.is_file() else (None, block)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_python_block_of_the_guide_compiles(page):
    blocks = python_blocks(page)
    assert blocks, f"{page.name} has no python block"
    for block in blocks:
        compile(textwrap.dedent(quoted(block)[1]), str(page), "exec")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_block_that_names_its_file_is_that_files_own_text(page):
    quotes = [quoted(b) for b in python_blocks(page)]
    assert any(path == SAMPLES / f"{MODULE}.py" for path, _ in quotes), f"{page.name} quotes none of the sample"
    for path, text in quotes:
        if path is not None:
            assert text in path.read_text(), f"{page.name}: a block differs from {path.relative_to(ROOT)}:\n{text}"
