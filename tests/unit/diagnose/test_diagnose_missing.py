"""Who is missing, read once (chaos/diagnose/missing.py): the bring-up hang
signature's missing tasks and the user's "who is missing" lines read the
coordination service's straggler report through one adapter to
chaos.stragglers, and TF 1's CreateSession wait through one pattern."""

from __future__ import annotations

from chaos.diagnose.logs import WorkerLog
from chaos.diagnose.missing import missing_tasks, straggler_report, who_is_missing
from chaos.diagnose.observations import Evidence
from chaos.diagnose.observe import observe

REPORT = [
    "2026-12-02 05:00:00.100000: I coordination_service.cc:1] Waiting for 1/2 tasks to connect.",
    "2026-12-02 05:00:00.100000: I coordination_service.cc:1] Example stragglers:",
    "/job:worker/replica:0/task:1",
]
CONNECTED_SOON = (
    "2026-12-02 05:00:03.000000: I coordination_service.cc:1] /job:worker/replica:0/task:1 has connected to "
    "coordination service."
)


def evidence(lines: list[str]) -> list[Evidence]:
    return [Evidence(f"worker-0.log:{i}", "worker-0", text) for i, text in enumerate(lines, 1)]


def test_the_report_and_the_line_that_says_it():
    lines = evidence(REPORT)
    assert straggler_report(lines) == (lines[1], ["worker-1"])
    assert missing_tasks(lines) == {"worker-1": lines[1]}


def test_a_task_that_connected_within_seconds_was_only_starting_when_the_lines_are_timed():
    lines = evidence([*REPORT, CONNECTED_SOON])
    assert straggler_report(lines) is None
    # untimed (the hang signature's reading of one generation's lines), a connect never clears a report
    assert straggler_report(lines, timed=False) == (lines[1], ["worker-1"])
    assert missing_tasks(lines) == {"worker-1": lines[1]}


def test_tf1s_create_session_wait_is_read_by_both():
    line = "2026-12-02 05:00:00.1: I master.cc:1] CreateSession still waiting for response from worker: /job:ps/replica:0/task:0"
    assert missing_tasks(evidence([line])) == {"ps-0": evidence([line])[0]}
    log = WorkerLog("worker-0", "worker-0.log", (line,), (1,))
    (found,) = who_is_missing([observe(log)])
    assert (found.who, found.what) == ("ps-0", "never answered: others wait for it at start")
