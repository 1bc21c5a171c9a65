"""One scenario's report as a self-contained HTML page (``<scenario>.html``).

At a glance: the status, every check's verdict with its reason and evidence,
the explanation (symptom, cause, fix), the command that reproduces the run,
the timeline picture (inline SVG) with a table of the same fault windows and
marks, the phase timings, and links to the worker logs (relative, so the
report folder can be moved or attached to a CI run). No script, no CDN:
it opens from the file system offline.
"""

from __future__ import annotations

import os
from html import escape
from pathlib import Path

from chaos.checks.verdict import Status
from chaos.events_text import event_line
from chaos.report.marks import Picture, picture
from chaos.report.model import ROOT_CAUSE, Report
from chaos.report.timeline_figure import MARK_STYLE, timeline_svg

EVIDENCE_LINES = 8
STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1200px;
 padding:16px 24px;color:#212121}
h1{font-size:22px;margin:8px 0}h2{font-size:17px;margin:22px 0 6px;border-bottom:1px solid #e0e0e0}
.status{display:inline-block;padding:2px 10px;border-radius:4px;color:#fff;font-weight:600;
 text-transform:uppercase;font-size:13px}
.s-pass{background:#2e7d32}.s-fail{background:#c62828}.s-unknown{background:#ef6c00}.s-error{background:#6a1b9a}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eee;padding:4px 8px;text-align:left;
 vertical-align:top}th{background:#fafafa}
pre,code{font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}pre{background:#f6f8fa;padding:8px;overflow-x:auto;
 white-space:pre-wrap;margin:4px 0}
.figure svg{width:100%;height:auto}.note{color:#616161}.problem{background:#fff3e0;padding:8px;
 border-left:4px solid #ef6c00}
dt{font-weight:600;margin-top:6px}dd{margin-left:0}
"""


def _status(status: Status | str) -> str:
    value = status.value if isinstance(status, Status) else str(status)
    return f'<span class="status s-{escape(value)}">{escape(value)}</span>'


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} s"


def page_name(report: Report) -> str:
    return f"{report.scenario}.html"


def link(path: str, page_dir: Path) -> str:
    """``path`` relative to the page's folder (both as the runner wrote them,
    so the report folder can move); as given when no relative path exists."""
    try:
        return Path(os.path.relpath(Path(path).resolve(), page_dir.resolve())).as_posix()
    except ValueError:  # another drive (Windows)
        return Path(path).as_posix()


def scenario_page(report: Report, page_dir: Path | None = None) -> str:
    """The page's HTML. ``page_dir``: where it will be written (for the log links)."""
    page_dir = page_dir or Path.cwd()
    pic = picture(report)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(report.status.value.upper())} {escape(report.scenario)}</title>",
        f"<style>{STYLE}</style></head><body>",
        '<p class="note"><a href="index.html">all scenarios</a></p>',
        f"<h1>{_status(report.status)} {escape(report.scenario)}</h1>",
        f"<p>{escape(report.description)}</p>",
        _nodes(report),
        _problems(report),
        "<h2>Reproduce</h2>",
        f'<pre id="reproduce">{escape(report.reproduce)}</pre>',
        _verdicts(report),
        _timeline(report, pic),
        _artifacts(report, page_dir),
        _explain(report),
        _timings(report),
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _nodes(report: Report) -> str:
    nodes = report.placement()
    return f'<p id="nodes"><b>nodes:</b> {escape(nodes)}</p>' if nodes else ""


def _problems(report: Report) -> str:
    lines = []
    if report.error:
        lines.append(f"<p><b>The run broke:</b> {escape(report.error)}</p>")
    if report.incomplete:
        lines.append(f"<p>{escape(report.incomplete)}</p>")
    for notice in report.notices():
        said = "root cause" if notice.topic == ROOT_CAUSE else f"warning: {notice.topic}"
        lines.append(f"<p><b>{escape(said)}</b>: {escape(notice.text)}</p>")
    return f'<div class="problem" id="problems">{"".join(lines)}</div>' if lines else ""


def _verdicts(report: Report) -> str:
    rows = []
    t0 = report.timeline.start
    for label, verdict in report.numbered():
        evidence = [event_line(e, t0) for e in verdict.evidence[:EVIDENCE_LINES]]
        more = len(verdict.evidence) - EVIDENCE_LINES
        if more > 0:
            evidence.append(f"... {more} more events in {report.scenario}.json")
        proof = f"<pre>{escape(chr(10).join(evidence))}</pre>" if evidence else ""
        rows.append(
            f'<tr class="verdict"><td>{_status(verdict.status)}</td><td><code>{escape(label)}</code></td>'
            f"<td>{escape(verdict.reason)}{proof}</td></tr>"
        )
    if not rows:
        rows.append('<tr><td colspan="3" class="note">no check ran</td></tr>')
    return (
        '<h2>Checks</h2><table id="verdicts"><tr><th>verdict</th><th>check</th><th>reason and evidence</th></tr>'
        + "".join(rows)
        + "</table>"
    )


def _timeline(report: Report, pic: Picture) -> str:
    try:
        svg = timeline_svg(pic)
    except Exception as exc:  # noqa: BLE001 - a drawing bug must not cost the rest of the page
        svg = None
        why = f"the picture could not be drawn: {type(exc).__name__}: {exc}"
    else:
        why = "no training events were recorded (the run broke before training), so there is nothing to draw"
    figure = (
        f'<div class="figure" id="timeline-figure">{svg}</div>'
        if svg
        else f'<p class="note" id="no-figure">{escape(why)}</p>'
    )
    intro = (
        '<p class="note">One lane per worker: global step (solid) and loss (thin, right axis) over time; '
        "fault windows shaded red; the dashed line is the uninterrupted reference run with the same seed "
        "(started at this run's first step; without a reference: its pace at the pre-fault median step time); "
        "the bottom lane is every step's time.</p>"
    )
    return "<h2>Timeline</h2>" + intro + figure + _windows_table(pic) + _marks_table(pic)


def _windows_table(pic: Picture) -> str:
    if not pic.windows:
        return '<p class="note" id="fault-windows">no fault was injected</p>'
    rows = "".join(
        f'<tr class="fault-window"><td>{escape(w.label)}</td><td>{w.start:.1f} s</td>'
        f"<td>{w.end:.1f} s{' (never healed)' if w.open else ''}</td><td>{w.end - w.start:.1f} s</td></tr>"
        for w in pic.windows
    )
    return (
        '<table id="fault-windows"><tr><th>fault window</th><th>from</th><th>to</th><th>lasted</th></tr>'
        + rows
        + "</table>"
    )


def _marks_table(pic: Picture) -> str:
    if not pic.marks:
        return ""
    rows = "".join(
        f'<tr class="mark {escape(m.kind)}"><td>{m.t:.1f} s</td><td>worker-{m.worker}</td>'
        f"<td>{escape(MARK_STYLE[m.kind][3])}</td><td>{escape(m.label)}</td><td>{m.step}</td></tr>"
        for m in pic.marks
    )
    return (
        "<details open><summary>Marks on the picture</summary>"
        '<table id="marks"><tr><th>at</th><th>worker</th><th>mark</th><th>what</th><th>step</th></tr>'
        + rows
        + "</table></details>"
    )


def _explain(report: Report) -> str:
    items = "".join(
        f"<dt>{escape(key)}</dt><dd><pre>{escape(str(report.explain[key]).strip())}</pre></dd>"
        for key in ("symptom", "cause", "fix")
        if report.explain.get(key)
    )
    return f'<h2>What this shows</h2><dl id="explain">{items}</dl>' if items else ""


def _timings(report: Report) -> str:
    t = report.timings
    rows = [
        ("bring-up", t.bring_up_s),
        ("time to symptom", t.time_to_symptom_s),
        ("time to recover", t.time_to_recover_s),
        ("total", t.total_s),
    ]
    cells = "".join(f"<tr><th>{name}</th><td>{_seconds(v)}</td></tr>" for name, v in rows)
    return f'<h2>Timings</h2><table id="timings" style="width:auto">{cells}</table>'


def _artifacts(report: Report, page_dir: Path) -> str:
    if not report.artifacts:
        return ""
    items = []
    for label, path in sorted(report.artifacts.items()):
        if label.endswith(" log") or label == "page":
            items.append(f'<li><a href="{escape(link(path, page_dir))}">{escape(label)}</a></li>')
        else:
            items.append(f"<li>{escape(label)}: {escape(path)}</li>")
    json_link = f'<li><a href="{escape(report.scenario)}.json">the JSON report (every event)</a></li>'
    return f'<h2>Logs and files</h2><ul id="artifacts">{"".join(items)}{json_link}</ul>'


def write_page(report: Report, report_dir: str | Path) -> Path:
    path = Path(report_dir) / page_name(report)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(scenario_page(report, path.parent), encoding="utf-8")
    return path


def write_page_artifact(report: Report, report_dir: str | Path) -> dict[str, str]:
    """Write the page; its path as an artifact (``page``), or why it could not
    be written (``page error``). Never raises: the JSON report must not be lost
    to a drawing bug or a full disk."""
    try:
        return {"page": str(write_page(report, report_dir))}
    except Exception as exc:  # noqa: BLE001 - see the docstring
        return {"page error": f"could not write the HTML page under {report_dir}: {type(exc).__name__}: {exc}"}
