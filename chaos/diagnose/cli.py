"""``chaos diagnose LOG...``: exit 0 when a failure of the catalogue matches,
1 when none does or no answer is confident (failures of different families fit
equally well), 2 for bad input (a missing file, an empty folder, a binary file)."""

from __future__ import annotations

import argparse
from pathlib import Path


def _top(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 50:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to 50; got {text!r}")
    return value


def cmd_diagnose(args) -> int:
    from chaos.diagnose import DiagnoseError, diagnose
    from chaos.diagnose.match import confident
    from chaos.diagnose.render import render

    findings = Path(args.findings) if args.findings else None
    if findings is not None and not findings.is_file():
        raise DiagnoseError(
            f"--findings {findings}: no such file",
            hint="give the Markdown file of measurements the catalogue cites (default: docs/findings.md)",
        )
    timeline = Path(args.timeline) if args.timeline else None
    if timeline is not None and not timeline.parent.is_dir():
        raise DiagnoseError(
            f"--timeline {timeline}: no folder {timeline.parent}",
            hint="give a file in an existing folder; it gets the events read from the logs as JSON",
        )
    workers, ranked, notes = diagnose(args.logs, args.scenarios or None, findings)
    if timeline is not None:
        _write_timeline(timeline, workers)
    print(render(workers, ranked, args.top, notes))
    return 0 if confident(ranked) else 1


def _write_timeline(path: Path, workers) -> None:
    import json

    from chaos.diagnose import DiagnoseError
    from chaos.diagnose.history import timeline_json, timeline_of

    try:
        path.write_text(json.dumps(timeline_json(timeline_of(workers)), indent=1) + "\n", encoding="utf-8")
    except OSError as exc:
        raise DiagnoseError(
            f"--timeline {path}: cannot write it ({exc.strerror or exc})",
            hint="give a file you can write; it gets the events read from the logs as JSON",
        ) from exc


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "diagnose",
        help="which measured failure do a job's logs show? (ranked, with evidence, cause, fix)",
        description="Match the logs of a failed or hung job against the catalogue of failures the scenarios "
        "measured, and print the most likely ones with the evidence lines, the explanation and the command "
        "that reproduces each here. Exit 0: a match; 1: nothing matches, or no confident match (failures "
        "of different families fit equally well: the candidates and the suspicious lines are shown); 2: bad input.",
    )
    p.add_argument(
        "logs",
        nargs="+",
        metavar="LOG",
        help="worker log files, folders of them, or a `kubectl logs` dump with several pods in one file",
    )
    p.add_argument(
        "--scenarios",
        action="append",
        metavar="PATH",
        help="scenario files or folders that make the catalogue (repeatable; default: scenarios/)",
    )
    p.add_argument(
        "--findings", metavar="FILE", help="the measurements the catalogue cites (default: docs/findings.md)"
    )
    p.add_argument(
        "--top", type=_top, default=3, metavar="N", help="show this many failures (default 3; ties are all shown)"
    )
    p.add_argument(
        "--timeline",
        metavar="FILE",
        help="also write the events read from the logs (errors, exits, steps, each with its line) to FILE, "
        "as the JSON timeline a run's report holds",
    )
    p.set_defaults(func=cmd_diagnose)
