"""``chaos matrix``: run degraded-network cells side by side and print what TF does."""

from __future__ import annotations

from pathlib import Path

from chaos.checks.verdict import Status
from chaos.errors import ScenarioError
from chaos.matrix.cells import DIRECTIONS, TARGETS, TOXICS, WHENS, Cell, select
from chaos.matrix.outcome import bit_exact, first_sign_s, judge_cell, outcome
from chaos.report.model import Report

BOUND_HINT = {
    "mid_training": "bound it: a collective timeout (CommunicationOptions(timeout_seconds=N); scenario: "
    "training.collective_timeout_s) turns a held collective into DeadlineExceededError "
    "(scenarios/port-blackholed-mid-training-times-out-then-recovers.yaml)",
    "bring_up": "bound it from outside: nothing in training runs yet, so only a start deadline does it (the "
    "orchestrator's, or the coordination service's registration timeout, "
    "configure_coordination_service(cluster_register_timeout_in_ms=...))",
}


def table(rows: list[tuple[Cell, Report]]) -> str:
    """A row per cell: its verdict's outcome, first sign and reason, and whether its run recovered bit-exact."""
    out = [
        "| toxic | direction | target | when | outcome | first sign s | bit-exact recovery | detail |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for cell, report in rows:
        verdict = judge_cell(report)
        sign = first_sign_s(verdict)
        detail = verdict.reason.replace("|", "\\|")
        out.append(
            f"| {cell.toxic} | {cell.direction} | {cell.target} | {cell.when.replace('_', ' ')} | "
            f"**{outcome(verdict)}** | {'-' if sign is None else f'{sign:.1f}'} | {bit_exact(report)} | {detail} |"
        )
    return "\n".join(out)


def run_cells(cells: list[Cell], jobs: int, report_dir: Path | None) -> list[tuple[Cell, Report]]:
    from chaos.runner.run import RunOptions
    from chaos.runner.suite import SuiteEntry, run_suite

    entries = [SuiteEntry(c.scenario(), f"<matrix {c.name}>") for c in cells]
    reports = run_suite(entries, RunOptions(report_dir=report_dir), jobs=jobs)
    by_name = {r.scenario: r for r in reports}
    return [(c, by_name[c.name]) for c in cells]


def rows_from_reports(cells: list[Cell], folders: list[Path]) -> tuple[list[tuple[Cell, Report]], list[Cell]]:
    """The selected cells that have a report in ``folders`` (earlier runs' --report-dir),
    read; and the selected cells that have none (said, never dropped silently)."""
    from chaos.report import read_json

    found = {path.stem: path for folder in folders for path in folder.glob("matrix-*.json")}
    rows = [(c, read_json(found[c.name])) for c in cells if c.name in found]
    return rows, [c for c in cells if c.name not in found]


def cmd_matrix(args) -> int:
    from chaos.runner.entries import preflight
    from chaos.runner.run import RunOptions

    cells = select(args.toxic, args.direction, args.target, args.when)
    if not cells:
        one_way = [
            f"{t}: {', '.join(TOXICS[t]['directions'])} only" for t in (args.toxic or ()) if "directions" in TOXICS[t]
        ]
        raise ScenarioError(
            "no cell of the matrix has this toxic, direction, target and time",
            hint="; ".join(one_way) or "see chaos matrix --help for the valid values",
        )
    if args.from_reports:
        rows, missing = rows_from_reports(cells, [Path(d) for d in args.from_reports])
        if missing:
            print(
                f"{len(missing)} of the {len(cells)} selected cells have no report (not run): "
                + ", ".join(c.name.removeprefix("matrix-") for c in missing)
            )
        if not rows:
            raise ScenarioError(
                "no report of any selected cell in " + ", ".join(args.from_reports),
                hint="run chaos matrix --report-dir DIR first",
            )
    else:
        preflight(RunOptions())
        print(f"{len(cells)} cells, {args.jobs} at a time", flush=True)
        rows = run_cells(cells, args.jobs, Path(args.report_dir) if args.report_dir else None)
    text = table(rows)
    print(text)
    verdicts = [(c, judge_cell(r)) for c, r in rows]
    hangs = [c for c, v in verdicts if v.failed]
    for cell in hangs:
        print(f"FINDING: {cell.name} hangs silently for the whole fault window; {BOUND_HINT[cell.when]}")
    if args.markdown:
        Path(args.markdown).write_text(text + "\n", encoding="utf-8")
        print(f"written: {args.markdown}")
    if any(v.status is Status.UNKNOWN for _, v in verdicts):
        return 3
    return 1 if hangs else 0


def register(subparsers) -> None:
    from chaos.runner.entries import DEFAULT_JOBS

    p = subparsers.add_parser(
        "matrix",
        help="what TF does on a degraded network: toxic x direction x target x time",
        description="Runs one scenario per cell and prints, per cell, the outcome in the fault window "
        "(a bounded error with its class, normal progress, progress slowed by a factor, or a hang), the time "
        "to the first sign and whether recovery was bit-exact. Exit 1 when a cell hangs silently.",
    )
    p.add_argument("--toxic", nargs="+", choices=list(TOXICS), help="default: all")
    p.add_argument("--direction", nargs="+", choices=list(DIRECTIONS), help="default: all")
    p.add_argument("--target", nargs="+", choices=list(TARGETS), help="default: both")
    p.add_argument("--when", nargs="+", choices=list(WHENS), help="default: both")
    p.add_argument("-j", "--jobs", type=int, default=DEFAULT_JOBS, metavar="N", help="cells side by side")
    p.add_argument("--markdown", metavar="FILE", help="also write the table to FILE")
    p.add_argument("--report-dir", metavar="DIR", help="each cell's JSON report and worker logs")
    p.add_argument(
        "--from-reports",
        nargs="+",
        metavar="DIR",
        help="classify the cells' reports of earlier runs (their --report-dir) instead of running",
    )
    p.set_defaults(func=cmd_matrix)
