"""The report card: the runs' measurements, the model, the findings, the grades.

``build_card`` is a pure function of the battery's measurements and the
user's assumptions (node MTBF, node count); the renderers
(chaos.audit.render_*) only format what it holds.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from typing import Any

from chaos.audit import model
from chaos.audit.findings import FAILURES, Context, Finding, evaluate
from chaos.audit.grading import Grade, grades
from chaos.audit.measure import Figure, RunMeasures
from chaos.audit.policy import FailurePolicy, derive
from chaos.audit.policy_yaml import Target


@dataclass(frozen=True)
class Assumptions:
    node_mtbf_hours: float
    nodes: int

    @property
    def mtbf_s(self) -> float:
        return model.job_mtbf_s(self.node_mtbf_hours, self.nodes)


@dataclass(frozen=True)
class Modelled:
    """The model's inputs (measured) and outputs; ``missing`` says why it was not computed."""

    step_time_s: Figure
    save_s: Figure  # C
    restart_s: Figure  # R
    detect_s: Figure  # D
    interval_steps: int
    mtbf_s: float
    young_s: float | None = None
    daly_s: float | None = None
    best_interval_steps: int = 0
    now: model.Goodput | None = None
    recommended: model.Goodput | None = None
    waste_ratio: float | None = None
    missing: str = ""
    runs: tuple[str, ...] = ()

    @property
    def interval_s(self) -> float | None:
        if self.step_time_s.known and self.interval_steps:
            return self.interval_steps * self.step_time_s.value
        return None

    def to_dict(self) -> dict[str, Any]:
        figure = lambda f: {"value": f.value, "note": f.note}  # noqa: E731
        return {
            "formulas": {
                "mtbf": model.MTBF_FORMULA,
                "young": model.YOUNG_FORMULA,
                "daly": model.DALY_FORMULA,
                "ettr": model.ETTR_FORMULA,
            },
            "step_time_s": figure(self.step_time_s),
            "save_s": figure(self.save_s),
            "restart_s": figure(self.restart_s),
            "detect_s": figure(self.detect_s),
            "interval_steps": self.interval_steps,
            "interval_s": self.interval_s,
            "mtbf_s": self.mtbf_s,
            "young_s": self.young_s,
            "daly_s": self.daly_s,
            "best_interval_steps": self.best_interval_steps,
            "now": self.now.to_dict() if self.now else None,
            "recommended": self.recommended.to_dict() if self.recommended else None,
            "waste_ratio": self.waste_ratio,
            "missing": self.missing,
            "runs": list(self.runs),
        }


def _median_figure(figures: list[tuple[str, Figure]], what: str) -> Figure:
    known = [(k, f.value) for k, f in figures if f.known]
    if not known:
        return Figure.missing(f"no run measured {what}")
    value = statistics.median(v for _, v in known)
    return Figure.of(value, f"median over {', '.join(k for k, _ in known)}")


def _reference(runs: list[RunMeasures]) -> RunMeasures | None:
    return next((r for r in runs if r.kind == "reference" and r.measured), None)


def _where(alone: list[RunMeasures]) -> str:
    """Which runs a pooled figure came from, in words."""
    faults = sum(r.kind != "reference" for r in alone)
    ref = "the uninterrupted run" if any(r.kind == "reference" for r in alone) else ""
    more = f"{faults} fault run(s) before their fault" if faults else ""
    return " and ".join(p for p in (ref, more) if p)


def job_speed(runs: list[RunMeasures]) -> tuple[Figure, Figure]:
    """The step time and the save cost C, from every run that had the machine to itself.

    Each run trains undisturbed until its fault, so all of them measure the job's own
    speed: one run's figure is a single sample of ~10 ms steps on a shared machine (two
    batteries' references were 24-26 % apart, docs/audit.md); pooled, C is the mean of
    every save's cost (the expected cost the model needs) and the step time the
    median of the runs' medians. Runs beside
    others (-j N) are left out: their steps carry the battery's own load."""
    alone = [r for r in runs if r.measured and r.alone]
    timed = [r for r in alone if r.step_time_s.known]
    if timed:
        step = Figure.of(
            statistics.median(r.step_time_s.value for r in timed),
            f"median over {len(timed)} runs' median step interval: {_where(timed)}",
        )
    else:
        step = _median_figure([(r.key, r.step_time_s) for r in runs if r.measured], "a step time")
    saving = [r for r in alone if r.save_extras_s]
    extras = [x for r in saving for x in r.save_extras_s]
    if extras:
        # The mean: the model needs the expected cost of a save (a median jumps between kinds of save).
        spread = f" (standard error {statistics.stdev(extras) / len(extras) ** 0.5:.3g} s)" if len(extras) > 1 else ""
        save = Figure.of(statistics.fmean(extras), f"mean over {len(extras)} saves in {_where(saving)}{spread}")
    else:
        save = _median_figure([(r.key, r.save_cost_s) for r in runs if r.measured], "a save cost")
    return step, save


