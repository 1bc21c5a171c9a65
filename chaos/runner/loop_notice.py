"""The runner's word on a restart loop: after a run whose last restarts met the
same root cause with no step of progress (chaos.diagnose.loops), its report
carries a ``restart_loop`` notice ("stop retrying: restart loop: ..."), shown in
the terminal summary, the JSON report and the page like every notice.

Read from the run's own events the way ``chaos diagnose`` reads the report's
logs, so both say the same. The policy still stops at ``max_restarts``: with
LOOP_CYCLES = 2 the loop is seen when the second identical restart fails, which
in the shipped scenario is when its budget (2) runs out anyway."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from chaos.diagnose.loops import from_events
from chaos.events import RUNNER, NoticeEvent
from chaos.report import Report, outputs
from chaos.timeline import Timeline

TOPIC = "restart_loop"


def with_loop_notice(report: Report, report_dir: Path | None = None) -> Report:
    """The report with the loop's notice added (its page and JSON written again when it has a
    folder); the report as it was when there is no loop, or the run broke."""
    if not isinstance(report, Report) or report.error or any(n.topic == TOPIC for n in report.notices()):
        return report
    try:
        _, loop = from_events(list(report.timeline), report.scenario)
    except Exception:  # noqa: BLE001 - a reading that breaks costs the notice, never the report
        return report
    if loop is None:
        return report
    end = report.timeline.end or 0.0
    notice = NoticeEvent(t=end, source=RUNNER, topic=TOPIC, text=loop.said())
    report = replace(report, timeline=Timeline(report.timeline.info, [*report.timeline.events, notice]))
    if report_dir is not None and report.artifacts:
        try:
            for writer in (outputs.page, outputs.json_report):
                report = report.with_artifacts(writer(report, list(report.timeline), report_dir))
        except OSError:
            pass  # the notice is in the report returned; the files keep what was written first
    return report
