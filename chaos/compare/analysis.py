"""Compare a baseline's reports with a candidate's, scenario by scenario."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from chaos.checks.verdict import Status
from chaos.compare.metrics import METRICS, environment, figures
from chaos.compare.stats import Shift, Thresholds, shift
from chaos.report.model import Report


@dataclass(frozen=True)
class MetricChange:
    metric: str
    baseline: list[float]
    candidate: list[float]
    shift: Shift | None

    @property
    def label(self) -> str:
        return METRICS[self.metric][0]

    @property
    def unit(self) -> str:
        return METRICS[self.metric][1]

    @property
    def worse(self) -> bool:
        """Beyond noise and larger: every metric here is worse when larger."""
        return bool(self.shift and self.shift.beyond_noise and self.shift.change > 0)


@dataclass(frozen=True)
class ScenarioComparison:
    scenario: str
    baseline: Counter  # status value -> runs
    candidate: Counter
    metrics: list[MetricChange]
    environment_diff: dict[str, tuple[str, str]]  # key -> (baseline, candidate)
    reasons: list[str] = field(default_factory=list)  # why a candidate run did not pass

    @property
    def verdict_regression(self) -> bool:
        """Every baseline run passed, some candidate run did not (or the candidate never ran)."""
        runs_b = sum(self.baseline.values())
        runs_c = sum(self.candidate.values())
        return runs_b > 0 and self.baseline["pass"] == runs_b and (runs_c == 0 or self.candidate["pass"] < runs_c)

    @property
    def verdict_improvement(self) -> bool:
        runs_c = sum(self.candidate.values())
        return self.baseline["pass"] < sum(self.baseline.values()) and runs_c > 0 and self.candidate["pass"] == runs_c

    @property
    def slower(self) -> list[MetricChange]:
        return [m for m in self.metrics if m.worse]

    @property
    def regression(self) -> bool:
        return self.verdict_regression or bool(self.slower)

    @property
    def outcome(self) -> str:
        if self.verdict_regression:
            return "REGRESSION (verdicts)"
        if self.slower:
            return "REGRESSION (" + ", ".join(m.label for m in self.slower) + ")"
        if self.verdict_improvement:
            return "improved"
        return "no change beyond noise"


@dataclass(frozen=True)
class Comparison:
    baseline_name: str
    candidate_name: str
    scenarios: list[ScenarioComparison]
    thresholds: Thresholds

    @property
    def regressions(self) -> list[ScenarioComparison]:
        return [s for s in self.scenarios if s.regression]


def _status_counts(reports: list[Report]) -> Counter:
    return Counter(r.status.value for r in reports)


def _environment_diff(baseline: list[Report], candidate: list[Report]) -> dict[str, tuple[str, str]]:
    env_b = next((e for e in map(environment, baseline) if e), {})
    env_c = next((e for e in map(environment, candidate) if e), {})
    if bool(env_b) != bool(env_c):  # one side's runs broke before any worker said how it started
        none = "none: no worker of these runs reported its start"
        return {"environment": ("reported", none) if env_b else (none, "reported")}
    keys = sorted(set(env_b) | set(env_c))
    return {k: (env_b.get(k, "-"), env_c.get(k, "-")) for k in keys if env_b.get(k) != env_c.get(k)}


def compare_scenario(
    name: str, baseline: list[Report], candidate: list[Report], thresholds: Thresholds
) -> ScenarioComparison:
    figs_b = [figures(r) for r in baseline if r.status is not Status.ERROR]
    figs_c = [figures(r) for r in candidate if r.status is not Status.ERROR]
    metrics = []
    for metric, (_, unit) in METRICS.items():
        b = [f[metric] for f in figs_b if metric in f]
        c = [f[metric] for f in figs_c if metric in f]
        if b or c:
            metrics.append(MetricChange(metric, b, c, shift(b, c, unit, thresholds)))
    reasons = sorted(
        {
            (
                f"run error: {r.error}"
                if r.error
                else "; ".join(f"{label} {v.status.value}: {v.reason}" for label, v in r.numbered() if not v.passed)
            )
            for r in candidate
            if r.status is not Status.PASS
        }
    )
    return ScenarioComparison(
        name,
        _status_counts(baseline),
        _status_counts(candidate),
        metrics,
        _environment_diff(baseline, candidate),
        reasons,
    )


def compare(
    baseline: list[Report],
    candidate: list[Report],
    *,
    baseline_name: str = "baseline",
    candidate_name: str = "candidate",
    thresholds: Thresholds = Thresholds(),  # noqa: B008 - a frozen value
) -> Comparison:
    names = list(dict.fromkeys([r.scenario for r in baseline] + [r.scenario for r in candidate]))
    return Comparison(
        baseline_name,
        candidate_name,
        [
            compare_scenario(
                n, [r for r in baseline if r.scenario == n], [r for r in candidate if r.scenario == n], thresholds
            )
            for n in names
        ],
        thresholds,
    )
