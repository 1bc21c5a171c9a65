"""The audit card's page seen in a real browser (headless Chromium, Debian's package, as the run
reports are in test_html_report.py): the goodput curve and the downtime bars are drawn, the
job's interval and the optimum sit where their values say on the axes the page draws (read back
from the DOM's geometry), each downtime bar's parts are contiguous and as long as their seconds,
and the page makes no request and raises no script error. The card is made from hand-built
battery reports (tests/unit/audit/audit_reports.py): no container runs."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from browser import Browser, chromium  # noqa: E402  (conftest puts tests/integration on sys.path)

UNIT = Path(__file__).resolve().parents[1] / "unit"
sys.path[:0] = [str(UNIT / "audit"), str(UNIT / "checks")]  # the audit's hand-built reports

from audit_reports import killed_worker_report, reference_report, silent_report  # noqa: E402

from chaos.audit.battery import KILLED_WORKER, PEER_PAUSED, REFERENCE  # noqa: E402
from chaos.audit.card import Assumptions, build_card  # noqa: E402
from chaos.audit.measure import measure  # noqa: E402
from chaos.audit.run import with_policy_check, write_card  # noqa: E402

pytestmark = pytest.mark.skipif(chromium() is None, reason="needs Debian's chromium (bin/test installs it as root)")

GEOMETRY = """(() => {
  const svg = document.querySelector('#goodput-figure svg');
  if (!svg) return null;
  const box = e => { const r = e.getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width, h: r.height}; };
  const mid = e => { const b = box(e); return [b.x + b.w / 2, b.y + b.h / 2]; };
  const grid = cls => [...svg.querySelectorAll('line.' + cls)].map(l => ({v: +l.dataset.value, x: box(l).x, y: box(l).y}));
  const curve = svg.querySelector('#ettr-curve');
  const points = {};
  for (const id of ['pt-now', 'pt-optimum']) {
    const c = svg.querySelector('#' + id);
    const p = new DOMPoint(+c.getAttribute('cx'), +c.getAttribute('cy'));
    points[id] = {center: mid(c), tau: +c.dataset.tauS, ettr: +c.dataset.ettr,
                  onCurve: curve.isPointInStroke(p), visible: getComputedStyle(c).display !== 'none'};
  }
  const bars = [...document.querySelectorAll('#downtime-figure g[id^="bar-"]')].map(g => ({
    id: g.id, total: +g.dataset.totalS,
    parts: [...g.querySelectorAll('rect')].map(r => ({id: r.id, s: +r.dataset.seconds, ...box(r)}))}));
  return {svg: box(svg), bars: box(document.querySelector('#downtime-figure svg')), xgrid: grid('xgrid'),
          ygrid: grid('ygrid'), points: points, curveLength: curve.getTotalLength(), downtime: bars,
          text: document.body.innerText};
})()"""


@pytest.fixture(scope="module")
def card_page(tmp_path_factory):
    runs = [
        measure(REFERENCE, reference_report(save_pause=0.3), 40),
        measure(KILLED_WORKER, killed_worker_report(), 30),
        measure(PEER_PAUSED, silent_report(10.0), 40),
    ]
    card = with_policy_check(build_card(runs, Assumptions(24, 64), workload="w.yaml", battery="quick"))
    out = tmp_path_factory.mktemp("audit-card")
    return card, write_card(card, out)["html"]


@pytest.fixture(scope="module")
def seen(card_page):
    _, html = card_page
    with Browser(width=1400, height=1200) as b:
        b.open(html.as_uri())
        geometry = b.evaluate(GEOMETRY)
        b.screenshot(html.parent / "goodput.png", "#goodput-figure, #downtime-figure")
        return geometry, b.script_errors(), b.requests()


def _x_of(tau, xgrid):
    """Where ``tau`` falls on the log axis the page drew (its first and last decade lines)."""
    a, b = xgrid[0], xgrid[-1]
    return a["x"] + (b["x"] - a["x"]) * (math.log10(tau) - math.log10(a["v"])) / (
        math.log10(b["v"]) - math.log10(a["v"])
    )


def _y_of(ettr, ygrid):
    zero, full = next(g for g in ygrid if g["v"] == 0), next(g for g in ygrid if g["v"] == 1)
    return zero["y"] + (full["y"] - zero["y"]) * ettr


def test_the_marked_points_sit_on_the_curve_where_their_values_say(card_page, seen):
    card, _ = card_page
    geometry, errors, requests = seen
    assert geometry is not None, "no goodput picture on the page"
    assert errors == [] and all(u.startswith("file://") for u in requests), (errors, requests)
    m = card.model
    expected = {
        "pt-now": (m.interval_s, m.now.ettr),
        "pt-optimum": (m.best_interval_steps * m.step_time_s.value, m.recommended.ettr),
    }
    assert len(geometry["xgrid"]) >= 2 and geometry["curveLength"] > 100
    for name, (tau, ettr) in expected.items():
        p = geometry["points"][name]
        assert p["tau"] == pytest.approx(tau, rel=1e-5) and p["ettr"] == pytest.approx(ettr, rel=1e-5)
        x, y = p["center"]
        assert x == pytest.approx(_x_of(tau, geometry["xgrid"]), abs=1.0), name
        assert y == pytest.approx(_y_of(ettr, geometry["ygrid"]), abs=1.0), name
        assert p["onCurve"], f"{name} is off the drawn curve"
        svg = geometry["svg"]
        assert svg["x"] < x < svg["x"] + svg["w"] and svg["y"] < y < svg["y"] + svg["h"]
    # The job's 10-step interval is left of the 282-step optimum and lower on the curve.
    now, best = geometry["points"]["pt-now"]["center"], geometry["points"]["pt-optimum"]["center"]
    assert now[0] < best[0] and now[1] > best[1]
    assert "tau_Daly" in geometry["text"] and f"{m.best_interval_steps} steps" in geometry["text"]


def test_each_downtime_bar_is_its_parts_end_to_end(card_page, seen):
    card, _ = card_page
    geometry, _, _ = seen
    bars = {b["id"]: b for b in geometry["downtime"]}
    assert {"bar-model", "bar-killed-worker", "bar-peer-paused"} <= set(bars)
    scale = None
    for bar in bars.values():
        parts = bar["parts"]
        assert [p["id"].rsplit("-", 1)[1] for p in parts] == ["detect", "restart", "lost"]
        for left, right in zip(parts, parts[1:]):
            assert right["x"] == pytest.approx(left["x"] + left["w"], abs=0.6)  # stacked, no gap
        for p in parts:
            px_per_s = p["w"] / p["s"]
            scale = scale or px_per_s
            assert px_per_s == pytest.approx(scale, rel=0.02)  # one seconds scale for every bar
        assert sum(p["s"] for p in parts) == pytest.approx(bar["total"], rel=1e-4)
        svg = geometry["bars"]
        assert parts[-1]["x"] + parts[-1]["w"] <= svg["x"] + svg["w"]


def test_the_page_shows_the_failure_policy_that_validated(card_page, seen):
    geometry, _, _ = seen
    assert "Failure policy: which exits a restart fixed" in geometry["text"]
    assert "podFailurePolicy" in geometry["text"] and "kind: JobSet" in geometry["text"]
    assert ": valid." in geometry["text"]
