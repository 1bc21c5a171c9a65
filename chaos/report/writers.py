"""Report writers: JSON per scenario, JUnit XML for a suite, a terminal summary.

JUnit mapping (what CI systems show): one testsuite per scenario, one testcase
per check; a failed check is a <failure>, a check that could not judge is an
<error> (so CI never shows it as passed); a run that broke before any check
is one <error> testcase named ``run``. Bodies carry the evidence, one event a
line, and the command that reproduces the run.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from chaos.checks.verdict import Status
from chaos.events_text import event_line
from chaos.report.model import ROOT_CAUSE, Report

EVIDENCE_LINES = 5


def write_json(report: Report, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report.to_dict(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def read_json(path: str | Path) -> Report:
    return Report.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


def _evidence(report: Report, verdict, limit: int = EVIDENCE_LINES) -> list[str]:
    t0 = report.timeline.start
    lines = [event_line(e, t0) for e in verdict.evidence[:limit]]
    if len(verdict.evidence) > limit:
        lines.append(f"... {len(verdict.evidence) - limit} more events in the JSON report")
    return lines


def junit_xml(reports: list[Report]) -> str:
    root = ET.Element("testsuites", name="chaos")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for report in reports:
        suite = ET.SubElement(root, "testsuite", name=report.scenario, file=report.file)
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="reproduce", value=report.reproduce)
        counts = {"tests": 0, "failures": 0, "errors": 0}
        if report.error:
            case = ET.SubElement(suite, "testcase", classname=report.scenario, name="run")
            ET.SubElement(
                case, "error", message=report.error, type="run"
            ).text = f"{report.error}\nreproduce: {report.reproduce}"
            counts["tests"] += 1
            counts["errors"] += 1
        for label, verdict in report.numbered():
            case = ET.SubElement(suite, "testcase", classname=report.scenario, name=label)
            counts["tests"] += 1
            if verdict.status is Status.PASS:
                continue
            tag, key = ("failure", "failures") if verdict.status is Status.FAIL else ("error", "errors")
            counts[key] += 1
            body = "\n".join([verdict.reason, *_evidence(report, verdict), f"reproduce: {report.reproduce}"])
            ET.SubElement(case, tag, message=verdict.reason, type=verdict.status.value).text = body
        ET.SubElement(suite, "system-out").text = f"reproduce: {report.reproduce}"
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
        suite.set("skipped", "0")
        suite.set("time", f"{report.timings.total_s or 0:.3f}")
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(reports: list[Report], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(junit_xml(reports), encoding="utf-8")
    return path


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} s"


def terminal_summary(reports: list[Report]) -> str:
    """Each scenario's status; for every verdict that did not pass, its reason
    and a few events of evidence; then the command that reproduces it."""
    lines: list[str] = []
    for report in reports:
        t = report.timings
        lines.append(
            f"{report.status.value.upper():7} {report.scenario}  "
            f"(bring-up {_seconds(t.bring_up_s)}, symptom {_seconds(t.time_to_symptom_s)}, "
            f"recover {_seconds(t.time_to_recover_s)}, total {_seconds(t.total_s)})"
        )
        if report.error:
            lines.append(f"  run error: {report.error}")
        if report.incomplete:
            lines.append(f"  {report.incomplete}")
        if nodes := report.placement():
            lines.append(f"  nodes: {nodes}")
        for notice in report.notices():
            said = "root cause" if notice.topic == ROOT_CAUSE else f"warning: {notice.topic}"
            lines.append(f"  {said}: {notice.text}")
        for label, verdict in report.numbered():
            lines.append(f"  {verdict.status.value:7} {label}: {verdict.reason}")
            if verdict.status is not Status.PASS:
                lines.extend(f"            {line}" for line in _evidence(report, verdict))
        if report.status is not Status.PASS:
            lines.append(f"  reproduce: {report.reproduce}")
    by_status = {s: sum(r.status is s for r in reports) for s in Status}
    lines.append(
        f"{len(reports)} scenarios: {by_status[Status.PASS]} passed, "
        f"{by_status[Status.FAIL]} failed, {by_status[Status.UNKNOWN]} unknown, {by_status[Status.ERROR]} error"
    )
    return "\n".join(lines)
