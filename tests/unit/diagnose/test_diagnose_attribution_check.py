"""The suite's self-diagnosis of root, cascade, teardown, outlook and loops
(chaos/diagnose/attribution_check.py): it holds on the runs it was verified
on, and each rule fails when it should."""

from __future__ import annotations

import sys
from pathlib import Path

from chaos.checks.verdict import Status, passed
from chaos.diagnose.attribution_check import VERIFIED, faulted, judge
from chaos.diagnose.logs import read_logs
from chaos.diagnose.loops import worker_logs_of
from chaos.events import InjectEvent, RestartEvent
from chaos.report.model import Report
from chaos.scenario.loader import load_scenario
from chaos.timeline import RunInfo, Timeline

sys.path.insert(0, str(Path(__file__).parent))
from test_diagnose_loops import T0, corrupt_checkpoint_run, killed_worker_recovers  # noqa: E402

FAIL, UNKNOWN = Status.FAIL, Status.UNKNOWN

LOGS = Path(__file__).parent / "logs"
ROOT = Path(__file__).resolve().parents[3]
INFO = RunInfo(num_workers=2, steps_per_epoch=20, epochs=5, save_interval_steps=20)


def report(name: str, target: str, *, events=(), checks=("completed",), restarted=True) -> Report:
    extra = [InjectEvent(t=T0 + 0.5, source="runner", fault="kill_worker", target=target)]
    if restarted:
        extra.append(RestartEvent(t=T0 + 9, source="worker-0", reason="worker-1 failed"))
    if name.startswith("tf-config-"):  # a fault applied at create heals by a redeploy: the change
        extra.append(RestartEvent(t=T0 + 30, source="worker-0", reason="redeploy: tf_config healed"))
    verdicts = [
        passed("ok").about(
            c, "recover" if c == "completed" else "expect", {"restarts": 2} if c == "restarts_exhausted" else {}
        )
        for c in checks
    ]
    return Report(name, f"scenarios/{name}.yaml", "", {}, verdicts, Timeline.from_events(INFO, [*events, *extra]))


def target_of(name: str) -> str:
    """The inject target of the scenario's first fault, as the runner records it."""
    return load_scenario(ROOT / "scenarios" / f"{name}.yaml").faults[0].fault.target


RUNS = Path(__file__).parent / "runs"  # whole runs the ranking tests do not read (chaos/diagnose/attribution_check.py)


def test_every_verified_scenario_holds_on_its_logs():
    from chaos.events import HealEvent

    for name in VERIFIED:
        scenario = load_scenario(ROOT / "scenarios" / f"{name}.yaml")
        r = report(name, target_of(name), checks=tuple(c.name for c in scenario.checks))  # each passed
        params = {c.name: c.params() for c in scenario.checks}
        r = Report(
            r.scenario,
            r.file,
            "",
            {},
            [v.about(v.check, v.role, params.get(v.check, {})) for v in r.verdicts],
            r.timeline,
        )
        # the runner heals a fault applied at create before it restarts (the restarted workers are made without it)
        heals = [
            HealEvent(t=T0 + 8, source="runner", fault=step.fault.name, target=step.fault.target)
            for step in scenario.faults
            if step.fault.applies_at_create
        ]
        r = Report(r.scenario, r.file, "", {}, r.verdicts, Timeline.from_events(INFO, [*r.timeline.events, *heals]))
        folder = LOGS / name if (LOGS / name).is_dir() else RUNS / name
        judged = judge(r, read_logs([folder])[0])
        assert judged.passed, f"{name}: {judged.reason}"


def test_a_sure_root_on_another_worker_than_the_faulted_one_is_a_miss():
    name = "killed-worker-recovers-from-checkpoint"
    judged = judge(report(name, "worker-0"), read_logs([LOGS / name])[0])
    assert judged.status is FAIL and "named worker-1 the root, but the fault acts on worker-0" in judged.reason


def test_a_sure_root_where_the_fault_acts_on_every_worker_is_a_miss():
    name = "killed-worker-recovers-from-checkpoint"
    judged = judge(report(name, "cluster"), read_logs([LOGS / name])[0])
    assert judged.status is FAIL and "acts on every worker" in judged.reason


