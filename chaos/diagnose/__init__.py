"""``chaos diagnose``: which measured failure do a job's logs show?

logs -> observations (chaos.diagnose.logs, .observe; one pass, lines not kept)
scenario files + docs/findings.md -> catalogue (.catalogue, .signatures)
catalogue x observations -> ranked matches (.match) -> text (.render)
"""

from __future__ import annotations

from pathlib import Path

from chaos.diagnose.catalogue import KnownFailure, build, default_findings, default_scenarios
from chaos.diagnose.logs import DiagnoseError, WorkerLog, check_paths, read_logs, split_dump
from chaos.diagnose.match import Match, rank, tied_first
from chaos.diagnose.observations import WorkerObservations
from chaos.diagnose.observe import observe, observe_all, observe_files
from chaos.diagnose.signatures import PatternSignature
from chaos.diagnose.watch import Watch


def watch_for(entries: list[KnownFailure]) -> Watch:
    """The scenario patterns of these entries, to look for while the logs are read."""
    return Watch(s.pattern for e in entries for s in e.signatures if isinstance(s, PatternSignature))


def diagnose_logs(logs: list[WorkerLog], entries: list[KnownFailure]) -> tuple[list[WorkerObservations], list[Match]]:
    workers = observe_all(logs)
    return workers, rank(entries, workers)


def diagnose(paths: list[str | Path], scenarios: list[str | Path] | None = None, findings: Path | None = None):
    """Read the logs and rank the catalogue: (observations, ranked matches, notes).
    The logs are read in one pass, their lines not kept (a log of any length
    fits in bounded memory): the catalogue is built first, so that its
    scenario patterns are searched as the lines go by."""
    check_paths(list(paths))  # a missing file is told before the catalogue is built
    entries, more = build(
        scenarios or [default_scenarios()], findings if findings is not None else default_findings(), field=True
    )
    workers, notes = observe_files(list(paths), watch_for(entries))
    return workers, rank(entries, workers), notes + more


__all__ = [
    "DiagnoseError",
    "KnownFailure",
    "Match",
    "WorkerLog",
    "WorkerObservations",
    "build",
    "diagnose",
    "diagnose_logs",
    "observe",
    "observe_all",
    "observe_files",
    "rank",
    "read_logs",
    "split_dump",
    "tied_first",
    "watch_for",
]
