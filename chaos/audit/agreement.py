"""Two cards of the same job side by side: does each measured figure agree
within a tolerance (issue 25: two runs of the battery within 20 %)?

Reads the cards' JSON (``card.json``), so a card from last week compares with
today's. A figure one card lacks is listed as not comparable, never as agreeing.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from chaos.audit.battery import base_key
from chaos.audit.findings import FAILURES, TIMING_SPREAD
from chaos.errors import ScenarioError

TOLERANCE = TIMING_SPREAD  # the spread within which a timed criterion is not judged either


@dataclass(frozen=True)
class Row:
    figure: str
    a: float | None
    b: float | None

    @property
    def relative(self) -> float | None:
        """|a - b| / max(|a|, |b|): symmetric, 0 when both are 0."""
        if self.a is None or self.b is None:
            return None
        top = max(abs(self.a), abs(self.b))
        return 0.0 if top == 0 else abs(self.a - self.b) / top

    def agrees(self, tolerance: float = TOLERANCE) -> bool | None:
        rel = self.relative
        return None if rel is None else rel <= tolerance


def read_card(path: str | Path) -> dict:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ScenarioError(f"--agree-with: cannot read a card from {path}: {exc}",
                            hint="give the card.json a previous `chaos audit --report-dir DIR` wrote") from None
    if not isinstance(data, dict) or "model" not in data or "runs" not in data:
        raise ScenarioError(f"--agree-with: {path} is not a card (no model, no runs)",
                            hint="give the card.json a previous `chaos audit --report-dir DIR` wrote")
    return data


def _value(figure: dict | None) -> float | None:
    return figure.get("value") if isinstance(figure, dict) else None


def _way(figure: dict | None) -> str:
    """A detection's way of noticing, as its name's suffix (``[connection broke]``);
    none for a figure without one (a card written before ways were told apart)."""
    how = figure.get("how") if isinstance(figure, dict) else None
    return f" [{how}]" if how else ""


def figures(card: dict) -> dict[str, float | None]:
    """The measured figures of a card, by a stable name. A fault the battery ran
    several times (``chaos audit --repeat N``: keys ``partition``, ``partition#2``...)
    gives the median of its runs' values, under the entry's name, so a card of
    three runs per fault compares with one of one. A worker's detection is named
    with its way of noticing (chaos.audit.noticing): runs that noticed through a
    broken connection and runs that waited for the heartbeats give one figure
    each, never a median of the two; a way one card never saw is not comparable."""
    m = card["model"]
    out = {f"model {name}": _value(m.get(name)) for name in ("step_time_s", "save_s", "restart_s", "detect_s")}
    samples: dict[str, list[float | None]] = {}
    for run in card["runs"]:
        if run.get("kind") not in FAILURES:  # no fault to detect (reference), or a different measure (bring-up)
            continue
        key = base_key(run["key"])
        for name in ("detect_s", "restart_s"):
            samples.setdefault(f"{key} {name}", []).append(_value(run.get(name)))
        for worker, figure in sorted((run.get("detection") or {}).items()):
            samples.setdefault(f"{key} detection {worker}{_way(figure)}", []).append(_value(figure))
    for name, values in samples.items():
        known = [v for v in values if v is not None]
        out[name] = statistics.median(known) if known else None
    return out


def compare(a: dict, b: dict) -> list[Row]:
    fa, fb = figures(a), figures(b)
    return [Row(name, fa.get(name), fb.get(name)) for name in sorted(set(fa) | set(fb))]


def table(rows: list[Row], tolerance: float = TOLERANCE) -> str:
    lines = [f"{'figure':40} {'this':>10} {'other':>10} {'diff':>7}  within {tolerance:.0%}"]
    for r in rows:
        show = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
        rel = r.relative
        verdict = {True: "yes", False: "NO", None: "not comparable"}[r.agrees(tolerance)]
        lines.append(f"{r.figure:40} {show(r.a):>10} {show(r.b):>10} {'-' if rel is None else f'{rel:.0%}':>7}  {verdict}")
    comparable = [r for r in rows if r.agrees(tolerance) is not None]
    agreeing = sum(bool(r.agrees(tolerance)) for r in comparable)
    lines.append(f"{agreeing} of {len(comparable)} comparable figures within {tolerance:.0%}")
    return "\n".join(lines)
