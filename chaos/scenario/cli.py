"""``chaos list`` and ``chaos validate``: what exists, and whether files are valid."""

from __future__ import annotations

import argparse
from pathlib import Path

from chaos.checks import RECOVERY_CHECKS, SYMPTOM_CHECKS
from chaos.errors import ScenarioError
from chaos.faults import FAULTS
from chaos.scenario.loader import load_scenario, scenario_files
from chaos.scenario.registry import Registry, one_line, params_of

# The repository's own scenarios, for when the command runs outside the repo root.
PACKAGED_SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def scenario_dir(given: str | None) -> Path:
    if given:
        return Path(given)
    local = Path("scenarios")
    return local if local.is_dir() else PACKAGED_SCENARIOS


def _registry_lines(title: str, registry: Registry) -> list[str]:
    lines = [f"{title}:"]
    for name, cls in registry.items():
        lines.append(f"  {name:26} {one_line(cls)}")
        for param in params_of(cls):
            doc = f"  # {param.doc}" if param.doc else ""
            lines.append(f"  {'':26}   {param.render()}{doc}")
    if registry.planned:
        lines.append(f"  planned: {', '.join(sorted(registry.planned))}")
    return lines


def _scenario_lines(directory: Path) -> list[str]:
    lines = [f"scenarios ({directory}):"]
    if not directory.is_dir():
        return lines + ["  (none: no such directory)"]
    for path in scenario_files(directory):
        try:
            scenario = load_scenario(path)
        except ScenarioError:
            lines.append(f"  {path.name:60} INVALID (chaos validate {path})")
            continue
        lines.append(f"  {path.name}")
        lines.append(f"      {scenario.description.strip().splitlines()[0]}")
        lines.append(f"      symptom: {scenario.explain.symptom.strip().splitlines()[0]}")
    return lines


def cmd_list(args: argparse.Namespace) -> int:
    sections = [
        _registry_lines("faults", FAULTS),
        _registry_lines("symptom checks (expect:)", SYMPTOM_CHECKS),
        _registry_lines("recovery checks (recover:)", RECOVERY_CHECKS),
        _scenario_lines(scenario_dir(args.dir)),
    ]
    print("\n\n".join("\n".join(section) for section in sections))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    paths = [p for f in map(Path, args.files) for p in (scenario_files(f) if f.is_dir() else [f])]
    paths = paths or scenario_files(scenario_dir(args.dir))
    if not paths:
        raise ScenarioError("no scenario files to validate", hint="give files, or run from the repository root")
    bad = 0
    for path in paths:
        try:
            load_scenario(path)
        except ScenarioError as exc:
            bad += 1
            print(exc.render())
        else:
            print(f"ok: {path}")
    print(f"{len(paths) - bad} valid, {bad} invalid")
    return 2 if bad else 0


def register(subparsers) -> None:
    p = subparsers.add_parser("list", help="list faults, checks and scenarios with their parameters")
    p.add_argument("--dir", help="scenario directory (default: ./scenarios)")
    p.set_defaults(func=cmd_list)

    v = subparsers.add_parser(
        "validate",
        help="validate scenario files (exit 0 when all are valid, 2 otherwise)",
        description="Validate scenario files: every field, every reference, the file name.",
    )
    v.add_argument("files", nargs="*", metavar="FILE", help="scenario files or folders (default: every file in --dir)")
    v.add_argument("--dir", help="scenario directory (default: ./scenarios)")
    v.set_defaults(func=cmd_validate)
