"""``chaos audit``'s run: the battery through the run facade, then the card.

The uninterrupted run goes first and alone (its step times give the save cost
C, which another run's training on the same cores would inflate); the faults
then run side by side like ``chaos run -j N``, or one at a time with -j 1, when
each fault run's steps before its fault count towards C and the step time too. Every entry ends up on the card:
measured, or "not measured" with why (refused by validation for this
workload, its run broke, its fault never acted).
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from chaos.audit import policy_check, policy_yaml
from chaos.audit.battery import Planned, plan
from chaos.audit.card import Assumptions, Card, build_card
from chaos.audit.measure import RunMeasures, measure, not_measured
from chaos.audit.policy_yaml import target_of
from chaos.audit.render_html import page
from chaos.audit.render_text import markdown, to_json
from chaos.checks.verdict import Status
from chaos.errors import ChaosError
from chaos.report import outputs
from chaos.report.model import Report
from chaos.runner.run import RunOptions, broken_report
from chaos.runner.suite import SuiteEntry, run_suite
from chaos.workload.spec import WorkloadSpec


@dataclass(frozen=True)
class AuditRequest:
    workload_file: str | None
    workload: WorkloadSpec | None
    battery: str
    assumptions: Assumptions
    report_dir: Path | None
    jobs: int
    command: str = ""
    repeat: int = 1  # runs of each fault (the reference runs once)


def scenario_file(planned: Planned, report_dir: Path | None) -> str:
    """Where the generated scenario is written (so each run's reproduce line works), or a label."""
    if report_dir is None or planned.scenario is None:
        return f"<audit battery: {planned.entry.key}>"
    path = report_dir / "scenarios" / f"{planned.scenario.name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    # Only what differs from the defaults: the file reads like a hand-written scenario and loads
    # back equal (tests/unit/audit/test_run.py).
    data = planned.scenario.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return str(path)


def run_battery(planned: list[Planned], options: RunOptions, jobs: int, show=None) -> list[Report | None]:
    """A Report per runnable entry (None for a refused one), in battery order."""
    runnable = [(i, p) for i, p in enumerate(planned) if p.scenario is not None]
    entries = {
        i: SuiteEntry(p.scenario, scenario_file(p, options.report_dir.parent if options.report_dir else None))
        for i, p in runnable
    }
    reports: list[Report | None] = [None] * len(planned)
    first = [i for i, p in runnable if p.entry.kind == "reference"]
    rest = [i for i, p in runnable if p.entry.kind != "reference"]
    for group, n in ((first, 1), (rest, jobs)):
        if not group:
            continue
        for i, report in zip(group, run_suite([entries[i] for i in group], options, jobs=n, show=show)):
            reports[i] = report
    return reports


def measures_of(planned: list[Planned], reports: list[Report | None], jobs: int = 1) -> list[RunMeasures]:
    """Each run's figures; a run ran alone when it was the reference (run_battery runs it first,
    by itself) or the battery ran one run at a time."""
    out = []
    for p, report in zip(planned, reports):
        if p.scenario is None:
            out.append(not_measured(p.entry, f"refused for this workload: {p.refused}"))
        elif report is None:
            out.append(not_measured(p.entry, "no report came back"))
        else:
            alone = jobs == 1 or p.entry.kind == "reference"
            out.append(measure(p.entry, report, p.scenario.timeouts.symptom, alone))
    return out


def card_of(request: AuditRequest, measures: list[RunMeasures], wall_s: float | None = None) -> Card:
    label = request.workload_file or "the built-in harness"
    notes = [f"The battery took {wall_s:.0f} s of wall time on this machine."] if wall_s is not None else []
    if request.repeat > 1:
        notes.append(
            f"Each fault ran {request.repeat} times (--repeat): every run is a row; the model's R and D "
            "are medians over all of them, and a criterion fails when any run fails it."
        )
    if request.jobs > 1:
        notes.append(
            f"Up to {request.jobs} fault runs went side by side (-j {request.jobs}): restart and detection "
            "times include the battery's own load (restarts measured 2-4x a lone run's; docs/audit.md). "
            "-j 1, the default, measures each run alone."
        )
    notes += [
        "Restart times are this framework's: its standby workers import TensorFlow before they are told to go "
        "(docs/speed.md), so R excludes the import a real orchestrator's restart pays.",
    ]
    card = build_card(
        measures,
        request.assumptions,
        workload=label,
        battery=request.battery,
        checkpoint_dir=request.workload.checkpoint_dir if request.workload else "",
        command=request.command,
        notes=notes,
        target=target_of(request.workload, label, request.assumptions.nodes),
    )
    return with_policy_check(card)


def with_policy_check(card: Card) -> Card:
    """The card with its failure-policy manifests validated offline (chaos.audit.policy_check)."""
    if card.policy is None or card.policy.missing:
        return card
    docs = {
        "service": policy_yaml.job_service(card.target),
        "job": policy_yaml.job(card.policy, card.target),
        "jobset": policy_yaml.jobset(card.policy, card.target),
        "compose": policy_yaml.compose(card.policy, card.target),
    }
    return replace(card, policy_check=policy_check.summary(docs))


def write_card(card: Card, report_dir: Path) -> dict[str, Path]:
    report_dir.mkdir(parents=True, exist_ok=True)
    paths = {"html": report_dir / "card.html", "markdown": report_dir / "card.md", "json": report_dir / "card.json"}
    paths["html"].write_text(page(card, report_dir), encoding="utf-8")
    paths["markdown"].write_text(markdown(card), encoding="utf-8")
    paths["json"].write_text(to_json(card), encoding="utf-8")
    return paths


def audit(request: AuditRequest, show=None, preflight=None) -> tuple[Card, list[Report | None]]:
    started = time.monotonic()
    planned = plan(request.battery, request.workload, request.repeat)
    options = RunOptions(report_dir=request.report_dir / "runs" if request.report_dir else None)
    try:
        if preflight is not None:
            preflight(options)
    except ChaosError as exc:
        reports = [
            None if p.scenario is None else broken_report(p.scenario, p.entry.key, exc, _no_events(), 0.0, options)
            for p in planned
        ]
    else:
        reports = run_battery(planned, options, request.jobs, show)
    if options.report_dir is not None:  # runs/index.html and junit.xml, as chaos run --report-dir writes them
        outputs.write_suite([r for r in reports if r is not None], options.report_dir)
    return card_of(request, measures_of(planned, reports, request.jobs), time.monotonic() - started), reports


def any_broken(reports: list[Report | None]) -> bool:
    return any(r is not None and r.status is Status.ERROR for r in reports)


def command_line(argv: list[str]) -> str:
    return " ".join(shlex.quote(a) for a in ["chaos", "audit", *argv])


def _no_events():
    from chaos.eventlog import EventLog

    return EventLog()
