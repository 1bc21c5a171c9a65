"""``chaos run [SCENARIO...]``: run scenarios (default: the whole suite).

Exit codes: 0 all passed, 1 a check failed or was unknown, 2 invalid
scenario, 3 infrastructure error.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from chaos.checks.verdict import Status
from chaos.cluster.eventlog import EventLog
from chaos.cluster.progress import ProgressPrinter
from chaos.errors import InfrastructureError
from chaos.report import terminal_summary, write_json, write_junit
from chaos.scenario.loader import load_scenario, scenario_files

SUITE_DIR = Path(__file__).resolve().parents[2] / "scenarios"


def resolve(paths: list[str]) -> list[Path]:
    if not paths:
        return scenario_files(SUITE_DIR)
    out: list[Path] = []
    for p in map(Path, paths):
        out.extend(scenario_files(p) if p.is_dir() else [p])
    return out


def display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def cmd_run(args) -> int:
    from chaos.images import PROXY_IMAGE, ensure_images, worker_image_tag
    from chaos.runner.run import run_scenario

    files = resolve(args.scenarios)
    # Validate everything before starting anything (exit 2 on the first bad file).
    scenarios = [(load_scenario(f), display_path(f)) for f in files]
    show = ProgressPrinter()
    versions = sorted({v for sc, _ in scenarios for v in sc.tf_versions()})
    proxy_image = args.proxy_image or PROXY_IMAGE
    show.phase(f"images (TF {', '.join(versions)})")
    # Our proxy image is built like the workers; a user-given one only has to exist.
    ensure_images(tuple(versions), proxy=proxy_image == PROXY_IMAGE, progress=show.line)
    if proxy_image != PROXY_IMAGE:
        from chaos.cluster import docker_api

        docker_api.require_image(docker_api.connect(), proxy_image)
    images = {v: worker_image_tag(v) for v in versions}
    report_dir = Path(args.report_dir) if args.report_dir else None

    reports = []
    infra_failed = False
    for index, (scenario, file) in enumerate(scenarios, 1):
        show.phase(f"scenario {index}/{len(scenarios)}: {scenario.name}")
        events = EventLog()
        events.subscribe(show.event)
        try:
            report = run_scenario(
                scenario, file, images=images, proxy_image=proxy_image,
                report_dir=report_dir, events=events, progress=show.line,
            )
            if proxy_image != PROXY_IMAGE:
                report = replace(report, proxy_image=proxy_image)  # in the reproduce command
        except InfrastructureError as exc:
            print(exc.render(), file=sys.stderr)
            infra_failed = True
            continue
        reports.append(report)
        show.line(f"{scenario.name}: {report.status.value.upper()}")
        if report_dir is not None:
            write_json(report, report_dir / f"{scenario.name}.json")
    if report_dir is not None and reports:
        write_junit(reports, report_dir / "junit.xml")
    if reports:
        print(terminal_summary(reports))
    if infra_failed:
        return InfrastructureError.exit_code
    return 0 if all(r.status == Status.PASS for r in reports) else 1


def register(subparsers) -> None:
    p = subparsers.add_parser("run", help="run scenarios (default: the whole suite in scenarios/)")
    p.add_argument("scenarios", nargs="*", metavar="SCENARIO", help="scenario files or folders")
    p.add_argument("--report-dir", metavar="DIR", help="write a JSON report per scenario, junit.xml and worker logs")
    p.add_argument(
        "--proxy-image",
        metavar="IMAGE",
        default=None,
        help="run the proxy from this Toxiproxy-API server image instead of ours (e.g. the official "
        "Toxiproxy server); it must exist locally and serve the API on 0.0.0.0:8474 with its default command",
    )
    p.set_defaults(func=cmd_run)
