"""Where the time goes, as two inline SVG pictures for the card's page (no script, no resource
from the network): goodput (ETTR) against the checkpoint interval, with the job's interval and
the card's optimum marked, and each failure's downtime split into detection, restart and lost
work. The numbers come from chaos.audit.model, the model the card's formulas print; ``curve``
and ``downtime`` are pure, ``curve_svg`` / ``downtime_svg`` only draw them.

The SVG is inline HTML, so it needs no xmlns (the page then names no http:// address at all).
Every mark carries its value (``data-*``) and its element id, so a browser test can read the
geometry back from the DOM and check each point sits where its value says.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from chaos.audit import model
from chaos.audit.card import Card, Modelled
from chaos.audit.findings import FAILURES

SAMPLES = 240
WIDTH, HEIGHT = 640, 300
LEFT, RIGHT, TOP, BOTTOM = 64, 24, 18, 66
NOW_COLOR, BEST_COLOR = "#c62828", "#1b5e20"
PARTS = (("detect", "detection", "#c62828"), ("restart", "restart", "#ef6c00"), ("lost", "lost work", "#1565c0"))


@dataclass(frozen=True)
class Point:
    tau_s: float
    ettr: float


@dataclass(frozen=True)
class Curve:
    points: tuple[Point, ...]  # ETTR(tau), log-spaced over [lo, hi]
    now: Point  # the job's interval
    optimum: Point  # the card's recommendation: tau_Daly rounded to whole steps
    lo: float
    hi: float

    @property
    def peak(self) -> Point:
        return max(self.points, key=lambda p: p.ettr)


def ettr_at(m: Modelled, tau_s: float) -> float:
    """The card's ETTR formula at interval ``tau_s`` (its measured C, R, D and M)."""
    costs = model.Costs(m.save_s.value, m.restart_s.value, m.detect_s.value, tau_s)
    return max(0.0, model.goodput(costs, m.mtbf_s).ettr)


def curve(m: Modelled, samples: int = SAMPLES) -> Curve | None:
    """ETTR over intervals a decade beyond the job's and the optimum on each side (None: the
    model was not computed)."""
    if m.now is None or m.recommended is None:
        return None
    now_tau, best_tau = m.now.costs.interval_s, m.recommended.costs.interval_s
    lo = 10 ** math.floor(math.log10(min(now_tau, best_tau)) - 0.5)
    hi = 10 ** math.ceil(math.log10(max(now_tau, best_tau)) + 0.5)
    taus = [lo * (hi / lo) ** (i / (samples - 1)) for i in range(samples)]
    points = tuple(Point(t, ettr_at(m, t)) for t in taus)
    return Curve(points, Point(now_tau, max(0.0, m.now.ettr)), Point(best_tau, max(0.0, m.recommended.ettr)), lo, hi)


@dataclass(frozen=True)
class Downtime:
    key: str
    title: str
    parts: dict[str, float | None]  # detect / restart / lost (seconds); None: not measured

    @property
    def total(self) -> float:
        return sum(v for v in self.parts.values() if v)


def downtime(card: Card) -> list[Downtime]:
    """The model's failure (D + R + (tau + C)/2, the medians the card uses), then each measured
    failure run: its D, its R and its steps lost times the step time."""
    m = card.model
    out = []
    if m.now is not None:
        c = m.now.costs
        out.append(
            Downtime(
                "model",
                "the model's failure (medians; lost work (tau + C)/2)",
                {"detect": c.detect_s, "restart": c.restart_s, "lost": (c.interval_s + c.save_s) / 2},
            )
        )
    step = m.step_time_s.value
    for r in card.runs:
        if not r.measured or r.kind not in (*FAILURES, "empty_checkpoint"):
            continue
        lost = r.steps_lost.value * step if r.steps_lost.known and step is not None else None
        out.append(Downtime(r.key, r.title, {"detect": r.detect_s.value, "restart": r.restart_s.value, "lost": lost}))
    return out


def _x(tau: float, c: Curve) -> float:
    return LEFT + (WIDTH - LEFT - RIGHT) * math.log10(tau / c.lo) / math.log10(c.hi / c.lo)


