"""Reports: the ``Report`` value, ``build_report``, and its writers
(``write_json`` per scenario, ``write_junit`` for a suite, ``terminal_summary``)."""

from chaos.report.build import build_report
from chaos.report.model import PhaseTimings, Report
from chaos.report.timings import phase_timings
from chaos.report.writers import junit_xml, read_json, terminal_summary, write_json, write_junit

__all__ = [
    "PhaseTimings",
    "Report",
    "build_report",
    "junit_xml",
    "phase_timings",
    "read_json",
    "terminal_summary",
    "write_json",
    "write_junit",
]
