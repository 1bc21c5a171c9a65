"""``chaos diagnose``: which measured failure do a job's logs show?

    logs -> observations (chaos.diagnose.logs, .observe)
    scenario files + docs/findings.md -> catalogue (.catalogue, .signatures)
    catalogue x observations -> ranked matches (.match) -> text (.render)
"""

from __future__ import annotations

from pathlib import Path

from chaos.diagnose.catalogue import Entry, build, default_findings, default_scenarios
from chaos.diagnose.logs import DiagnoseError, WorkerLog, read_logs, split_dump
from chaos.diagnose.match import Match, rank, tied_first
from chaos.diagnose.observe import WorkerObservations, observe


def diagnose_logs(logs: list[WorkerLog], entries: list[Entry]) -> tuple[list[WorkerObservations], list[Match]]:
    workers = [observe(log) for log in logs]
    return workers, rank(entries, workers)


def diagnose(paths: list[str | Path], scenarios: list[str | Path] | None = None, findings: Path | None = None):
    """Read the logs and rank the catalogue: (observations, ranked matches, notes)."""
    logs, notes = read_logs(paths)
    entries, more = build(scenarios or [default_scenarios()], findings if findings is not None else default_findings(), field=True)
    workers, ranked = diagnose_logs(logs, entries)
    return workers, ranked, notes + more


__all__ = [
    "DiagnoseError", "Entry", "Match", "WorkerLog", "WorkerObservations", "build", "diagnose",
    "diagnose_logs", "observe", "rank", "read_logs", "split_dump", "tied_first",
]