def _y(ettr: float) -> float:
    return TOP + (HEIGHT - TOP - BOTTOM) * (1 - ettr)


def _seconds(value: float) -> str:
    """A tick (a power of ten) or a mark's interval, in ms below a second."""
    if float(f"{value:.3g}") >= 1:  # 0.99999 s is "1 s", not "1e+03 ms"
        return f"{value:,.0f} s" if value >= 100 else f"{value:.3g} s"
    return f"{value * 1000:.3g} ms"


def _mark(point_id: str, p: Point, c: Curve, color: str) -> str:
    x, y = _x(p.tau_s, c), _y(p.ettr)
    return (
        f'<g id="{point_id}-mark"><line x1="{x:.2f}" y1="{TOP}" x2="{x:.2f}" y2="{HEIGHT - BOTTOM}" '
        f'stroke="{color}" stroke-dasharray="4 3"/>'
        f'<circle id="{point_id}" cx="{x:.2f}" cy="{y:.2f}" r="5" fill="{color}" '
        f'data-tau-s="{p.tau_s:.6g}" data-ettr="{p.ettr:.6g}"/></g>'
    )


def _legend(entries: list[tuple[str, str]]) -> str:
    """The marks' labels in one line under the axis: beside the points two labels can collide."""
    out, x = ['<g id="marks-legend">'], LEFT
    for label, color in entries:
        out.append(
            f'<circle cx="{x + 5}" cy="{HEIGHT - 12}" r="5" fill="{color}"/>'
            f'<text x="{x + 14}" y="{HEIGHT - 8}" fill="{color}">{escape(label)}</text>'
        )
        x += 16 + 7 * len(label)
    return "".join(out) + "</g>"


def curve_svg(c: Curve, m: Modelled) -> str:
    """ETTR against the interval, log x axis in seconds, y 0-100 %."""
    path = " ".join(f"{'M' if i == 0 else 'L'}{_x(p.tau_s, c):.2f},{_y(p.ettr):.2f}" for i, p in enumerate(c.points))
    parts = [
        f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
        f'height="{HEIGHT}" role="img" data-x-lo="{c.lo:g}" data-x-hi="{c.hi:g}" '
        f'data-plot="{LEFT} {TOP} {WIDTH - RIGHT} {HEIGHT - BOTTOM}" font-size="12" font-family="sans-serif">',
        "<title>Goodput (ETTR) against the checkpoint interval</title>",
        f'<rect x="{LEFT}" y="{TOP}" width="{WIDTH - LEFT - RIGHT}" height="{HEIGHT - TOP - BOTTOM}" '
        'fill="none" stroke="#999"/>',
    ]
    decades = range(round(math.log10(c.lo)), round(math.log10(c.hi)) + 1)
    parts.append('<g id="x-ticks">')
    for d in decades:
        x = _x(10.0**d, c)
        parts.append(
            f'<line class="xgrid" data-value="{10.0**d:g}" x1="{x:.2f}" y1="{HEIGHT - BOTTOM}" x2="{x:.2f}" '
            f'y2="{HEIGHT - BOTTOM + 4}" stroke="#666"/>'
            f'<text class="xtick" data-value="{10.0**d:g}" x="{x:.2f}" y="{HEIGHT - BOTTOM + 16}" '
            f'text-anchor="middle">{_seconds(10.0**d)}</text>'
        )
    parts.append('</g><g id="y-ticks">')
    for share in (0, 0.25, 0.5, 0.75, 1):
        y = _y(share)
        parts.append(
            f'<line class="ygrid" data-value="{share:g}" x1="{LEFT - 4}" y1="{y:.2f}" x2="{WIDTH - RIGHT}" '
            f'y2="{y:.2f}" stroke="#e0e0e0"/>'
            f'<text class="ytick" data-value="{share:g}" x="{LEFT - 6}" y="{y + 4:.2f}" '
            f'text-anchor="end">{share * 100:g} %</text>'
        )
    parts.append("</g>")
    parts.append(
        f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - BOTTOM + 32}" text-anchor="middle">checkpoint interval '
        "tau (log scale)</text>"
    )
    parts.append(
        f'<text x="14" y="{(TOP + HEIGHT - BOTTOM) / 2}" text-anchor="middle" '
        f'transform="rotate(-90 14 {(TOP + HEIGHT - BOTTOM) / 2})">ETTR</text>'
    )
    parts.append(f'<path id="ettr-curve" d="{path}" fill="none" stroke="#2e7d32" stroke-width="2"/>')
    now = f"now: {m.interval_steps} steps ({_seconds(c.now.tau_s)}), ETTR {100 * c.now.ettr:.1f} %"
    best = f"tau_Daly: {m.best_interval_steps} steps ({_seconds(c.optimum.tau_s)}), ETTR {100 * c.optimum.ettr:.1f} %"
    parts.append(_mark("pt-now", c.now, c, NOW_COLOR))
    parts.append(_mark("pt-optimum", c.optimum, c, BEST_COLOR))
    parts.append(_legend([(now, NOW_COLOR), (best, BEST_COLOR)]))
    parts.append("</svg>")
    return "".join(parts)


