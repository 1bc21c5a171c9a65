"""Build a Report from what the runner has at the end of a run."""

from __future__ import annotations

from chaos.checks.verdict import Verdict
from chaos.report.model import Report
from chaos.report.timings import phase_timings
from chaos.scenario.model import Scenario
from chaos.timeline import Timeline


def build_report(
    scenario: Scenario,
    file: str,
    verdicts: list[Verdict],
    timeline: Timeline,
    artifacts: dict[str, str] | None = None,
    error: str | None = None,
    incomplete: str | None = None,
    proxy_image: str | None = None,
    backend: str | None = None,
) -> Report:
    return Report(
        scenario=scenario.name,
        file=file,
        description=scenario.description.strip(),
        explain=scenario.explain.model_dump(),
        verdicts=list(verdicts),
        timeline=timeline,
        timings=phase_timings(timeline, verdicts),
        artifacts=dict(artifacts or {}),
        error=error,
        incomplete=incomplete,
        proxy_image=proxy_image,
        backend=None if backend in (None, "docker") else backend,
    )
