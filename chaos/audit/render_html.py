"""The card as one self-contained HTML page: no script, no external resource;
it opens offline from the file system (like chaos.report.html_page)."""

from __future__ import annotations

from html import escape
from pathlib import Path

from chaos.audit.card import Card
from chaos.audit.findings import FINDING
from chaos.audit.goodput_svg import figures_html
from chaos.audit.render_text import (
    MARK,
    POLICY_HEADER,
    RUN_HEADER,
    model_lines,
    policy_rows,
    policy_snippets,
    policy_summary,
    run_rows,
)
from chaos.report.html_page import STYLE, link

CARD_STYLE = """
.grade{display:inline-block;min-width:1.6em;text-align:center;padding:2px 8px;border-radius:4px;color:#fff;
 font-weight:700}.g-A{background:#2e7d32}.g-B{background:#558b2f}.g-C{background:#f9a825}.g-D{background:#ef6c00}
.g-F{background:#c62828}.g-n{background:#757575}
.f-ok{color:#2e7d32}.f-finding{color:#c62828;font-weight:600}.f-not{color:#757575}
.beside{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}.beside pre{flex:1 1 420px;margin:0}
.beside figure{margin:0}figcaption{font-size:12px;color:#555;max-width:640px}
"""


def _grade(letter: str) -> str:
    cls = letter if letter in "ABCDF" and len(letter) == 1 else "n"
    return f'<span class="grade g-{cls}">{escape(letter)}</span>'


def _status(status: str) -> str:
    cls = {"ok": "f-ok", "finding": "f-finding"}.get(status, "f-not")
    return f'<span class="{cls}">{escape(MARK[status])}</span>'


def _policy(card: Card) -> list[str]:
    """The failure policy: the exits per fault, what follows, and the manifests."""
    out = ['<h2 id="failure-policy">Failure policy: which exits a restart fixed</h2>']
    rows = policy_rows(card)
    if rows:
        out.append('<table id="policy-exits"><tr>' + "".join(f"<th>{escape(h)}</th>" for h in POLICY_HEADER) + "</tr>")
        out += ["<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows]
        out.append("</table>")
    out.append(
        '<ul id="policy-summary">' + "".join(f"<li>{escape(line)}</li>" for line in policy_summary(card)) + "</ul>"
    )
    for i, (heading, _, text) in enumerate(policy_snippets(card)):
        out.append(f'<h3>{escape(heading)}</h3><pre id="policy-snippet-{i}">{escape(text)}</pre>')
    return out


def page(card: Card, page_dir: Path | None = None) -> str:
    """The card's HTML; ``page_dir``: where it is written (each run's title links its report page)."""
    page_dir = page_dir or Path.cwd()
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(card.overall.letter)} resilience card: {escape(card.workload)}</title>",
        f"<style>{STYLE}{CARD_STYLE}</style></head><body>",
        f"<h1>{_grade(card.overall.letter)} Resilience card: {escape(card.workload)}</h1>",
        f'<p id="overall">Overall {escape(card.overall.letter)}: {escape(card.overall.computation)}. '
        f"Battery <code>{escape(card.battery)}</code>, {len(card.runs)} runs; {card.assumptions.nodes} nodes, "
        f"node MTBF {card.assumptions.node_mtbf_hours:g} h (assumed).</p>",
    ]
    if card.command:
        parts.append(f'<h2>Reproduce</h2><pre id="reproduce">{escape(card.command)}</pre>')
    parts.append('<h2>Grades</h2><table id="grades"><tr><th>area</th><th>grade</th><th>how</th></tr>')
    parts += [
        f"<tr><td>{escape(g.area)}</td><td>{_grade(g.letter)}</td><td>{escape(g.computation)}</td></tr>"
        for g in card.grades
    ]
    parts.append("</table>")
    parts.append(
        '<h2>Findings</h2><table id="findings"><tr><th>status</th><th>area</th><th>criterion</th>'
        "<th>measured</th><th>why it matters / fix</th></tr>"
    )
    for f in card.findings:
        advice = ""
        if f.status == FINDING:
            advice = f"{escape(f.why)}<br><b>fix:</b> {escape(f.fix)}"
            if f.setting:
                advice += f"<br><b>setting:</b> <code>{escape(f.setting)}</code>"
        parts.append(
            f'<tr id="finding-{escape(f.id)}"><td>{_status(f.status)}</td><td>{escape(f.area)}</td>'
            f"<td>{escape(f.title)}</td><td>{escape(f.measured)}</td><td>{advice}</td></tr>"
        )
    parts.append("</table>")
    parts.append(
        '<h2>Modelled goodput (ETTR)</h2><div class="beside"><pre id="model">'
        + escape("\n".join(model_lines(card)))
        + "</pre><div>"
        + figures_html(card)
        + "</div></div>"
    )
    parts.append('<h2>Runs</h2><table id="runs"><tr>' + "".join(f"<th>{escape(h)}</th>" for h in RUN_HEADER) + "</tr>")
    for run, row in zip(card.runs, run_rows(card)):
        cells = [f"<td>{escape(cell)}</td>" for cell in row]
        if run.report:
            cells[0] = f'<td><a href="{escape(link(run.report, page_dir))}">{escape(row[0])}</a></td>'
        parts.append("<tr>" + "".join(cells) + "</tr>")
    parts.append("</table>")
    parts += _policy(card)
    for note in card.notes:
        parts.append(f'<p class="note">{escape(note)}</p>')
    parts.append('<p class="note">How each figure is computed: docs/audit.md in tfchaos.</p>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
