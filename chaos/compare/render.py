"""A comparison as a terminal table, Markdown (for a pull-request comment),
JSON and JUnit XML (a regression is a failed test case)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from chaos.compare.analysis import Comparison, MetricChange, ScenarioComparison
from chaos.compare.stats import smallest_p


def _counts(counter) -> str:
    return ", ".join(f"{n} {status}" for status, n in sorted(counter.items())) or "no runs"


def _underpowered(m: MetricChange, alpha: float) -> bool:
    return smallest_p(len(m.baseline), len(m.candidate)) > alpha


def _metric(m: MetricChange, alpha: float) -> str:
    s = m.shift
    if s is None:
        return f"{m.label}: only on one side ({len(m.baseline)} vs {len(m.candidate)} values)"
    rel = f" ({s.relative:+.0%})" if s.relative is not None else ""
    p = "p n/a (too few runs)" if s.p_value is None else f"p={s.p_value:.3f}"
    if s.p_value is not None and _underpowered(m, alpha):
        p += " (too few runs to reach alpha)"
    flag = "  << beyond noise" if s.beyond_noise else ""
    return (
        f"{m.label}: {s.baseline_median:.2f} -> {s.candidate_median:.2f} {m.unit}{rel}, "
        f"{p}, n={len(m.baseline)}/{len(m.candidate)}{flag}"
    )


def _power_note(c: Comparison) -> str | None:
    """Said when no metric of any scenario had enough runs to reach alpha."""
    compared = [m for s in c.scenarios for m in s.metrics if m.baseline and m.candidate]
    if not compared or not all(_underpowered(m, c.thresholds.alpha) for m in compared):
        return None
    n_b = max(len(m.baseline) for m in compared)
    n_c = max(len(m.candidate) for m in compared)
    return (
        f"note: with {n_b} and {n_c} runs the smallest possible p is {smallest_p(n_b, n_c):.3f} > alpha "
        f"{c.thresholds.alpha}: no timing change can be called beyond noise; use --repeat 4 or more"
    )


def terminal(c: Comparison) -> str:
    lines = [
        f"compare: baseline {c.baseline_name} vs candidate {c.candidate_name} "
        f"(Mann-Whitney U, alpha {c.thresholds.alpha}, median change >= {c.thresholds.min_relative:.0%})"
    ]
    for s in c.scenarios:
        lines.append(f"{s.outcome:28} {s.scenario}")
        lines.append(f"    verdicts: baseline {_counts(s.baseline)}; candidate {_counts(s.candidate)}")
        lines += [f"    {_metric(m, c.thresholds.alpha)}" for m in s.metrics]
        lines += [f"    environment: {k}: {b} -> {v}" for k, (b, v) in s.environment_diff.items()]
        if s.verdict_regression:
            lines += [f"    candidate: {r}" for r in s.reasons]
    note = _power_note(c)
    if note:
        lines.append(note)
    n = len(c.regressions)
    lines.append(f"{len(c.scenarios)} scenarios compared: {n} regression{'s' if n != 1 else ''}")
    return "\n".join(lines)


def markdown(c: Comparison) -> str:
    out = [
        f"### tfchaos compare: `{c.candidate_name}` against `{c.baseline_name}`",
        "",
        f"{len(c.regressions)} of {len(c.scenarios)} scenarios regressed "
        f"(Mann-Whitney U, alpha {c.thresholds.alpha}, median change >= {c.thresholds.min_relative:.0%}).",
        "",
        "| scenario | outcome | verdicts (baseline / candidate) | time to symptom s | time to recover s | steps lost | step time ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in c.scenarios:
        by = {m.metric: m for m in s.metrics}

        def cell(name: str, by=by) -> str:
            m = by.get(name)
            if m is None or m.shift is None:
                return "-"
            mark = " **!**" if m.worse else ""
            return f"{m.shift.baseline_median:.2f} → {m.shift.candidate_median:.2f}{mark}"

        out.append(
            f"| {s.scenario} | {s.outcome} | {_counts(s.baseline)} / {_counts(s.candidate)} | "
            f"{cell('time_to_symptom_s')} | {cell('time_to_recover_s')} | {cell('steps_lost')} | "
            f"{cell('step_time_ms')} |"
        )
    diffs = {k: v for s in c.scenarios for k, v in s.environment_diff.items()}
    if diffs:
        out += ["", "Environment differences (worker-0):", ""]
        out += [f"- `{k}`: `{b}` → `{v}`" for k, (b, v) in sorted(diffs.items())]
    note = _power_note(c)
    if note:
        out += ["", f"_{note}_"]
    return "\n".join(out) + "\n"


def to_dict(c: Comparison) -> dict:
    def metric(m: MetricChange) -> dict:
        s = m.shift
        return {
            "metric": m.metric,
            "unit": m.unit,
            "baseline": m.baseline,
            "candidate": m.candidate,
            "baseline_median": s.baseline_median if s else None,
            "candidate_median": s.candidate_median if s else None,
            "p_value": s.p_value if s else None,
            "beyond_noise": bool(s and s.beyond_noise),
            "worse": m.worse,
        }

    def scenario(s: ScenarioComparison) -> dict:
        return {
            "scenario": s.scenario,
            "outcome": s.outcome,
            "regression": s.regression,
            "verdicts": {"baseline": dict(s.baseline), "candidate": dict(s.candidate)},
            "metrics": [metric(m) for m in s.metrics],
            "environment_diff": {k: list(v) for k, v in s.environment_diff.items()},
            "candidate_reasons": s.reasons,
        }

    return {
        "baseline": c.baseline_name,
        "candidate": c.candidate_name,
        "test": {
            "name": "Mann-Whitney U, two-sided, exact",
            "alpha": c.thresholds.alpha,
            "min_relative_change": c.thresholds.min_relative,
        },
        "regressions": len(c.regressions),
        "scenarios": [scenario(s) for s in c.scenarios],
    }


def junit(c: Comparison) -> str:
    suite = ET.Element(
        "testsuite",
        name=f"compare {c.candidate_name} vs {c.baseline_name}",
        tests=str(len(c.scenarios)),
        failures=str(len(c.regressions)),
    )
    for s in c.scenarios:
        case = ET.SubElement(suite, "testcase", classname="tfchaos.compare", name=s.scenario)
        if s.regression:
            failure = ET.SubElement(case, "failure", message=s.outcome)
            failure.text = "\n".join([_metric(m, c.thresholds.alpha) for m in s.metrics] + s.reasons)
    return ET.tostring(ET.ElementTree(suite).getroot(), encoding="unicode")


def write_all(c: Comparison, folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"markdown": folder / "compare.md", "json": folder / "compare.json", "junit": folder / "compare-junit.xml"}
    paths["markdown"].write_text(markdown(c), encoding="utf-8")
    paths["json"].write_text(json.dumps(to_dict(c), indent=2) + "\n", encoding="utf-8")
    paths["junit"].write_text(junit(c) + "\n", encoding="utf-8")
    return paths
