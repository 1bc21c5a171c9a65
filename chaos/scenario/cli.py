"""``chaos list`` and ``chaos validate``: what exists, and whether files are valid.

Both load through ``load_many``: a bad file is reported and the others are
still listed or validated. Anything a file holds is printed escaped
(``chaos.text.clean``), so a description cannot move the cursor or
print a fake ``ok``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from chaos import resources
from chaos.backends.catalog import BACKENDS, DEFAULT_BACKEND, check_backend
from chaos.backends.refusals import refusal
from chaos.checks import RECOVERY_CHECKS, SYMPTOM_CHECKS
from chaos.faults import FAULTS
from chaos.registry import Registry, one_line, params_of
from chaos.scenario.loader import load_many, shown_path
from chaos.scenario.model import current_model
from chaos.text import clean

# The repository's own scenarios, for when the command runs outside the repo root.
PACKAGED_SCENARIOS = resources.builtin_scenarios_dir()


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


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return clean(lines[0]) if lines else ""


def _scenario_lines(directory: Path) -> list[str]:
    lines = [f"scenarios ({shown_path(directory)}):"]
    scenarios, errors = load_many([directory])
    for error in errors:
        path = getattr(error, "path", None)
        if path is None or path == directory:  # the folder itself: missing, empty, no YAML
            lines.append(f"  (none: {clean(error.message)})")
        else:
            lines.append(f"  {shown_path(path.name):60} INVALID (chaos validate {shown_path(path)})")
    for scenario in scenarios:
        lines.append(f"  {shown_path(scenario.source.name if scenario.source else scenario.name)}")
        lines.append(f"      {_first_line(scenario.description)}")
        lines.append(f"      symptom: {_first_line(scenario.explain.symptom)}")
    return lines


def cmd_list(args: argparse.Namespace) -> int:
    current_model()  # plugins register their faults and checks first
    sections = [
        _registry_lines("faults", FAULTS),
        _registry_lines("symptom checks (expect:)", SYMPTOM_CHECKS),
        _registry_lines("recovery checks (recover:)", RECOVERY_CHECKS),
        _scenario_lines(scenario_dir(args.dir)),
    ]
    print("\n\n".join("\n".join(section) for section in sections))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    """Every named file (or every file in the scenario folder), each reported; exit 2 if any is invalid."""
    given = args.files or [scenario_dir(args.dir)]
    scenarios, errors = load_many(given)
    backend = check_backend(args.backend)
    refused = {
        id(s): refusal(shown_path(s.source), [step.fault for step in s.faults], s.cluster.recovery.by, backend)
        for s in scenarios
    }
    errors += [e for e in refused.values() if e is not None]
    scenarios = [s for s in scenarios if refused[id(s)] is None]
    warned = 0
    for scenario in scenarios:
        warnings = scenario.warnings()
        warned += bool(warnings)
        for warning in warnings:
            print(f"warning: {shown_path(scenario.source)}: {clean(warning)}")
        print(
            f"ok: {shown_path(scenario.source)}"
            + (f" ({len(warnings)} warning{'s' if len(warnings) > 1 else ''})" if warnings else "")
        )
    for error in errors:
        print(error.render())
    summary = f"{len(scenarios)} valid, {len(errors)} invalid"
    print(summary + (f", {warned} with warnings" if warned else ""))
    return 2 if errors else 0


def register(subparsers) -> None:
    p = subparsers.add_parser("list", help="list faults, checks and scenarios with their parameters")
    p.add_argument("--dir", help="scenario directory (default: ./scenarios)")
    p.set_defaults(func=cmd_list)

    v = subparsers.add_parser(
        "validate",
        help="validate scenario files (exit 0 when all are valid, 2 otherwise)",
        description="Validate scenario files: every field, every reference, the file name.",
    )
    v.add_argument("files", nargs="*", metavar="PATH", help="scenario files or folders (default: every file in --dir)")
    v.add_argument("--dir", help="scenario directory (default: ./scenarios)")
    v.add_argument(
        "--backend",
        default=DEFAULT_BACKEND,
        metavar="NAME",
        help=f"also refuse scenarios with faults this backend cannot serve: {', '.join(BACKENDS)} "
        f"(default {DEFAULT_BACKEND})",
    )
    v.set_defaults(func=cmd_validate)
