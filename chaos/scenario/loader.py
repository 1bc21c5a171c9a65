"""Load scenario files: paths -> files -> YAML -> typed ``Scenario``.

``load_scenario(path)`` raises ``ScenarioError`` naming the file, the line and
column and the field path of each problem, the valid values and a close match;
never a traceback, whatever the file holds (``chaos.scenario.safe_yaml`` reads
it within limits). Files cannot run code: nothing in the format names a Python
object and no YAML tag builds one. Values are typed strictly at this boundary:
``workers: true`` or ``workers: "3"`` is an error, not 1 or 3.

``scenario_paths(given)`` turns the files and folders a user names into
scenario files, and ``load_many(given)`` loads them all, collecting every bad
file's error instead of stopping at the first.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from chaos.errors import ScenarioError
from chaos.scenario import safe_yaml
from chaos.scenario.model import Scenario, current_model
from chaos.scenario.problems import HINT, Problem, ScenarioProblems, problems_of
from chaos.text import clean, kind_of

SCENARIO_SUFFIXES = (".yaml", ".yml")
PATH_HINT = "give scenario files (scenarios/<name>.yaml) or folders that hold them"
YAML_HINT = "check the indentation and quoting; docs/scenarios.md describes the format"


class ScenarioFileError(ScenarioError):
    """A scenario file (or a path given as one) that cannot be used; ``path`` names it."""

    def __init__(self, path: Path, message: str, *, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.path = path


def shown_path(path: str | Path) -> str:
    """A path as it is safe to print: a file name can hold escape sequences or line breaks too."""
    return clean(str(path))


def parse_yaml(text: str, source: str) -> Any:
    """Plain data from YAML text; ScenarioError naming ``source:line:column``."""
    try:
        return safe_yaml.read(text)[0]
    except safe_yaml.YamlProblem as exc:
        raise ScenarioError(f"{clean(source)}:{exc}", hint=YAML_HINT) from None


def _validate(data: Any, source: str, root: safe_yaml.Node | None = None) -> Scenario:
    positions = positions_in(root)
    if not isinstance(data, dict):
        what = "the file is empty" if data is None else f"got {kind_of(data)}"
        problem = Problem((), f"a scenario is a mapping (name: ..., description: ..., explain: ...); {what}")
        raise ScenarioProblems([problem], source=source, positions=lambda p: (1, 1))
    model = current_model()
    try:
        return model.model_validate(data, strict=True)
    except ValidationError as exc:
        problems, more = problems_of(exc, model)
        raise ScenarioProblems(problems, more=more, source=source, positions=positions) from None
    except ScenarioProblems as exc:  # problems across fields, from the model itself
        raise ScenarioProblems(
            exc.problems, more=exc.more, source=source, positions=positions, hint=exc.hint or HINT
        ) from None


def scenario_from_dict(data: Any, source: str = "<scenario>") -> Scenario:
    """A ``Scenario`` from plain data (as YAML gives it), strictly typed; ScenarioError naming each bad field."""
    return _validate(data, clean(source))


def read_text(path: Path) -> str:
    """The text of a scenario file; ScenarioFileError when it is not a readable, small UTF-8 file."""
    source = shown_path(path)
    if path.is_dir():
        raise ScenarioFileError(path, f"{source}: is a folder, not a scenario file", hint=PATH_HINT)
    if path.exists() and not path.is_file():
        raise ScenarioFileError(path, f"{source}: not a regular file (a pipe or a device?)", hint=PATH_HINT)
    try:
        with path.open("rb") as f:
            raw = f.read(safe_yaml.MAX_BYTES + 1)
    except OSError as exc:
        raise ScenarioFileError(
            path, f"{source}: cannot read: {clean(exc.strerror or str(exc))}", hint=PATH_HINT
        ) from None
    if len(raw) > safe_yaml.MAX_BYTES:
        raise ScenarioFileError(
            path,
            f"{source}: more than {safe_yaml.MAX_BYTES // 1024} KiB; a scenario file is a few kB",
            hint="is this the right file?",
        )
    try:
        return safe_yaml.decode(raw)
    except safe_yaml.YamlProblem as exc:
        raise ScenarioFileError(path, f"{source}:{exc}", hint="save the file as UTF-8") from None


def read_yaml(path: Path, hint: str = YAML_HINT) -> tuple[str, Any, safe_yaml.Node | None]:
    """A YAML file (a scenario, a workload): its name as safe to print, its plain
    data and its node tree (for positions); ScenarioFileError naming ``file:line:column``."""
    source = shown_path(path)
    text = read_text(path)
    try:
        data, root = safe_yaml.read(text)
    except safe_yaml.YamlProblem as exc:
        raise ScenarioFileError(path, f"{source}:{exc}", hint=hint) from None
    return source, data, root


def positions_in(root: safe_yaml.Node | None):
    """Where each problem is in the file (None: given as plain data, no positions)."""

    def positions(problem: Problem) -> tuple[int, int] | None:
        return safe_yaml.position(root, problem.loc, problem.at_key) if root is not None else None

    return positions


def load_scenario(path: str | Path) -> Scenario:
    path = Path(path)
    source, data, root = read_yaml(path)
    try:
        scenario = _validate(data, source, root)
    except ScenarioProblems as exc:
        raise ScenarioFileError(path, exc.message, hint=exc.hint) from None
    if scenario.name != path.stem:
        where = safe_yaml.position(root, ("name",)) or (1, 1)
        raise ScenarioFileError(
            path,
            f"{source}:{where[0]}:{where[1]}: name: {scenario.name!r} differs from the file name {clean(repr(path.stem))}",
            hint=f"name the file {scenario.name}.yaml, or set name: {clean(path.stem)}",
        )
    scenario._source = path
    return scenario


def _is_scenario_file(path: Path) -> bool:
    return path.suffix in SCENARIO_SUFFIXES and not path.name.startswith(".")  # .#x.yaml: an editor's lock file


def scenario_files(directory: str | Path) -> list[Path]:
    """The scenario files (*.yaml, *.yml) directly in a folder, sorted; ScenarioFileError for a
    missing or unreadable folder, an empty one, one with no scenario files."""
    directory = Path(directory)
    source = shown_path(directory)
    if not directory.exists():
        raise ScenarioFileError(directory, f"{source}: no such folder", hint=PATH_HINT)
    if not directory.is_dir():
        raise ScenarioFileError(directory, f"{source}: not a folder", hint=PATH_HINT)
    try:
        entries = sorted(directory.iterdir())
    except OSError as exc:
        raise ScenarioFileError(
            directory, f"{source}: cannot read the folder: {clean(exc.strerror or str(exc))}", hint=PATH_HINT
        ) from None
    if not entries:
        raise ScenarioFileError(
            directory, f"{source}: the folder is empty; it holds no scenario files (*.yaml, *.yml)", hint=PATH_HINT
        )
    files = [p for p in entries if _is_scenario_file(p)]
    if not files:
        raise ScenarioFileError(
            directory,
            f"{source}: no scenario files (*.yaml, *.yml) in this folder (it holds {len(entries)} other {'entry' if len(entries) == 1 else 'entries'})",
            hint=PATH_HINT,
        )
    return files


def _resolve(given: Path) -> list[Path]:
    """One path a user gave -> scenario files; ScenarioFileError when it names none."""
    source = shown_path(given)
    if given.is_dir():
        if given.suffix in SCENARIO_SUFFIXES:
            raise ScenarioFileError(given, f"{source}: is a folder, not a scenario file", hint=PATH_HINT)
        return scenario_files(given)
    if not given.exists():
        raise ScenarioFileError(given, f"{source}: no such file or folder", hint=PATH_HINT)
    if given.suffix not in SCENARIO_SUFFIXES:
        raise ScenarioFileError(
            given, f"{source}: not a scenario file: scenario files end in .yaml or .yml", hint=PATH_HINT
        )
    return [given]


def _collect(given: Iterable[str | Path]) -> tuple[list[Path], list[ScenarioFileError]]:
    """Every scenario file named (each once, in the order given) and every path that names none."""
    files: list[Path] = []
    errors: list[ScenarioFileError] = []
    seen: set[Path] = set()
    for item in given:
        try:
            found = _resolve(Path(item))
        except ScenarioFileError as exc:
            errors.append(exc)
            continue
        for path in found:
            key = path.resolve()
            if key not in seen:
                seen.add(key)
                files.append(path)
    return files, errors


def scenario_paths(given: Iterable[str | Path]) -> list[Path]:
    """The scenario files the given files and folders name; one ScenarioError listing every
    path that names none (a missing path, an empty folder, a folder without YAML, a folder
    named x.yaml, a file that is not YAML)."""
    given = list(given)
    if not given:
        raise ScenarioError("no scenario files given", hint=PATH_HINT)
    files, errors = _collect(given)
    if errors:
        if len(errors) == 1:
            raise errors[0]
        raise ScenarioError("\n".join(e.message for e in errors), hint=PATH_HINT)
    return files


class Loaded(NamedTuple):
    """What ``load_many`` found: the valid scenarios (``scenario.source`` is its file) and an error per bad path or file."""

    scenarios: list[Scenario]
    errors: list[ScenarioError]


def load_many(given: Iterable[str | Path]) -> Loaded:
    """Load every scenario the given files and folders name. A bad path or file does not stop the
    others: its ScenarioError (a ``ScenarioFileError`` with ``path``) is collected in ``errors``.
    Two files that give the same scenario name are an error for the second one."""
    files, errors = _collect(given)
    scenarios: list[Scenario] = []
    by_name: dict[str, Path] = {}
    for path in files:
        try:
            scenario = load_scenario(path)
        except ScenarioError as exc:
            errors.append(exc)
            continue
        if scenario.name in by_name:
            errors.append(
                ScenarioFileError(
                    path,
                    f"{shown_path(path)}: name: {scenario.name!r} is also the name of {shown_path(by_name[scenario.name])}",
                    hint="each scenario needs its own name (results and reports are named after it)",
                )
            )
            continue
        by_name[scenario.name] = path
        scenarios.append(scenario)
    return Loaded(scenarios, errors)


def load_scenarios(directory: str | Path) -> list[Scenario]:
    """Every scenario in a folder; one ScenarioError listing every bad file."""
    scenarios, errors = load_many([directory])
    if errors:
        if len(errors) == 1:
            raise errors[0]
        raise ScenarioError("\n".join(e.message for e in errors), hint=HINT)
    return scenarios
