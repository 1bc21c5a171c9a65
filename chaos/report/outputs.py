"""Everything a run writes under ``--report-dir``, listed once: per scenario
(its workers' logs, its HTML page, its JSON report: in that order, as each
links to what the ones before wrote) and per suite (JUnit XML, the index page)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from chaos.events import Event
from chaos.events_text import log_lines
from chaos.report.html_index import write_index
from chaos.report.html_page import write_page_artifact
from chaos.report.model import Report
from chaos.report.writers import write_json, write_junit

# (the report with the artifacts written so far, the run's events, the folder) -> artifacts written
ScenarioWriter = Callable[[Report, Sequence[Event], Path], dict[str, str]]


def worker_logs(report: Report, events: Sequence[Event], report_dir: Path) -> dict[str, str]:
    """Each worker's log, its lines and its events as they came, in ``<scenario>/<worker>.log``;
    with the runner's teardown line in every one, so a reader of the logs alone (chaos diagnose)
    knows the exits after it are the runner's kill, not the failure's."""
    directory = report_dir / report.scenario
    directory.mkdir(parents=True, exist_ok=True)
    out = {}
    for source, text in sorted(log_lines(events).items()):
        path = directory / f"{source}.log"
        path.write_text("\n".join(text) + "\n")
        out[f"{source} log"] = str(path)
    return out


def page(report: Report, events: Sequence[Event], report_dir: Path) -> dict[str, str]:
    return write_page_artifact(report, report_dir)


def json_report(report: Report, events: Sequence[Event], report_dir: Path) -> dict[str, str]:
    write_json(report, report_dir / f"{report.scenario}.json")
    return {}  # the report does not list itself


SCENARIO_WRITERS: list[ScenarioWriter] = [worker_logs, page, json_report]
SUITE_WRITERS: list[Callable[[list[Report], Path], object]] = [
    lambda reports, folder: write_junit(reports, folder / "junit.xml"),
    write_index,
]


def write_scenario(report: Report, events: Sequence[Event], report_dir: Path) -> dict[str, str]:
    """Every per-scenario output; the artifacts they wrote (OSError: a full disk, a folder not writable)."""
    artifacts: dict[str, str] = {}
    for writer in SCENARIO_WRITERS:
        artifacts.update(writer(report.with_artifacts(artifacts), events, report_dir))
    return artifacts


def write_suite(reports: list[Report], report_dir: Path) -> None:
    for writer in SUITE_WRITERS:
        writer(reports, report_dir)
