"""bin/test's plan (tests/plan.py): every test module runs in exactly one phase, and
only modules that may share the machine with the scenarios run beside them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load_plan():
    spec = importlib.util.spec_from_file_location("tfchaos_test_plan", ROOT / "tests" / "plan.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def runs_of(plan, module: Path) -> list[str]:
    """Where a test module runs: each session that runs it whole, or some of its tests."""
    rel = module.relative_to(ROOT)
    places = []
    for path, deselected in plan.placements():
        file = Path(path.split("::")[0])
        if file != rel and file not in rel.parents:
            continue
        if "::" in path:
            places.append(f"{path} (alone)")
        else:
            places.append(f"{path}" + "".join(f" minus {d}" for d in deselected if Path(d.split("::")[0]) == rel))
    return places


def test_every_test_module_runs_in_exactly_one_phase():
    """Each module is run whole by exactly one session; a test of it picked out to run
    alone is deselected there, so every test runs once."""
    plan = load_plan()
    for module in sorted((ROOT / "tests").rglob("test_*.py")):
        rel = str(module.relative_to(ROOT))
        places = runs_of(plan, module)
        whole = [p for p in places if not p.endswith("(alone)")]
        alone = [p.removesuffix(" (alone)") for p in places if p.endswith("(alone)")]
        assert len(whole) == 1, f"{rel} is run by {places or 'no phase'} (tests/plan.py)"
        for node in alone:
            assert f"minus {node}" in whole[0], f"{node} runs alone and again in {whole[0]} (tests/plan.py)"


def test_a_path_the_plan_names_exists():
    plan = load_plan()
    for path, deselected in plan.placements():
        for node in [path, *deselected]:
            file, _, test = node.partition("::")
            assert (ROOT / file).exists(), node
            assert not test or f"def {test}(" in (ROOT / file).read_text(), node


def test_only_modules_marked_to_run_beside_the_scenarios_do():
    plan = load_plan()
    integration = sorted((ROOT / "tests" / "integration").glob("test_*.py"))
    marked = {str(m.relative_to(ROOT)) for m in integration if "chaos_beside_scenarios" in m.read_text()}
    beside = {p for p in plan.SCENARIOS_BESIDE if p.startswith("tests/integration/")}
    assert beside == marked


def test_a_phase_says_how_busy_the_machine_was():
    plan = load_plan()
    assert plan.busy_share((100, 900), (250, 950)) == "machine busy 75 %"
    assert plan.busy_share(None, (1, 1)) == "machine busy: unknown"
    now = plan.cpu_ticks()
    assert now is None or (now[0] > 0 and now[1] >= 0)


def test_a_phase_says_how_long_the_machine_stalled_on_io():
    plan = load_plan()
    assert plan.io_stall_share(1_000_000, 97_000_000) == "I/O stall 96 s"
    assert plan.io_stall_share(None, 5) == "I/O stall: unknown"
    now = plan.io_stall_us()
    assert now is None or now >= 0


def test_a_failed_test_of_any_session_is_named_again_at_the_end(tmp_path, capsys):
    """CI shows a log's tail: the closing lines name each failed test of every session, the
    first session's (printed as it runs) as well as a lane's (printed from its file)."""
    plan = load_plan()
    for name in ("first", "lane"):
        (tmp_path / f"test_{name}.py").write_text(
            f"def test_{name}_passes():\n    pass\n\ndef test_{name}_fails():\n    assert 1 == 2, 'the {name} broke'\n"
        )
    sessions = plan.Sessions([[str(tmp_path / "test_first.py")], [str(tmp_path / "test_lane.py")]])
    assert sessions.run() == [1, 1]
    out = capsys.readouterr().out
    assert "test_first_passes PASSED" in out or "1 passed" in out
    assert [[line.split(" - ")[0].rsplit("::", 1)[1] for line in lines] for lines in sessions.failures] == [
        ["test_first_fails"],
        ["test_lane_fails"],
    ]
    assert "the lane broke" in sessions.failures[1][0]


def test_failure_lines_keep_only_the_short_summary_of_a_test_and_cut_a_long_message():
    plan = load_plan()
    text = "\n".join(
        ["tests/x.py F", "=== 1 failed ===", "FAILED tests/x.py::test_a - " + "m" * 1000, "ERROR tests/y.py"]
    )
    assert [len(line) for line in plan.failure_lines(text)] == [plan.SUMMARY_LINE_CHARS, len("ERROR tests/y.py")]
