"""``chaos run [SCENARIO...]``: run scenarios (default: the whole suite).

Exit codes: 0 all passed, 1 a check failed or was unknown, 2 invalid
scenario, 3 a run broke (infrastructure error). Every scenario given appears
in the summary, the JSON reports and JUnit, also when its run broke.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from chaos.backends.catalog import BACKENDS, DEFAULT_BACKEND, check_backend
from chaos.checks.verdict import Status
from chaos.errors import ChaosError, InfrastructureError
from chaos.live import view as live
from chaos.report import outputs, terminal_summary
from chaos.runner.entries import DEFAULT_JOBS, backend_named, load_entries, preflight, refuse_for_backend
from chaos.runner.run import RunOptions, broken_report
from chaos.runner.suite import SuiteEntry, run_suite
from chaos.text import clean


def say_warnings(entries: list[SuiteEntry]) -> None:
    """What ``chaos validate`` warns about (settings that cannot matter, checks that
    will be unknown), said before anything starts."""
    for entry in entries:
        for warning in entry.scenario.warnings():
            print(f"warning: {clean(entry.file)}: {clean(warning)}", flush=True)


def cmd_run(args) -> int:
    backend = check_backend(getattr(args, "backend", DEFAULT_BACKEND))  # callers that build args by hand give none
    entries = load_entries(args.scenarios, args.workload)
    refuse_for_backend(entries, backend)  # before anything starts: exit 2
    say_warnings(entries)
    options = RunOptions(
        proxy_image=args.proxy_image,
        report_dir=Path(args.report_dir) if args.report_dir else None,
        backend=backend_named(backend),
    )
    show = live.view()  # a live panel on a terminal, today's plain lines otherwise (CI)
    try:
        preflight(options)
    except ChaosError as exc:
        print(exc.render(), file=sys.stderr, flush=True)
        reports = [broken_report(e.scenario, e.file, exc, _no_events(), 0.0, options) for e in entries]
    else:
        try:
            reports = run_suite(entries, options, jobs=args.jobs, show=show)
        finally:
            show.close()
    if options.report_dir is not None:
        outputs.write_suite(reports, options.report_dir)
    print(terminal_summary(reports))
    if any(r.status is Status.ERROR for r in reports):
        return InfrastructureError.exit_code
    return 0 if all(r.status is Status.PASS for r in reports) else 1


def _no_events():
    from chaos.eventlog import EventLog

    return EventLog()


def _jobs(text: str) -> int:
    value = int(text) if text.isdigit() else -1
    if not 1 <= value <= 16:
        raise ValueError(text)
    return value


def register(subparsers) -> None:
    p = subparsers.add_parser("run", help="run scenarios (default: the whole suite in scenarios/)")
    p.add_argument("scenarios", nargs="*", metavar="SCENARIO", help="scenario files or folders")
    p.add_argument(
        "--report-dir",
        metavar="DIR",
        help="write a JSON report and an HTML page per scenario, junit.xml, index.html and worker logs",
    )
    p.add_argument(
        "--jobs",
        "-j",
        type=_jobs,
        default=int(os.environ.get("TFCHAOS_JOBS", DEFAULT_JOBS)),
        metavar="N",
        help=f"run up to N scenarios at once (1..16, default {DEFAULT_JOBS}); scenarios that judge step "
        "times always run alone",
    )
    p.add_argument(
        "--workload",
        metavar="FILE",
        help="run every scenario against this workload (your job's image and command; docs/workloads.md)",
    )
    p.add_argument(
        "--proxy-image",
        metavar="IMAGE",
        default=None,
        help="run the proxy from this Toxiproxy-API server image instead of ours (e.g. the official "
        "Toxiproxy server); it must exist locally and serve the API on 0.0.0.0:8474 with its default command",
    )
    p.add_argument(
        "--backend",
        default=DEFAULT_BACKEND,
        metavar="NAME",
        help=f"where clusters run: {' or '.join(BACKENDS)} (default {DEFAULT_BACKEND}: this Docker host; swarm: the "
        "swarm manager DOCKER_HOST or the Docker context names, images already on its nodes; docs/backends.md)",
    )
    p.set_defaults(func=cmd_run)
