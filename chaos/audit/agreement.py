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
from chaos.audit.measure import SIGTERM_POLL_S
from chaos.errors import ScenarioError

TOLERANCE = TIMING_SPREAD  # the spread within which a timed criterion is not judged either

# The job's own answer to a SIGTERM, timed from when TF noticed it: compared by ratio alone. (When TF
# noticed is the phase of its 1 s poll, 0-1 s whatever the job: on the card, not compared.)
SIGTERM_FIGURES = ("exit_after_sigterm_noticed_s",)
TIMED_FROM_INJECT = ("detect_s", "detection ")


@dataclass(frozen=True)
class Row:
    figure: str
    a: float | None
    b: float | None
    # A time measured from a fault's inject is known only to within the inject's own duration (the
    # fault landed somewhere in it), and after a SIGTERM within TF's poll for it too: two figures
    # closer than that agree whatever their ratio.
    slack: float = 0.0
    slack_why: str = ""

    @property
    def relative(self) -> float | None:
        """|a - b| / max(|a|, |b|): symmetric, 0 when both are 0."""
        if self.a is None or self.b is None:
            return None
        top = max(abs(self.a), abs(self.b))
        return 0.0 if top == 0 else abs(self.a - self.b) / top

    def agrees(self, tolerance: float = TOLERANCE) -> bool | None:
        rel = self.relative
        return None if rel is None else rel <= tolerance or self.within_slack

    @property
    def within_slack(self) -> bool:
        return self.a is not None and self.b is not None and abs(self.a - self.b) <= self.slack


def read_card(path: str | Path) -> dict:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ScenarioError(
            f"--agree-with: cannot read a card from {path}: {exc}",
            hint="give the card.json a previous `chaos audit --report-dir DIR` wrote",
        ) from None
    if not isinstance(data, dict) or "model" not in data or "runs" not in data:
        raise ScenarioError(
            f"--agree-with: {path} is not a card (no model, no runs)",
            hint="give the card.json a previous `chaos audit --report-dir DIR` wrote",
        )
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
        for name in SIGTERM_FIGURES:  # only a run whose job answered a SIGTERM has them (older cards: none)
            if (value := _value(run.get(name))) is not None:
                samples.setdefault(f"{key} {name}", []).append(value)
        for worker, figure in sorted((run.get("detection") or {}).items()):
            samples.setdefault(f"{key} detection {worker}{_way(figure)}", []).append(_value(figure))
    for name, values in samples.items():
        known = [v for v in values if v is not None]
        out[name] = statistics.median(known) if known else None
    return out


def inject_slack(card: dict) -> dict[str, float]:
    """Per fault (its entry's name): the longest inject of its runs, in seconds. A fault's
    detection times are measured from its inject's start and the fault landed somewhere within
    the inject (a `docker kill` took 0.12-0.61 s in the runs of docs/audit.md), so they are
    only known to within that."""
    out: dict[str, float] = {}
    for run in card["runs"]:
        value = _value(run.get("inject_s"))
        if run.get("kind") in FAILURES and value is not None:
            key = base_key(run["key"])
            out[key] = max(out.get(key, 0.0), value)
    return out


def sigterm_faults(card: dict) -> set[str]:
    """The faults (entry names) of which a run's job answered its SIGTERM, which reached it through
    TF's poll (a job that trained to the end in the grace period answered nothing: no slack)."""
    return {
        base_key(run["key"])
        for run in card["runs"]
        if run.get("kind") in FAILURES and _value(run.get("exit_after_sigterm_noticed_s")) is not None
    }


def compare(a: dict, b: dict) -> list[Row]:
    fa, fb = figures(a), figures(b)
    sa, sb = inject_slack(a), inject_slack(b)
    polled = sigterm_faults(a) | sigterm_faults(b)

    def slack(name: str) -> tuple[float, str]:
        fault, _, measure = name.partition(" ")
        if not measure.startswith(TIMED_FROM_INJECT):
            return 0.0, ""
        inject = max(sa.get(fault, 0.0), sb.get(fault, 0.0))
        if fault in polled:
            return inject + SIGTERM_POLL_S, f"the inject's {inject:.2f} s and TF's {SIGTERM_POLL_S:g} s SIGTERM poll"
        return inject, f"the inject's {inject:.2f} s"

    return [Row(name, fa.get(name), fb.get(name), *slack(name)) for name in sorted(set(fa) | set(fb))]


def table(rows: list[Row], tolerance: float = TOLERANCE) -> str:
    lines = [f"{'figure':40} {'this':>10} {'other':>10} {'diff':>7}  within {tolerance:.0%}"]
    for r in rows:
        show = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
        rel = r.relative
        verdict = {True: "yes", False: "NO", None: "not comparable"}[r.agrees(tolerance)]
        if r.agrees(tolerance) and rel is not None and rel > tolerance:
            verdict = f"yes (within {r.slack_why})"
        lines.append(
            f"{r.figure:40} {show(r.a):>10} {show(r.b):>10} {'-' if rel is None else f'{rel:.0%}':>7}  {verdict}"
        )
    comparable = [r for r in rows if r.agrees(tolerance) is not None]
    agreeing = sum(bool(r.agrees(tolerance)) for r in comparable)
    by_ratio = sum(bool(r.relative is not None and r.relative <= tolerance) for r in comparable)
    lines.append(
        f"{agreeing} of {len(comparable)} comparable figures agree: {by_ratio} within {tolerance:.0%}, "
        f"{agreeing - by_ratio} more only within their fault's slack (the inject's duration; after a "
        f"SIGTERM also TF's {SIGTERM_POLL_S:g} s poll)"
    )
    return "\n".join(lines)
