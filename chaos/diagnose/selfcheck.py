"""Does a scenario run's own worker logs diagnose as that scenario?

The suite asks this after every scenario that passed (chaos.pytest_plugin):
the catalogue is only worth something if the logs of the very failure it
describes point back to it. The rule:

* a diagnosable scenario must be ranked first, or tied-first: tied entries
  score the same on these logs, i.e. the logs show the same symptoms for
  them (``port-refused-...`` and ``stream-cut-...`` both end in ``Socket
  closed``: no log can tell them apart, and the output says so);
* a scenario with nothing to match (its only symptom check is ``no_error``,
  e.g. ``slow-close-at-bring-up-trains-normally``) must give no match at all;
* a scenario with a symptom check no log can show (``catalogue.unseen_checks``:
  weights digests, backup contents, a slowdown of a whole container) is not
  judged: the outcome is recorded, never counted as a pass.
"""

from __future__ import annotations

from pathlib import Path

from chaos.diagnose.catalogue import Entry
from chaos.diagnose.logs import WorkerLog, read_logs
from chaos.diagnose.match import Match, rank, tied_first
from chaos.diagnose.observe import observe
from chaos.events import RUNNER, LogLine


def report_logs(report) -> list[WorkerLog]:
    """The run's worker logs: the report's artifact files when it wrote them,
    else the same lines rebuilt from its timeline."""
    files = [path for label, path in sorted(report.artifacts.items()) if label.startswith("worker-") and label.endswith(" log")]
    if files and all(Path(f).is_file() for f in files):
        return read_logs(files)[0]
    lines: dict[str, list[str]] = {}
    for event in report.timeline:
        if event.source == RUNNER:
            continue
        lines.setdefault(event.source, []).append(event.text if isinstance(event, LogLine) else event.to_json())
    return [
        WorkerLog(source, f"{report.scenario}/{source}.log", tuple(text), tuple(range(1, len(text) + 1)))
        for source, text in sorted(lines.items())
    ]


def verdict(name: str, logs: list[WorkerLog], entries: list[Entry]) -> tuple[bool | None, str, list[Match]]:
    """(holds, one line saying why, the ranking) for scenario ``name``'s logs;
    holds is None when the rule cannot judge (part of the symptom is in no log)."""
    own = next((e for e in entries if e.name == name), None)
    if own is None:
        return False, f"{name} is not in the catalogue", []
    ranked = rank(entries, [observe(log) for log in logs])
    first = tied_first(ranked)
    shown = ", ".join(f"{m.entry.name} ({m.score:.2f})" for m in ranked[:4]) or "nothing"
    if own.unseen:
        # Part of its symptom is not in any log: its rank says nothing either way.
        return None, (
            f"not judged: {', '.join(own.unseen)} cannot be seen in a log; the logs rank {shown}"
        ), ranked
    if not own.diagnosable:
        if ranked:
            return False, f"{name} has no symptom a log shows, but its logs diagnose as {shown}", ranked
        return True, "no match, as expected of a scenario with no symptom in its logs", ranked
    if any(m.entry.name == name for m in first):
        tied = [m.entry.name for m in first if m.entry.name != name]
        return True, f"diagnosed as {name}" + (f" (tied with {', '.join(tied)})" if tied else ""), ranked
    return False, f"its own logs do not diagnose as {name}: ranked {shown}", ranked
