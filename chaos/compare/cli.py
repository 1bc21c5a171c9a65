"""``chaos compare``: run a suite on a baseline and a candidate, or compare two report folders."""

from __future__ import annotations

import json
from pathlib import Path

from chaos.compare import render
from chaos.compare.analysis import compare
from chaos.compare.spec import ChangeSpec, load_spec
from chaos.compare.stats import Thresholds
from chaos.errors import ScenarioError
from chaos.report.model import Report

DEFAULT_REPORT_DIR = "reports/compare"


def read_reports(folder: Path) -> list[Report]:
    """Every scenario report (JSON) under ``folder``, in every pass sub-folder."""
    if not folder.is_dir():
        raise ScenarioError(
            f"{folder}: not a folder of reports",
            hint="give two folders written by `chaos run --report-dir` or `chaos compare`",
        )
    reports = []
    for path in sorted(folder.rglob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:
            raise ScenarioError(
                f"{path}: not a readable JSON report: {type(exc).__name__}",
                hint="remove it or point at the report folder itself",
            ) from None
        if isinstance(data, dict) and {"scenario", "verdicts", "timeline"} <= data.keys():
            reports.append(Report.from_dict(data))
    if not reports:
        raise ScenarioError(
            f"{folder}: holds no scenario report (*.json from chaos run --report-dir)",
            hint="run `chaos run SCENARIO --report-dir DIR` first",
        )
    return reports


def run_sides(
    scenarios: list[str],
    baseline: ChangeSpec,
    candidate: ChangeSpec,
    repeat: int,
    jobs: int,
    report_dir: Path,
    progress=print,
) -> tuple[list[Report], list[Report]]:
    """Each side ``repeat`` times, interleaved in ABBA order (baseline, candidate,
    candidate, baseline, ...): the machine's noise falls on both sides, and neither
    side always runs second (measured: with plain alternation the second side ran
    slower in a compare of a configuration against itself)."""
    from chaos.runner.entries import load_entries, preflight
    from chaos.runner.run import RunOptions
    from chaos.runner.suite import SuiteEntry, run_suite

    entries = load_entries(scenarios)
    sides = [
        (name, spec, [SuiteEntry(spec.apply(e.scenario), e.file) for e in entries])
        for name, spec in (("baseline", baseline), ("candidate", candidate))
    ]
    for _name, spec, _ in sides:
        preflight(RunOptions(proxy_image=spec.proxy_image))
    out: dict[str, list[Report]] = {"baseline": [], "candidate": []}
    for i in range(1, repeat + 1):
        for name, spec, side_entries in sides if i % 2 else sides[::-1]:
            options = RunOptions(proxy_image=spec.proxy_image, report_dir=report_dir / name / f"run-{i}")
            reports = run_suite(side_entries, options, jobs=jobs)
            out[name] += reports
            passed = sum(r.status.value == "pass" for r in reports)
            progress(f"run {i}/{repeat} {name} ({spec.name}): {passed}/{len(reports)} passed")
    return out["baseline"], out["candidate"]


def cmd_compare(args) -> int:
    thresholds = Thresholds(alpha=args.alpha, min_relative=args.min_change)
    report_dir = Path(args.report_dir)
    if args.baseline is None and args.candidate is None:
        if len(args.paths) != 2:
            raise ScenarioError(
                "chaos compare needs --baseline and --candidate, or two report folders",
                hint="chaos compare --baseline default --candidate tf=2.18 [SCENARIO...]; or chaos compare DIR_A DIR_B",
            )
        a, b = (Path(p) for p in args.paths)
        baseline, candidate = read_reports(a), read_reports(b)
        names = (str(a), str(b))
    elif args.baseline is None or args.candidate is None:
        raise ScenarioError("give both --baseline and --candidate", hint="e.g. --baseline default --candidate tf=2.18")
    else:
        base, cand = load_spec(args.baseline), load_spec(args.candidate)
        baseline, candidate = run_sides(
            args.paths, base, cand, args.repeat, args.jobs, report_dir, progress=lambda line: print(line, flush=True)
        )
        names = (base.name, cand.name)
    result = compare(baseline, candidate, baseline_name=names[0], candidate_name=names[1], thresholds=thresholds)
    print(render.terminal(result))
    paths = render.write_all(result, report_dir)
    print(f"written: {', '.join(str(p) for p in paths.values())}")
    return 1 if result.regressions else 0


def _positive(kind, low, high):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise ValueError(text) from None
        if not low <= value <= high:
            raise ValueError(text)
        return value

    parse.__name__ = f"{kind.__name__} in {low}..{high}"
    return parse


def register(subparsers) -> None:
    from chaos.runner.entries import DEFAULT_JOBS

    p = subparsers.add_parser(
        "compare",
        help="run scenarios on a baseline and a candidate (or compare two report folders)",
        description="Run every scenario N times on each side, interleaved, and report verdict changes, "
        "timing shifts beyond noise and environment differences. Exit 0: no regression; 1: a regression.",
    )
    p.add_argument(
        "paths",
        nargs="*",
        metavar="SCENARIO|DIR",
        help="scenario files or folders (default: the shipped suite); or two report folders",
    )
    p.add_argument(
        "--baseline",
        metavar="SPEC",
        help="`default`, a spec YAML file, or key=value,... "
        "(tf, heartbeat_timeout_s, collective_timeout_s, restart, max_restarts, image, env.NAME, proxy_image, cpus, memory_mb)",
    )
    p.add_argument("--candidate", metavar="SPEC", help="the change to validate, same forms as --baseline")
    p.add_argument(
        "--repeat",
        type=_positive(int, 1, 50),
        default=5,
        metavar="N",
        help="runs of each scenario on each side (default 5; 4 or more to call a timing change)",
    )
    p.add_argument(
        "--alpha",
        type=_positive(float, 0.0001, 0.5),
        default=0.05,
        help="significance level of the Mann-Whitney U test (default 0.05)",
    )
    p.add_argument(
        "--min-change",
        type=_positive(float, 0.0, 10.0),
        default=0.2,
        metavar="FRACTION",
        help="smallest median change that counts, relative to the baseline (default 0.2)",
    )
    p.add_argument(
        "-j",
        "--jobs",
        type=_positive(int, 1, 16),
        default=DEFAULT_JOBS,
        metavar="N",
        help=f"scenarios side by side within a run (default {DEFAULT_JOBS})",
    )
    p.add_argument(
        "--report-dir",
        default=DEFAULT_REPORT_DIR,
        metavar="DIR",
        help=f"reports of every run and compare.md/.json/-junit.xml (default {DEFAULT_REPORT_DIR})",
    )
    p.set_defaults(func=cmd_compare)
