"""``chaos audit [--workload FILE] [--mtbf-hours H] [--nodes N] [--battery full|quick] [--report-dir DIR]``.

Exit codes, as ``chaos run``'s: 0 the card was made (and met ``--fail-under``),
1 the overall grade is below ``--fail-under``, 2 bad input (a missing or
invalid workload file, a negative MTBF, ...), 3 a run of the battery broke
(the card is still written, that run "not measured").
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from chaos.errors import InfrastructureError, ScenarioError

DEFAULT_MTBF_HOURS = 24.0
DEFAULT_NODES = 64
GRADE_ORDER = "ABCDF"


def _bad(field: str, got: str, valid: str, hint: str) -> ScenarioError:
    return ScenarioError(f"{field}: {valid} (got {got!r})", hint=hint)


def parse_mtbf(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise _bad(
            "--mtbf-hours",
            text,
            "must be a number of hours > 0, one node's mean time between failures",
            "e.g. --mtbf-hours 24 (a node fails once a day on average)",
        )
    return value


def _whole(field: str, text: str, low: int, high: int, valid: str, hint: str) -> int:
    value = int(text) if text.strip().isdigit() else 0
    if not low <= value <= high:
        raise _bad(field, text, f"must be a whole number {valid} from {low} to {high}", hint)
    return value


def parse_nodes(text: str) -> int:
    return _whole(
        "--nodes", text, 1, 1_000_000, "of nodes", "the size of the production cluster the job runs on, e.g. --nodes 64"
    )


def parse_jobs(text: str) -> int:
    return _whole("--jobs", text, 1, 16, "of runs at once", "e.g. -j 1 (the default) or -j 3")


def parse_repeat(text: str) -> int:
    from chaos.audit.battery import MAX_REPEAT

    return _whole(
        "--repeat",
        text,
        1,
        MAX_REPEAT,
        "of runs of each fault",
        "e.g. --repeat 3: the timeout-driven figures (partition, paused peer) vary from run to "
        "run, and the card's medians over 3 runs repeat better than one sample (docs/audit.md)",
    )


def cmd_audit(args) -> int:
    from chaos.audit.battery import BATTERIES
    from chaos.audit.card import Assumptions

    mtbf = parse_mtbf(args.mtbf_hours)
    nodes = parse_nodes(args.nodes)
    jobs = parse_jobs(args.jobs)
    repeat = parse_repeat(args.repeat)
    if args.battery not in BATTERIES:
        raise _bad(
            "--battery",
            args.battery,
            f"must be one of {', '.join(BATTERIES)}",
            "full: every fault (about 10 min); quick: reference, killed worker, paused peer",
        )
    if args.fail_under is not None and args.fail_under.upper() not in GRADE_ORDER:
        raise _bad(
            "--fail-under",
            args.fail_under,
            f"must be a grade: {', '.join(GRADE_ORDER)}",
            "e.g. --fail-under C: exit 1 when the overall grade is D or F",
        )
    if args.agree_with is not None:
        from chaos.audit.agreement import read_card

        read_card(args.agree_with)  # a bad file is said before the battery runs, not after
    workload = None
    if args.workload is not None:
        if not Path(args.workload).exists():
            raise _bad(
                "--workload",
                args.workload,
                "must be an existing workload file (image or build, command, checkpoint_dir)",
                "docs/workloads.md shows one; omit --workload to audit the built-in harness",
            )
        from chaos.scenario.workload_file import load_workload

        workload = load_workload(args.workload)
    return _run(args, workload, Assumptions(mtbf, nodes), jobs, repeat)


def _run(args, workload, assumptions, jobs: int, repeat: int = 1) -> int:
    from chaos.audit.render_text import markdown
    from chaos.audit.run import AuditRequest, any_broken, audit, command_line, write_card
    from chaos.live import view as live
    from chaos.runner.cli import preflight

    report_dir = Path(args.report_dir) if args.report_dir else None
    request = AuditRequest(
        args.workload,
        workload,
        args.battery,
        assumptions,
        report_dir,
        jobs,
        command=command_line(_argv(args)),
        repeat=repeat,
    )
    show = live.view()
    try:
        card, reports = audit(request, show=show, preflight=preflight)
    finally:
        show.close()
    print(markdown(card))
    if report_dir is not None:
        paths = write_card(card, report_dir)
        print(f"card: {paths['html']} ({paths['markdown'].name}, {paths['json'].name})")
    if args.agree_with:
        from chaos.audit.agreement import compare, read_card, table

        print(f"against {args.agree_with}:\n" + table(compare(card.to_dict_json(), read_card(args.agree_with))))
    if any_broken(reports):
        return InfrastructureError.exit_code
    if args.fail_under is not None:
        letter = card.overall.letter
        limit = args.fail_under.upper()
        if letter not in GRADE_ORDER or GRADE_ORDER.index(letter) > GRADE_ORDER.index(limit):
            print(f"overall grade {letter} is below --fail-under {limit}", file=sys.stderr)
            return 1
    return 0


def _argv(args) -> list[str]:
    """The options as given, for the card's reproduce line."""
    out = []
    for flag, value in (
        ("--workload", args.workload),
        ("--mtbf-hours", args.mtbf_hours),
        ("--nodes", args.nodes),
        ("--battery", args.battery),
        ("--repeat", None if args.repeat == "1" else args.repeat),
        ("--report-dir", args.report_dir),
    ):
        if value is not None:
            out += [flag, str(value)]
    return out


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "audit",
        help="a resilience report card for a training job: a battery of faults, measured, graded (docs/audit.md)",
    )
    p.add_argument(
        "--workload",
        metavar="FILE",
        help="your job (image or build, command, checkpoint_dir; docs/workloads.md); default: the built-in harness",
    )
    p.add_argument(
        "--mtbf-hours",
        default=str(DEFAULT_MTBF_HOURS),
        metavar="H",
        help=f"one node's mean time between failures, hours (default {DEFAULT_MTBF_HOURS:g})",
    )
    p.add_argument(
        "--nodes",
        default=str(DEFAULT_NODES),
        metavar="N",
        help=f"nodes of the production cluster the job fails with (default {DEFAULT_NODES})",
    )
    p.add_argument("--battery", default="full", metavar="NAME", help="full (default) or quick")
    p.add_argument(
        "--repeat",
        default="1",
        metavar="N",
        help="run each fault N times (1..5, default 1); the card's R and D are medians over the runs",
    )
    p.add_argument("--report-dir", metavar="DIR", help="write card.html, card.md, card.json and every run's report")
    p.add_argument(
        "--jobs",
        "-j",
        default="1",
        metavar="N",
        help="fault runs side by side (1..16, default 1: each run alone, so its restart and "
        "detection times are the job's, not the battery's own load; -j 3 is faster)",
    )
    p.add_argument("--fail-under", metavar="GRADE", help="exit 1 when the overall grade is below this (A..F)")
    p.add_argument(
        "--agree-with",
        metavar="CARD_JSON",
        help="print each measured figure beside the same one of an "
        "earlier card (its card.json) and whether they agree within 20 %%",
    )
    p.set_defaults(func=cmd_audit)
