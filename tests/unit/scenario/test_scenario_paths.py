"""Paths a user gives -> scenario files; loading many files; `chaos validate` and
`chaos list` on folders with bad files in them."""

import argparse
import os
import shutil
from pathlib import Path

import pytest

from chaos.errors import ScenarioError
from chaos.scenario import cli
from chaos.scenario.loader import ScenarioFileError, load_many, scenario_files, scenario_paths

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"
GOOD = SCENARIOS / "killed-worker-recovers-from-checkpoint.yaml"
SHIPPED = len(scenario_files(SCENARIOS))


def run(argv):
    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.func(args)


@pytest.fixture
def folder(tmp_path):
    """A folder with one good scenario, one invalid one, a README and a subfolder."""
    shutil.copy(GOOD, tmp_path)
    (tmp_path / "bad.yaml").write_text("name: bad\n")
    (tmp_path / "README.md").write_text("notes\n")
    (tmp_path / "sub").mkdir()
    return tmp_path


# --- scenario_paths -------------------------------------------------------------------


def test_files_and_folders_resolve_to_scenario_files_each_once(folder):
    files = scenario_paths([folder, folder / "bad.yaml", folder])
    assert [p.name for p in files] == ["bad.yaml", GOOD.name]


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda d: d / "missing", "missing: no such file or folder"),
        (lambda d: d / "missing.yaml", "missing.yaml: no such file or folder"),
        (
            lambda d: (d / "empty").mkdir() or d / "empty",
            "empty: the folder is empty; it holds no scenario files (*.yaml, *.yml)",
        ),
        (
            lambda d: (d / "docs").mkdir() or (d / "docs" / "a.md").write_text("x") and d / "docs",
            "docs: no scenario files (*.yaml, *.yml) in this folder (it holds 1 other entry)",
        ),
        (lambda d: (d / "x.yaml").mkdir() or d / "x.yaml", "x.yaml: is a folder, not a scenario file"),
        (
            lambda d: (d / "x.json").write_text("{}") and d / "x.json",
            "x.json: not a scenario file: scenario files end in .yaml or .yml",
        ),
    ],
)
def test_paths_that_name_no_scenario_file_are_clear_errors(tmp_path, make, expected):
    path = make(tmp_path)
    with pytest.raises(ScenarioFileError) as caught:
        scenario_paths([path])
    assert caught.value.message.endswith(expected) and caught.value.hint
    assert caught.value.path == path


def test_every_bad_path_is_named_at_once(tmp_path):
    with pytest.raises(ScenarioError) as caught:
        scenario_paths([tmp_path / "a.yaml", tmp_path / "b"])
    assert "a.yaml: no such file" in caught.value.message and "b: no such file" in caught.value.message


def test_no_paths_is_an_error():
    with pytest.raises(ScenarioError, match="no scenario files given"):
        scenario_paths([])


def test_a_pipe_named_yaml_is_refused_not_read(tmp_path):
    fifo = tmp_path / "x.yaml"
    os.mkfifo(fifo)
    scenarios, errors = load_many([fifo])
    assert not scenarios and "x.yaml: not a regular file" in errors[0].message


# --- load_many ------------------------------------------------------------------------


def test_a_bad_file_does_not_stop_the_others(folder):
    scenarios, errors = load_many([folder])
    assert [s.name for s in scenarios] == [GOOD.stem] and scenarios[0].source == folder / GOOD.name
    assert len(errors) == 1 and errors[0].path == folder / "bad.yaml"
    assert "bad.yaml: 2 problems" in errors[0].message and "description: required" in errors[0].message


def test_bad_paths_are_collected_with_bad_files(folder):
    scenarios, errors = load_many([folder / "missing.yaml", GOOD])
    assert [s.name for s in scenarios] == [GOOD.stem]
    assert [e.path.name for e in errors] == ["missing.yaml"]


def test_two_files_with_one_scenario_name_are_an_error_for_the_second(tmp_path):
    (tmp_path / "a").mkdir()
    shutil.copy(GOOD, tmp_path / "a")
    scenarios, errors = load_many([GOOD, tmp_path / "a"])
    assert len(scenarios) == 1 and scenarios[0].source == GOOD
    assert f"is also the name of {GOOD}" in errors[0].message


def test_the_shipped_suite_loads_completely():
    scenarios, errors = load_many([SCENARIOS])
    assert errors == [] and len(scenarios) == SHIPPED >= 17


# --- chaos validate -------------------------------------------------------------------


def test_validate_reports_each_file_and_counts(folder, capsys):
    assert run(["validate", str(folder)]) == 2
    out = capsys.readouterr().out
    assert f"ok: {folder / GOOD.name}" in out and "bad.yaml: 2 problems" in out
    assert out.rstrip().endswith("1 valid, 1 invalid")


@pytest.mark.parametrize("name", ["empty", "noyaml", "x.yaml"])
def test_validate_never_falls_back_to_the_shipped_suite(tmp_path, capsys, name, monkeypatch):
    target = tmp_path / name
    target.mkdir()
    if name == "noyaml":
        (target / "a.txt").write_text("x")
    monkeypatch.chdir(SCENARIOS.parent)  # where ./scenarios exists
    assert run(["validate", str(target)]) == 2
    out = capsys.readouterr().out
    assert out.rstrip().endswith("0 valid, 1 invalid") and f"{SHIPPED} valid" not in out


def test_validate_with_a_missing_dir_is_a_clear_error(tmp_path, capsys):
    assert run(["validate", "--dir", str(tmp_path / "nope")]) == 2
    out = capsys.readouterr().out
    assert "nope: no such file or folder" in out and "Traceback" not in out


def test_validate_prints_warnings_and_still_exits_0(tmp_path, capsys):
    text = GOOD.read_text().replace(
        "timeouts: {bring_up: 120, symptom: 30, total: 240}", "timeouts: {bring_up: 240, symptom: 30, total: 240}"
    )
    path = tmp_path / GOOD.name
    path.write_text(text)
    assert run(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"warning: {path}: timeouts.bring_up: 240 s is not less than timeouts.total (240 s)" in out
    assert f"ok: {path} (1 warning)" in out and "1 valid, 0 invalid, 1 with warnings" in out


def test_validate_prints_file_names_escaped(tmp_path, capsys):
    evil = tmp_path / "\x1b[2Kok: fake\n.yaml"
    evil.write_text("name: x\n")
    assert run(["validate", str(evil)]) == 2
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b[2Kok: fake\\x0a.yaml" in out


# --- chaos list -----------------------------------------------------------------------


def test_list_shows_good_scenarios_and_marks_bad_ones(folder, capsys):
    assert run(["list", "--dir", str(folder)]) == 0
    out = capsys.readouterr().out
    assert f"  {GOOD.name}\n" in out and "symptom:" in out
    assert "bad.yaml" in out and "INVALID (chaos validate" in out


def test_list_with_a_missing_dir_says_so(tmp_path, capsys):
    assert run(["list", "--dir", str(tmp_path / "nope")]) == 0
    assert "(none: " in capsys.readouterr().out


def test_list_escapes_what_a_scenario_says(tmp_path, capsys):
    text = GOOD.read_text()
    path = tmp_path / GOOD.name
    # YAML refuses escapes and bidi overrides; a right-to-left mark is legal text, shown escaped.
    path.write_text(text.replace("description: >-\n  SIGKILL", "description: >-\n  \u200fSIGKILL"))
    assert run(["list", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "\u200f" not in out and "\\u200fSIGKILL" in out
