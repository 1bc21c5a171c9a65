"""Restart loops (chaos/diagnose/loops.py): the corrupt-checkpoint scenario's
run, as measured (every restart fails the restore with the same IndexError
before any step), is a loop after LOOP_CYCLES restarts; a killed worker that
recovers never is. From the logs (chaos diagnose) and from the run's events
(the runner's notice)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from chaos.diagnose.attribution import attribute
from chaos.diagnose.logs import read_logs
from chaos.diagnose.loops import LOOP_CYCLES, from_events, restart_loop, retry_outlook, worker_logs_of
from chaos.diagnose.observe import observe_all
from chaos.diagnose.render import render
from chaos.events import ErrorEvent, ExitEvent, LogLine, NoticeEvent, PhaseEvent, RestartEvent, StartEvent, StepEvent
from chaos.report.model import ROOT_CAUSE, Report
from chaos.report.writers import terminal_summary
from chaos.runner.diagnosis_notes import TOPIC, with_diagnosis
from chaos.timeline import RunInfo, Timeline

T0 = 1_795_600_000.0
WORKERS = ("worker-0", "worker-1")
READ_LESS = "Read less bytes than requested"


def _steps(t: float, first: int, last: int) -> list:
    return [
        StepEvent(t=T0 + t + 0.01 * n, source=w, step=n, batch_digest=f"{n:016x}")
        for n in range(first, last + 1)
        for w in WORKERS
    ]


def _kill_round(t: float) -> list:
    """worker-1 SIGKILLed; the chief fails on the lost peer."""
    return [
        ExitEvent(t=T0 + t, source="worker-1", exit_code=137),
        ErrorEvent(
            t=T0 + t + 0.1,
            source="worker-0",
            error_class="UnavailableError",
            message="Collective ops is aborted by: Socket closed\nfrom remote target /job:worker/replica:0/task:1",
        ),
        ExitEvent(t=T0 + t + 1, source="worker-0", exit_code=1),
    ]


def _restart(t: float) -> list:
    return [
        e
        for w in WORKERS
        for e in (
            RestartEvent(t=T0 + t, source=w, reason="worker-1 failed"),
            StartEvent(t=T0 + t + 15, source=w, tf_version="2.21"),
        )
    ]


def _restore_fails(t: float) -> list:
    return [
        e
        for i, w in enumerate(WORKERS)
        for e in (
            ErrorEvent(t=T0 + t + i, source=w, error_class="IndexError", message=READ_LESS),
            ExitEvent(t=T0 + t + i + 0.5, source=w, exit_code=1),
        )
    ]


def _teardown(t: float) -> list:
    return [PhaseEvent(t=T0 + t, source="runner", phase="teardown")]


def corrupt_checkpoint_run(restarts: int = 2) -> list:
    """corrupt-checkpoint-fails-every-restore-until-restarts-run-out as measured (docs/findings.md)."""
    events = [*[StartEvent(t=T0, source=w, tf_version="2.21") for w in WORKERS], *_steps(1, 1, 41), *_kill_round(3)]
    t = 10.0
    for _ in range(restarts):
        events += _restart(t) + _restore_fails(t + 20)
        t += 40
    return events + _teardown(t)


def killed_worker_recovers() -> list:
    return [
        *[StartEvent(t=T0, source=w, tf_version="2.21") for w in WORKERS],
        *_steps(1, 1, 57),
        *_kill_round(3),
        *_restart(10),
        *_steps(30, 41, 100),
        *_teardown(40),
    ]


def cycles_of(events: list):
    return attribute(observe_all(worker_logs_of(events, "run")))


def test_the_corrupt_checkpoint_run_is_a_loop_after_two_restarts():
    cycles = cycles_of(corrupt_checkpoint_run())
    assert [c.root_worker for c in cycles] == ["worker-1", None, None]  # the kill, then every worker's restore
    loop = restart_loop(cycles)
    assert loop is not None and loop.cycles == (1, 2)
    assert loop.said().startswith(f"stop retrying: restart loop: IndexError: {READ_LESS} on every worker")
    assert not retry_outlook("checkpoint", cycles, loop).helps
    assert "the logs show it already" in retry_outlook("checkpoint", cycles, loop).why


def test_one_failed_restart_is_not_yet_a_loop():
    assert LOOP_CYCLES == 2
    assert restart_loop(cycles_of(corrupt_checkpoint_run(restarts=1))) is None
    # but it is a restore that failed before any step: a restart will not help a checkpoint family failure then
    assert not retry_outlook("checkpoint", cycles_of(corrupt_checkpoint_run(restarts=1)), None).helps


def test_a_killed_worker_that_recovers_is_never_a_loop():
    cycles = cycles_of(killed_worker_recovers())
    assert cycles[0].root_worker == "worker-1" and not cycles[1].failed
    assert restart_loop(cycles) is None
    assert retry_outlook("killed", cycles, None).helps


def test_a_killed_worker_killed_again_after_each_restart_but_training_on_is_no_loop():
    # the same cause in every cycle, but each cycle made steps past the last: progress, not a loop
    events = [*[StartEvent(t=T0, source=w, tf_version="2.21") for w in WORKERS], *_steps(1, 1, 20), *_kill_round(3)]
    t, first = 10.0, 21
    for _ in range(2):
        events += _restart(t) + _steps(t + 16, first, first + 19) + _kill_round(t + 18)
        t, first = t + 30, first + 20
    cycles = cycles_of(events + _teardown(t))
    assert all(c.cause == cycles[0].cause for c in cycles)
    assert restart_loop(cycles) is None


def test_different_causes_after_each_restart_are_no_loop():
    events = (
        corrupt_checkpoint_run(restarts=1)
        + _restart(60)
        + [
            ErrorEvent(t=T0 + 80, source="worker-0", error_class="ValueError", message="something else"),
            ExitEvent(t=T0 + 81, source="worker-0", exit_code=1),
        ]
    )
    assert restart_loop(cycles_of(events)) is None


def test_chaos_diagnose_says_stop_retrying_on_the_runs_logs():
    events = corrupt_checkpoint_run()
    cycles = cycles_of(events)
    text = render(observe_all(worker_logs_of(events, "run")), [], 3, [])
    assert "stop retrying: restart loop: IndexError" in text
    assert "after restart 2: no root worker" in text
    assert "first run: root worker: worker-1" in text
    assert len(cycles) == 3


def _report(events: list) -> Report:
    info = RunInfo(num_workers=2, steps_per_epoch=20, epochs=5, save_interval_steps=20)
    return Report(
        "corrupt-checkpoint-fails-every-restore-until-restarts-run-out",
        "scenarios/x.yaml",
        "",
        {},
        [],
        Timeline.from_events(info, events),
    )


def test_the_runners_report_carries_the_loop_as_a_notice():
    report = with_diagnosis(_report(corrupt_checkpoint_run()))
    notices = [n for n in report.notices() if n.topic == TOPIC]
    assert len(notices) == 1 and notices[0].text.startswith("stop retrying: restart loop: IndexError")
    assert with_diagnosis(report).notices() == report.notices()  # said once
    assert [n for n in with_diagnosis(_report(killed_worker_recovers())).notices() if n.topic == TOPIC] == []


def test_the_runners_report_says_root_cascade_and_teardown_of_each_failed_cycle():
    report = with_diagnosis(_report(killed_worker_recovers()))
    roots = [n.text for n in report.notices() if n.topic == ROOT_CAUSE]
    assert len(roots) == 1  # the restarted cycle did not fail
    assert roots[0].startswith("first run: root worker: worker-1; root line: worker-1: exit 137 (SIGKILL)")
    assert "cascade: 2 line(s) of worker-0" in roots[0]
    text = terminal_summary([report])
    assert "  root cause: first run: root worker: worker-1" in text and "warning: root_cause" not in text
    loop = with_diagnosis(_report(corrupt_checkpoint_run()))
    said = [n.text for n in loop.notices() if n.topic == ROOT_CAUSE]
    assert [s.split(":")[0] for s in said] == ["first run", "after restart 1", "after restart 2"]
    assert all("retry outlook: restart will not help" in s for s in said)


def test_a_users_own_scenario_gets_the_outlook_of_the_fault_it_injected():
    """A user's scenario follows no shipped naming convention: the example's fit-job-port-refused-...
    read "restart will not help ... not a failure this framework knows" although its restart recovered.
    The family then comes from what it injected (a kill here: restart helps)."""
    from chaos.events import InjectEvent

    events = killed_worker_recovers() + [InjectEvent(t=T0 + 2.9, source="runner", fault="kill_worker")]
    report = replace(_report(events), scenario="my-job-under-a-kill")
    (said,) = [n.text for n in with_diagnosis(report).notices() if n.topic == ROOT_CAUSE]
    assert "retry outlook: restart helps: the worker was taken away from outside" in said
    unknown = replace(_report(killed_worker_recovers()), scenario="my-job-under-a-kill")
    (said,) = [n.text for n in with_diagnosis(unknown).notices() if n.topic == ROOT_CAUSE]
    assert "not a failure this framework knows" in said  # nothing injected: nothing says what failed


def test_from_events_reads_log_lines_as_the_logs_do():
    events = corrupt_checkpoint_run() + [LogLine(t=T0 + 2, source="worker-0", text="I tensorflow x.cc:1] hello")]
    _, loop = from_events(events, "run")
    assert loop is not None
    assert isinstance(NoticeEvent(t=0, source="runner", topic=TOPIC, text=loop.said()), NoticeEvent)


def test_the_proxys_lines_are_no_workers_log():
    events = corrupt_checkpoint_run() + [LogLine(t=T0 + 2, source="proxy", text="first client from 10.0.0.3")]
    assert [log.name for log in worker_logs_of(events, "run")] == ["worker-0", "worker-1"]
    cycles = cycles_of(events)
    assert (
        cycles[1].no_root and cycles[2].no_root
    )  # every worker's restore: the proxy is not a worker that did not fail


# --- the recorded runs (tests/unit/diagnose/logs/): the loop, and the fix that breaks it ----------

LOGS = Path(__file__).parent / "logs"
UNFIXED = "corrupt-checkpoint-fails-every-restore-until-restarts-run-out"
FIXED = "corrupt-checkpoint-with-a-verified-copy-recovers-bit-exact"


def recorded(run: str):
    return attribute(observe_all(read_logs([LOGS / run])[0]))


def test_the_recorded_corrupt_checkpoint_run_is_a_loop_at_its_second_restart():
    cycles = recorded(UNFIXED)
    assert [(c.cycle, c.failed, c.max_step) for c in cycles] == [(0, True, 46), (1, True, None), (2, True, None)]
    loop = restart_loop(cycles)
    assert loop is not None and loop.cycles == (1, 2) and loop.root_worker is None
    assert loop.said().startswith(f"stop retrying: restart loop: IndexError: {READ_LESS} on every worker")
    assert restart_loop(cycles[:2]) is None  # one failed restart is not yet a loop


def test_the_same_damage_with_a_verified_copy_is_no_loop():
    """The same kill and the same truncated data file; the restarted cycle restores the kept copy and trains."""
    logs = read_logs([LOGS / FIXED])[0]
    assert any("restoring the kept copy" in line for log in logs for line in log.lines)
    cycles = recorded(FIXED)
    assert [(c.cycle, c.failed) for c in cycles] == [(0, True), (1, False)]
    assert cycles[0].root_worker == "worker-1" and cycles[1].max_step == 100
    assert restart_loop(cycles) is None
    assert retry_outlook("checkpoint", cycles, None).helps


def test_a_report_folder_with_the_proxys_log_reads_as_its_workers_alone(tmp_path):
    """A run's report folder holds the framework's proxy.log beside the workers' logs: read as a
    worker that raised nothing, it made every worker's same error one worker's ("root worker:
    worker-0 (likely)") where the report said "no root worker" (a real report folder of 2026-12-02)."""
    import shutil

    folder = tmp_path / UNFIXED
    shutil.copytree(LOGS / UNFIXED, folder)
    (folder / "proxy.log").write_text(
        "2026-12-02 05:12:18,175 chaos.proxy toxiproxy-compatible server 2.12.0-tfchaos listening on "
        "http://0.0.0.0:8474 (uvloop)\n"
        "2026-12-02 05:12:26,310 chaos.proxy proxy worker-0: listening on 0.0.0.0:23600, upstream worker-0:23600\n"
    )
    logs, notes = read_logs([folder])
    assert [log.name for log in logs] == ["worker-0", "worker-1"]
    assert any("proxy.log: the tfchaos proxy's own log" in n for n in notes)
    loop = restart_loop(attribute(observe_all(logs)))
    assert loop is not None and loop.root_worker is None  # every worker's restore, as the report says
    # A user's own log that happens to be called proxy.log is read as any other.
    (folder / "proxy.log").write_text("E0000 something of the user's own proxy\n")
    assert "proxy" in [log.name for log in read_logs([folder])[0]]