def downtime_svg(rows: list[Downtime]) -> str:
    """One stacked bar per failure: detection, restart, lost work, on one seconds scale."""
    bar, gap, width = 16, 30, WIDTH
    longest = max((r.total for r in rows), default=0.0) or 1.0
    span = width - LEFT - RIGHT - 60
    height = TOP + len(rows) * (bar + gap) + 40
    parts = [
        f'<svg viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" data-seconds-per-px="{longest / span:.6g}" font-size="12" '
        'font-family="sans-serif"><title>Downtime per failure: detection, restart, lost work</title>'
    ]
    for i, r in enumerate(rows):
        y = TOP + i * (bar + gap) + 14
        parts.append(
            f'<g id="bar-{escape(r.key)}" data-total-s="{r.total:.6g}">'
            f'<text x="{LEFT}" y="{y - 4}">{escape(r.title)}</text>'
        )
        x = float(LEFT)
        missing = []
        for part, name, color in PARTS:
            value = r.parts.get(part)
            if value is None:
                missing.append(name)
                continue
            w = span * value / longest
            parts.append(
                f'<rect id="bar-{escape(r.key)}-{part}" class="seg-{part}" x="{x:.2f}" y="{y}" '
                f'width="{w:.2f}" height="{bar}" fill="{color}" data-seconds="{value:.6g}">'
                f"<title>{name}: {value:.2f} s</title></rect>"
            )
            x += w
        tail = f"{r.total:.1f} s" + (f" ({', '.join(missing)} not measured)" if missing else "")
        parts.append(f'<text x="{x + 6:.2f}" y="{y + 12}">{escape(tail)}</text></g>')
    ly = height - 16
    for j, (_part, name, color) in enumerate(PARTS):
        lx = LEFT + j * 120
        parts.append(
            f'<rect x="{lx}" y="{ly - 10}" width="12" height="12" fill="{color}"/>'
            f'<text x="{lx + 16}" y="{ly}">{name}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def figures_html(card: Card) -> str:
    """Both pictures as figures for the card's page; a line saying why when the model is missing."""
    c = curve(card.model)
    out = []
    if c is None:
        out.append(f'<p class="note" id="goodput-figure">No goodput picture: {escape(card.model.missing)}</p>')
    else:
        out.append(
            '<figure id="goodput-figure">'
            + curve_svg(c, card.model)
            + "<figcaption>ETTR = tau/(tau + C) x (1 - (D + R + (tau + C)/2)/M) against tau, with the card's "
            "measured C, R, D and M; marked: the job's interval now and tau_Daly, the card's optimum."
            "</figcaption></figure>"
        )
    rows = downtime(card)
    if rows:
        out.append(
            '<figure id="downtime-figure">'
            + downtime_svg(rows)
            + "<figcaption>Each failure's downtime: detection (fault to the first process exit), restart "
            "(restart to the first step), lost work (steps lost x step time).</figcaption></figure>"
        )
    return "\n".join(out)
