"""The card's pictures (chaos.audit.goodput_svg): the ETTR curve's numbers are the card's model,
its optimum the tau_Daly the card prints, and each failure's downtime adds up."""

from __future__ import annotations

import math
import re

import pytest
from audit_reports import killed_worker_report, reference_report, silent_report

from chaos.audit import goodput_svg as g
from chaos.audit.battery import KILLED_WORKER, PEER_PAUSED, REFERENCE
from chaos.audit.card import Assumptions, build_card
from chaos.audit.measure import measure, not_measured
from chaos.audit.render_html import page
from chaos.audit.render_text import model_lines


def card(nodes=64):
    runs = [
        measure(REFERENCE, reference_report(save_pause=0.3), 40),
        measure(KILLED_WORKER, killed_worker_report(), 30),
        measure(PEER_PAUSED, silent_report(10.0), 40),
    ]
    return build_card(runs, Assumptions(24, nodes), workload="w", battery="quick")


def test_the_curve_is_the_card_s_ettr_formula():
    m = card().model
    c = g.curve(m)
    C, R, D, M = m.save_s.value, m.restart_s.value, m.detect_s.value, m.mtbf_s
    for p in c.points[::40]:
        by_hand = p.tau_s / (p.tau_s + C) * (1 - (D + R + (p.tau_s + C) / 2) / M)
        assert p.ettr == pytest.approx(max(0.0, by_hand), rel=1e-12)
    # The marks are the card's own figures: ETTR now and at the recommended interval.
    assert c.now == g.Point(m.interval_s, m.now.ettr)
    assert c.optimum.tau_s == pytest.approx(m.best_interval_steps * m.step_time_s.value)
    assert c.optimum.ettr == pytest.approx(m.recommended.ettr)
    assert c.lo < min(c.now.tau_s, c.optimum.tau_s) and c.hi > max(c.now.tau_s, c.optimum.tau_s)


def test_the_optimum_is_the_tau_daly_the_card_prints_and_sits_at_the_curve_s_top():
    m = card().model
    c = g.curve(m, samples=4000)
    C, R, D, M = m.save_s.value, m.restart_s.value, m.detect_s.value, m.mtbf_s
    # The formula the card prints, with its numbers.
    assert m.daly_s == pytest.approx(math.sqrt(2 * C * (M + R)) - C)
    assert f"= {m.daly_s:.2f} s" in "\n".join(model_lines(card()))
    # The curve's own maximum: d/dtau of the card's ETTR is 0 at tau = sqrt(2 C (M - D - R)) - C, the
    # first-order optimum with the downtime in it; tau_Daly is within 1 % of it here (M >> R, D) ...
    exact = math.sqrt(2 * C * (M - D - R)) - C
    assert c.peak.tau_s == pytest.approx(exact, rel=0.01)
    assert m.daly_s == pytest.approx(exact, rel=0.01)
    # ... and gives away less than 0.01 % of goodput against the top (rounding tau_Daly to steps included).
    assert c.peak.ettr - c.optimum.ettr < 1e-4
    assert g.ettr_at(m, m.daly_s) == pytest.approx(c.peak.ettr, abs=1e-5)


def test_the_marks_sit_where_their_values_say():
    c = card()
    svg = g.curve_svg(g.curve(c.model), c.model)
    curve = g.curve(c.model)
    for name, point in (("pt-now", curve.now), ("pt-optimum", curve.optimum)):
        found = re.search(rf'<circle id="{name}" cx="([\d.]+)" cy="([\d.]+)"', svg)
        cx, cy = float(found[1]), float(found[2])
        plot_w = g.WIDTH - g.LEFT - g.RIGHT
        assert cx == pytest.approx(
            g.LEFT + plot_w * math.log10(point.tau_s / curve.lo) / math.log10(curve.hi / curve.lo), abs=0.01
        )
        assert cy == pytest.approx(g.TOP + (g.HEIGHT - g.TOP - g.BOTTOM) * (1 - point.ettr), abs=0.01)
    assert "http" not in svg and "<script" not in svg


def test_each_failure_s_downtime_is_its_detection_restart_and_lost_work():
    c = card()
    rows = {r.key: r for r in g.downtime(c)}
    killed = next(r for r in c.runs if r.key == "killed-worker")
    assert rows["killed-worker"].parts == {
        "detect": killed.detect_s.value,
        "restart": killed.restart_s.value,
        "lost": killed.steps_lost.value * c.model.step_time_s.value,
    }
    costs = c.model.now.costs
    assert rows["model"].total == pytest.approx(c.model.now.per_failure_s)
    assert rows["model"].parts["lost"] == pytest.approx((costs.interval_s + costs.save_s) / 2)
    svg = g.downtime_svg(list(rows.values()))
    widths = {k: float(v) for k, v in re.findall(r'id="bar-killed-worker-(\w+)"[^>]*width="([\d.]+)"', svg)}
    assert set(widths) == {"detect", "restart", "lost"}
    parts = rows["killed-worker"].parts
    assert widths["restart"] / widths["lost"] == pytest.approx(parts["restart"] / parts["lost"], rel=1e-3)


def test_without_a_model_the_page_says_why_instead_of_a_picture():
    c = build_card([not_measured(REFERENCE, "the run broke")], Assumptions(24, 64), workload="w", battery="quick")
    html = page(c)
    assert "No goodput picture: not computed" in html and "<svg" not in html


def test_the_page_holds_both_pictures_beside_the_formulas():
    html = page(card())
    model_at, figure_at = html.index('id="model"'), html.index('id="goodput-figure"')
    assert model_at < figure_at < html.index('id="downtime-figure"') < html.index('id="runs"')
    assert 'class="beside"' in html