def modelled(runs: list[RunMeasures], assumptions: Assumptions) -> Modelled:
    ref = _reference(runs)
    measured = [r for r in runs if r.measured]
    step, save = job_speed(runs)
    failures = [r for r in measured if r.kind in FAILURES]
    restart = _median_figure([(r.key, r.restart_s) for r in failures], "a restart")
    detect = _median_figure([(r.key, r.detect_s) for r in failures], "a detection (fault -> restart)")
    steps = (
        ref.save_interval_steps
        if ref is not None and ref.save_interval_steps
        else next((r.save_interval_steps for r in measured if r.save_interval_steps), 0)
    )
    out = Modelled(step, save, restart, detect, steps, assumptions.mtbf_s, runs=tuple(r.key for r in measured))
    absent = [
        f"{name}: {f.note}"
        for name, f in (("step time", step), ("C", save), ("R", restart), ("D", detect))
        if not f.known
    ]
    if not steps:
        absent.append("checkpoint interval: the job said no save interval (plan event)")
    if absent:
        return _replace(out, missing="not computed: " + "; ".join(absent))
    if save.value <= 0:
        return _replace(out, missing="not computed: C measured 0 s (a save adds nothing measurable to its step)")
    m = assumptions.mtbf_s
    young = model.young_interval(save.value, m)
    daly = model.daly_interval(save.value, m, restart.value)
    best_steps = max(1, round(daly / step.value))
    now_costs = model.Costs(save.value, restart.value, detect.value, out.interval_s)
    best_costs = model.Costs(save.value, restart.value, detect.value, best_steps * step.value)
    return _replace(
        out,
        young_s=young,
        daly_s=daly,
        best_interval_steps=best_steps,
        now=model.goodput(now_costs, m),
        recommended=model.goodput(best_costs, m),
        waste_ratio=model.waste_ratio(out.interval_s, best_steps * step.value, now_costs, m),
    )


def _replace(m: Modelled, **changes) -> Modelled:
    from dataclasses import replace

    return replace(m, **changes)


@dataclass(frozen=True)
class Card:
    workload: str
    battery: str
    assumptions: Assumptions
    runs: list[RunMeasures]
    model: Modelled
    findings: list[Finding]
    grades: list[Grade]
    command: str = ""
    notes: list[str] = field(default_factory=list)
    policy: FailurePolicy | None = None  # which exit codes a restart fixed (chaos.audit.policy)
    target: Target = field(default_factory=Target)  # the names the policy's manifests use
    policy_check: str = ""  # how the manifests were validated, and the outcome (chaos.audit.policy_check)

    @property
    def overall(self) -> Grade:
        return self.grades[-1]

    def to_dict_json(self) -> dict[str, Any]:
        """``to_dict`` as it reads back from card.json (plain JSON types)."""
        from chaos.audit.render_text import to_json

        return json.loads(to_json(self))

    def to_dict(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "battery": self.battery,
            "command": self.command,
            "assumptions": {
                "node_mtbf_hours": self.assumptions.node_mtbf_hours,
                "nodes": self.assumptions.nodes,
                "job_mtbf_s": self.assumptions.mtbf_s,
            },
            "grades": [g.to_dict() for g in self.grades],
            "model": self.model.to_dict(),
            "findings": [f.to_dict() for f in self.findings],
            "runs": [r.to_dict() for r in self.runs],
            "notes": list(self.notes),
            "failure_policy": {**self.policy.to_dict(), "validation": self.policy_check} if self.policy else None,
        }


def build_card(
    runs: list[RunMeasures],
    assumptions: Assumptions,
    *,
    workload: str,
    battery: str,
    checkpoint_dir: str = "",
    command: str = "",
    notes: list[str] | None = None,
    target: Target | None = None,
) -> Card:
    m = modelled(runs, assumptions)
    context = Context(
        expected_lost_s=(m.now.costs.interval_s + m.now.costs.save_s) / 2 if m.now else None,
        restart_s=m.restart_s.value,
        interval_s=m.interval_s,
        interval_steps=m.interval_steps,
        best_interval_s=m.best_interval_steps * m.step_time_s.value if m.now else None,
        best_interval_steps=m.best_interval_steps,
        waste_ratio=m.waste_ratio,
        model_missing=m.missing,
        model_runs=m.runs,
        checkpoint_dir=checkpoint_dir,
    )
    findings = evaluate(runs, context)
    # One worker per node of the cluster the model assumes (--nodes), unless told otherwise.
    target = target or Target(workers=assumptions.nodes)
    return Card(
        workload,
        battery,
        assumptions,
        runs,
        m,
        findings,
        grades(findings),
        command,
        list(notes or []),
        derive(runs),
        target,
    )
