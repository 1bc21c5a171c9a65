"""What ``chaos diagnose`` would say of a run, in its report: for each failure
cycle its root worker, root line, cascade and teardown, with the retry outlook
(a ``root_cause`` notice), and, after a run whose last restarts met the same root
cause with no step of progress (chaos.diagnose.loops), a ``restart_loop``
notice ("stop retrying: restart loop: ..."). Both reach the terminal summary,
the JSON report and the page like every notice.

Read from the run's own events the way ``chaos diagnose`` reads the report's
logs, so both say the same. The runner reads the loop the same way before each
restart (chaos.runner.supervisor) and stops retrying on it, so a looping run's
``training did not complete`` line says the same loop as this notice."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from chaos.diagnose.attribution import Attribution
from chaos.diagnose.families import scenario_family
from chaos.diagnose.loops import Loop, from_events, retry_outlook
from chaos.diagnose.render_attribution import root_said
from chaos.events import RUNNER, InjectEvent, NoticeEvent
from chaos.report import Report, outputs
from chaos.report.model import ROOT_CAUSE
from chaos.timeline import Timeline

TOPIC = "restart_loop"


def cycle_note(a: Attribution, outlook: str) -> str:
    head = "first run" if a.cycle == 0 else f"after restart {a.cycle}"
    parts = [f"{head}: {root_said(a)}"]
    if a.root is not None:
        parts.append(f"root line: {a.root.worker}: {a.root.what} ({a.root.evidence.where})")
    if a.cascade:
        parts.append(f"cascade: {len(a.cascade)} line(s) of {', '.join(sorted({c.worker for c in a.cascade}))}")
    if a.teardown:
        parts.append(f"teardown: {', '.join(f'{t.worker} {t.what}' for t in a.teardown)}")
    return "; ".join(parts + [f"retry outlook: {outlook}"])


def notes(report: Report, cycles: list[Attribution], loop: Loop | None) -> list[NoticeEvent]:
    end = report.timeline.end or 0.0
    injected = [e.fault for e in report.timeline if isinstance(e, InjectEvent)]
    outlook = retry_outlook(scenario_family(report.scenario, injected), cycles, loop).said()
    out = [NoticeEvent(t=end, source=RUNNER, topic=ROOT_CAUSE, text=cycle_note(a, outlook)) for a in cycles if a.failed]
    if loop is not None:
        out.append(NoticeEvent(t=end, source=RUNNER, topic=TOPIC, text=loop.said()))
    return out


def with_diagnosis(report: Report, report_dir: Path | None = None) -> Report:
    """The report with its root-cause notes and its loop notice added (its page and JSON written
    again when it has a folder); the report as it was when the run broke or nothing failed."""
    if not isinstance(report, Report) or report.error or any(n.topic in (TOPIC, ROOT_CAUSE) for n in report.notices()):
        return report
    try:
        cycles, loop = from_events(list(report.timeline), report.scenario)
        added = notes(report, cycles, loop)
    except Exception:  # noqa: BLE001 - a reading that breaks costs the notes, never the report
        return report
    if not added:
        return report
    report = replace(report, timeline=Timeline(report.timeline.info, [*report.timeline.events, *added]))
    if report_dir is not None and report.artifacts:
        try:
            for writer in (outputs.page, outputs.json_report):
                report = report.with_artifacts(writer(report, list(report.timeline), report_dir))
        except OSError:
            pass  # the notes are in the report returned; the files keep what was written first
    return report