def test_an_unverified_scenario_is_recorded_not_judged():
    name = "killed-worker-recovers-from-checkpoint"
    judged = judge(report("killed-in-some-new-way", "worker-1"), read_logs([LOGS / name])[0])
    assert judged.status is UNKNOWN and "not judged" in judged.reason and "root worker-1" in judged.reason
    # even where the root it names is not the faulted one: not read, not judged
    judged = judge(report("killed-in-some-new-way", "worker-0"), read_logs([LOGS / name])[0])
    assert judged.status is UNKNOWN and "root worker-1" in judged.reason


def test_a_likely_root_is_never_a_miss():
    name = "paused-worker-times-out-then-recovers"
    judged = judge(report(name, "worker-0"), read_logs([LOGS / name])[0])
    assert judged.passed and "(likely)" in judged.reason


def test_the_corrupt_checkpoint_loop_must_be_flagged_and_a_recovery_never(monkeypatch):
    events = corrupt_checkpoint_run()
    name = "corrupt-checkpoint-fails-every-restore-until-restarts-run-out"
    r = report(name, "worker-1", events=events, checks=("restore_failed", "restarts_exhausted"))
    judged = judge(r, worker_logs_of(events, name))
    assert judged.status is not FAIL and "stop retrying: restart loop" in judged.reason
    one = corrupt_checkpoint_run(restarts=1)
    monkeypatch.setitem(VERIFIED, name, "this test")  # a loop missed counts where the logs were read
    judged = judge(
        report(name, "worker-1", events=one, checks=("restore_failed", "restarts_exhausted")), worker_logs_of(one, name)
    )
    assert judged.status is FAIL and "no restart loop was flagged" in judged.reason
    events = killed_worker_recovers()
    name = "killed-worker-recovers-from-checkpoint"
    judged = judge(report(name, "worker-1", events=events), worker_logs_of(events, name))
    assert judged.passed and "no restart loop" in judged.reason and "restart helps" in judged.reason


def test_the_faulted_workers_come_from_the_inject_events():
    logs = read_logs([LOGS / "killed-worker-recovers-from-checkpoint"])[0]
    assert faulted(report("x", "worker-1"), logs) == {"worker-1"}
    assert faulted(report("x", "worker-0,worker-1"), logs) is None
    assert faulted(report("x", "cluster"), logs) is None
    assert faulted(report("x", "checkpoint"), logs) is None  # the shared backup volume: every worker's


def test_one_restart_that_ran_out_is_not_expected_to_be_a_loop():
    # unshared-backup-dir-...: max_restarts 1, restore_failed + restarts_exhausted {restarts: 1}
    one = corrupt_checkpoint_run(restarts=1)
    name = "unshared-backup-dir-fails-the-restore-with-a-collective-mismatch"
    r = report(name, "worker-1", events=one, checks=("restore_failed", "restarts_exhausted"))
    r = Report(
        r.scenario,
        r.file,
        "",
        {},
        [v if v.check != "restarts_exhausted" else v.about(v.check, v.role, {"restarts": 1}) for v in r.verdicts],
        r.timeline,
    )
    judged = judge(r, worker_logs_of(one, name))
    assert judged.status is not FAIL, judged.reason


def test_a_failure_restart_that_healed_a_fault_applied_at_create_is_the_change():
    # version-skew-tf215 (run of 2026-12-02): no redeploy; the runner heals the skew before its failure restart
    from chaos.events import HealEvent

    name = "version-skew-tf215-aborts-first-collective-then-recovers"
    logs = read_logs([LOGS / "killed-worker-recovers-from-checkpoint"])[0]  # any failed first run
    r = report(name, "worker-1")
    judged = judge(r, logs)
    assert judged.status is FAIL and "recovered after a restart, but the outlook says" in judged.reason
    healed = Report(
        r.scenario,
        r.file,
        "",
        {},
        r.verdicts,
        Timeline.from_events(
            INFO, [*r.timeline.events, HealEvent(t=T0 + 8, source="runner", fault="version_skew", target="worker-1")]
        ),
    )
    judged = judge(healed, logs)
    assert "recovered after a restart" not in judged.reason
