"""``chaos run [SCENARIO...]``: run scenarios (default: the whole suite).

Exit codes: 0 all passed, 1 a check failed or was unknown, 2 invalid
scenario, 3 a run broke (infrastructure error). Every scenario given appears
in the summary, the JSON reports and JUnit, also when its run broke.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from chaos import resources
from chaos.checks.verdict import Status
from chaos.cluster import live
from chaos.errors import ChaosError, InfrastructureError, ScenarioError
from chaos.report import terminal_summary, write_junit
from chaos.report.html_index import write_index
from chaos.runner.run import RunOptions, broken_report
from chaos.runner.suite import Entry, run_suite
from chaos.scenario.loader import load_many
from chaos.scenario.text import clean

SUITE_DIR = resources.builtin_scenarios_dir()
DEFAULT_JOBS = 3  # measured: see README, "the scenario suite"


def display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def load_entries(paths: list[str], workload_file: str | None = None) -> list[Entry]:
    """Every file validated before anything starts; every problem reported at once
    (no path: the suite that ships with tfchaos). ``workload_file``: run every
    scenario against that workload (each scenario is validated against it)."""
    loaded = load_many(paths or [SUITE_DIR])
    if workload_file is not None and loaded.scenarios:
        from chaos.workload.load import load_workload

        workload = load_workload(workload_file)
        scenarios = []
        for scenario in loaded.scenarios:
            try:
                scenarios.append(scenario.with_workload(workload))
            except ScenarioError as exc:
                loaded.errors.append(ScenarioError(
                    f"{scenario.source} with --workload {workload_file}: {exc.message}", hint=exc.hint
                ))
        loaded = loaded._replace(scenarios=scenarios)
    if loaded.errors:
        if len(loaded.errors) == 1:
            raise loaded.errors[0]
        total = len(loaded.errors) + len(loaded.scenarios)
        raise ScenarioError(
            f"{len(loaded.errors)} of {total} scenario files are invalid; nothing was run:\n"
            + "\n".join(e.render() for e in loaded.errors),
            hint="`chaos validate FILE` checks one file",
        )
    return [Entry(s, display_path(Path(s.source))) for s in loaded.scenarios]


def preflight(options: RunOptions) -> None:
    """Once, not per scenario: the Docker engine answers, a user's proxy image exists."""
    from chaos.backends.docker import api as docker_api

    client = docker_api.connect()
    if not options.our_proxy:
        docker_api.require_image(client, options.proxy_image)


def say_warnings(entries: list[Entry]) -> None:
    """What ``chaos validate`` warns about (settings that cannot matter, checks that
    will be unknown), said before anything starts."""
    for entry in entries:
        for warning in entry.scenario.warnings():
            print(f"warning: {clean(entry.file)}: {clean(warning)}", flush=True)


def cmd_run(args) -> int:
    entries = load_entries(args.scenarios, args.workload)
    say_warnings(entries)
    options = RunOptions(
        proxy_image=args.proxy_image,
        report_dir=Path(args.report_dir) if args.report_dir else None,
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
        write_junit(reports, options.report_dir / "junit.xml")
        write_index(reports, options.report_dir)
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
    p.add_argument("--report-dir", metavar="DIR", help="write a JSON report and an HTML page per scenario, junit.xml, index.html and worker logs")
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
    p.set_defaults(func=cmd_run)
