"""The suite's ``index.html``: every scenario with its status, duration and
time to symptom, linked to its page. A scenario whose run broke is a row with
status ``error`` and the reason, never missing (the runner gives it a Report)."""

from __future__ import annotations

from html import escape
from pathlib import Path

from chaos.checks.verdict import Status
from chaos.report.html_page import STYLE, _seconds, _status, page_name
from chaos.report.model import Report


def _checks(report: Report) -> str:
    counts = {s: sum(v.status is s for v in report.verdicts) for s in (Status.PASS, Status.FAIL, Status.UNKNOWN)}
    return ", ".join(f"{n} {s.value}" for s, n in counts.items() if n) or "no check"


def _why(report: Report) -> str:
    if report.error:
        return f"run error: {report.error}"
    failing = [f"{label}: {v.reason}" for label, v in report.numbered() if not v.passed]
    if report.incomplete:
        failing.insert(0, report.incomplete)
    return "; ".join(failing[:2]) + (f" (+{len(failing) - 2} more)" if len(failing) > 2 else "")


def index_page(reports: list[Report], page_dir: Path | None = None) -> str:
    """``page_dir``: where the pages are; a page that is not there is said, not linked."""
    rows = []
    for report in reports:
        name = page_name(report)
        exists = page_dir is None or (page_dir / name).exists()
        title = (
            f'<a href="{escape(name)}">{escape(report.scenario)}</a>'
            if exists
            else f'{escape(report.scenario)} <span class="note">(no page written)</span>'
        )
        t = report.timings
        rows.append(
            f'<tr class="scenario row-{escape(report.status.value)}" id="row-{escape(report.scenario)}">'
            f"<td>{_status(report.status)}</td><td>{title}</td><td>{_seconds(t.total_s)}</td>"
            f"<td>{_seconds(t.time_to_symptom_s)}</td><td>{_seconds(t.time_to_recover_s)}</td>"
            f"<td>{escape(_checks(report))}</td><td>{escape(_why(report))}</td></tr>"
        )
    by_status = {s: sum(r.status is s for r in reports) for s in Status}
    summary = (
        f"{len(reports)} scenarios: {by_status[Status.PASS]} passed, {by_status[Status.FAIL]} failed, "
        f"{by_status[Status.UNKNOWN]} unknown, {by_status[Status.ERROR]} error"
    )
    return (
        "\n".join(
            [
                "<!DOCTYPE html>",
                '<html lang="en"><head><meta charset="utf-8">',
                '<meta name="viewport" content="width=device-width, initial-scale=1">',
                f"<title>chaos: {escape(summary)}</title><style>{STYLE}</style></head><body>",
                "<h1>Chaos scenarios</h1>",
                f'<p id="summary">{escape(summary)}</p>',
                '<table id="scenarios"><tr><th>status</th><th>scenario</th><th>duration</th><th>time to symptom</th>'
                "<th>time to recover</th><th>checks</th><th>why not passed</th></tr>",
                *rows,
                "</table>",
                '<p class="note"><a href="junit.xml">junit.xml</a> for CI; each scenario\'s JSON report is beside its page.</p>',
                "</body></html>",
            ]
        )
        + "\n"
    )


def write_index(reports: list[Report], report_dir: str | Path) -> Path:
    path = Path(report_dir) / "index.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(index_page(reports, path.parent), encoding="utf-8")
    return path


def rebuild(report_dir: str | Path) -> list[str]:
    """Write the page of every ``<scenario>.json`` in ``report_dir`` and the
    index again (e.g. for reports of an older version). Returns the problems:
    a file that is not a readable report is named and skipped, never a traceback."""
    from chaos.report.html_page import write_page
    from chaos.report.writers import read_json

    folder = Path(report_dir)
    if not folder.is_dir():
        return [f"{folder}: not a folder; give the --report-dir of a `chaos run`"]
    reports, problems = [], []
    for path in sorted(folder.glob("*.json")):
        try:
            reports.append(read_json(path))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            problems.append(f"{path}: not a chaos report ({type(exc).__name__}: {exc}); skipped")
            continue
        write_page(reports[-1], folder)
    if not reports:
        problems.append(f"{folder}: no <scenario>.json report in it; `chaos run --report-dir {folder}` writes them")
    else:
        write_index(reports, folder)
    return problems


if __name__ == "__main__":  # python -m chaos.report.html_index REPORT_DIR
    import sys

    if len(sys.argv) != 2:
        sys.exit("usage: python -m chaos.report.html_index REPORT_DIR")
    issues = rebuild(sys.argv[1])
    print("\n".join(issues) or f"wrote the pages and index.html in {sys.argv[1]}")
    sys.exit(1 if issues else 0)
