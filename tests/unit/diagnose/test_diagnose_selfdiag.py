"""Issue 24: the shipped scenarios whose own logs did not diagnose as themselves
in CI (the plugin's SelfDiagnosisWarning), on excerpts of their real runs
(tests/unit/diagnose/logs/<scenario>/, trimmed from `chaos run -j 2
--report-dir` of 2026-11-27, TF 2.20; each folder is also checked by
test_each_runs_logs_diagnose_as_its_scenario).

The CI run's own logs were not kept. Two of its mismatches depend on the load
of that machine and did not happen in the run the excerpts come from; they are
reconstructed from the real excerpts by the one change the load makes (the
runner's restart lines later; some steps slower), and give the figures CI
printed (2.13, 2.00, 2.00, 2.00; 3.33, 3.00). Each test here fails on the
rules before this change."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from chaos.checks.verdict import Status
from chaos.diagnose import build, read_logs
from chaos.diagnose.catalogue import KnownFailure
from chaos.diagnose.history import LogHistory
from chaos.diagnose.logs import WorkerLog
from chaos.diagnose.match import judge_entry, rank, tied_first
from chaos.diagnose.observe import observe, observe_all
from chaos.diagnose.selfcheck import verdict
from chaos.diagnose.signatures import (
    BringUpStallSignature,
    ErrorSignature,
    ExitSignature,
    NoErrorSignature,
    SlowdownSignature,
    proof_lines,
)

PASS, FAIL, UNKNOWN = Status.PASS, Status.FAIL, Status.UNKNOWN

ROOT = Path(__file__).resolve().parents[3]
LOGS = Path(__file__).parent / "logs"
LD_PATH = "ld-library-path-skew-trains-silently-caught-by-fingerprint"
STREAM_CUT = "stream-cut-after-64k-aborts-then-recovers"
MTU = "mtu-blackhole-at-bring-up-times-out-the-first-broadcast-then-recovers"
SYN_DROP = "syn-drop-at-bring-up-hangs-until-healed"
REORDER = "packet-reorder-25pct-on-one-worker-trains-on-bit-exact"
CORRUPT = "packet-corrupt-5pct-is-caught-by-the-tcp-checksum-and-trains-on-bit-exact"
STRAGGLER_KILLED = "straggler-then-killed-worker-recovers-from-checkpoint"


@pytest.fixture(scope="module")
def shipped():
    """The plugin's catalogue: the scenario files only."""
    entries, notes = build([ROOT / "scenarios"], None)
    assert not notes
    return entries


def real(run: str) -> list[WorkerLog]:
    return read_logs([LOGS / run])[0]


def scores(ranked, n=4) -> list[tuple[str, float]]:
    return [(m.entry.name, round(m.ranked_at, 2)) for m in ranked[:n]]


# --- shifting the time of real lines ---------------------------------------------

_ISO = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6})")
_ABSL = re.compile(r"^([IWEF]0000 00:00:)(\d+\.\d+)")


def shifted(line: str, dt: float) -> str:
    """The line dt seconds later: its JSON ``t``, ISO or absl-epoch stamp."""
    if line.startswith("{"):
        data = json.loads(line)
        if "t" in data:
            data["t"] += dt
        return json.dumps(data, sort_keys=True, separators=(",", ":"))
    iso = _ISO.match(line)
    if iso:
        when = datetime.strptime(iso[1], "%Y-%m-%d %H:%M:%S.%f") + timedelta(seconds=dt)
        return when.strftime("%Y-%m-%d %H:%M:%S.%f") + line[iso.end() :]
    absl = _ABSL.match(line)
    if absl:
        return f"{absl[1]}{float(absl[2]) + dt:.6f}" + line[absl.end() :]
    return line


def with_lines(log: WorkerLog, lines: list[str]) -> WorkerLog:
    return WorkerLog(log.name, log.origin, tuple(lines), log.line_numbers)


# --- ld-library-path: the runner's redeploy, dated from its first stop ---------------


def restart_later(log: WorkerLog, dt: float) -> WorkerLog:
    """The run as on a loaded machine: the runner stops every worker and recreates
    them before it writes their restart lines; here that took dt seconds longer,
    so the restart line and everything after it come dt later."""
    at = next(i for i, line in enumerate(log.lines) if '"event":"restart"' in line)
    return with_lines(log, list(log.lines[:at]) + [shifted(line, dt) for line in log.lines[at:]])


def test_ld_library_path_redeploy_under_load_is_itself_not_a_kill(shipped):
    logs = real(LD_PATH)
    assert verdict(LD_PATH, logs, shipped)[
        0
    ].passed  # as it ran here: 0.6 s and 1.7 s from the stops to the restart lines
    # Worker-1 recreated 2 s later (a loaded machine): its `Socket closed` (when worker-0 was
    # stopped) and its own stop's exit 137 come 3.7 and 3.3 s before its restart line.
    loaded = [logs[0], restart_later(logs[1], 2.0)]
    judged, ranked = verdict(LD_PATH, loaded, shipped)
    assert judged.passed and judged.reason == f"diagnosed as {LD_PATH}", judged.reason
    assert scores(ranked, 1) == [(LD_PATH, 3.0)]
    # Each log read alone (the rules before this change: 3 s before its own restart line) keeps
    # them: a kill, ranked above the skew; CI printed straggler-then-killed (2.13),
    # connection-reset, port-refused, stale-checkpoint (2.00), which these rules give here too.
    alone = [observe(log) for log in loaded]
    assert [e.exit_code for e in alone[1].exits] == [137, 0]
    assert alone[1].errors and all("Socket closed" in e.message for e in alone[1].errors)
    # Every restart line 4 s later: the same.
    judged, _ = verdict(LD_PATH, [restart_later(log, 4.0) for log in logs], shipped)
    assert judged.passed and judged.reason == f"diagnosed as {LD_PATH}", judged.reason


def test_a_redeploy_round_is_dated_from_its_first_sigkill_in_any_log():
    def ev(**data):
        return json.dumps(data)

    chief = WorkerLog(
        "worker-0",
        "w0",
        (
            ev(event="step", step=1, t=100.0),
            ev(event="exit", exit_code=137, t=110.0),
            ev(event="restart", reason="redeploy: version_skew healed", t=120.0),
            ev(event="start", t=121.0),
        ),
        (1, 2, 3, 4),
    )
    peer = WorkerLog(
        "worker-1",
        "w1",
        (
            ev(event="step", step=1, t=100.0),
            ev(event="error", error_class="UnavailableError", message="Socket closed", t=110.1),
            ev(event="exit", exit_code=137, t=114.0),
            ev(event="restart", reason="redeploy: version_skew healed", t=121.0),
            ev(event="start", t=122.0),
        ),
        (1, 2, 3, 4, 5),
    )
    alone = [observe(chief), observe(peer)]
    assert [len(w.errors) for w in alone] == [0, 1] and [len(w.exits) for w in alone] == [1, 1]
    together = observe_all([chief, peer])
    assert [len(w.errors) for w in together] == [0, 0] and [len(w.exits) for w in together] == [0, 0]
    # A kill long before the redeploy (a failure's, 40 s earlier) dates nothing and stays.
    early = WorkerLog(
        "worker-1",
        "w1",
        (
            ev(event="step", step=1, t=60.0),
            ev(event="exit", exit_code=137, t=70.0),
            ev(event="restart", reason="redeploy: x", t=121.0),
            ev(event="start", t=122.0),
        ),
        (1, 2, 3, 4),
    )
    assert [e.exit_code for e in observe_all([early])[0].exits] == [137]
    # A failure restart is no redeploy: its exits are the failure's.
    failed = WorkerLog(
        "worker-1",
        "w1",
        (
            ev(event="step", step=1, t=100.0),
            ev(event="exit", exit_code=137, t=110.0),
            ev(event="restart", reason="worker-1 failed", t=111.0),
            ev(event="start", t=112.0),
        ),
        (1, 2, 3, 4),
    )
    assert [e.exit_code for e in observe_all([failed])[0].exits] == [137]


# --- stream-cut: a busy machine's slower steps against a kill that did not happen -----


def steps_slower(log: WorkerLog, first: int, last: int, factor: float) -> WorkerLog:
    """The first generation as on a loaded machine: the steps from ``first`` to
    ``last`` each took ``factor`` times as long, the last one (and the error after
    it) where it was; the earlier lines moved back by the time that adds."""
    lines = list(log.lines)
    steps = {}
    for i, line in enumerate(lines):
        if '"event":"restart"' in line:
            break
        if '"event":"step"' in line:
            steps[json.loads(line)["step"]] = i
    t = {n: json.loads(lines[i])["t"] for n, i in steps.items()}
    new_t = dict(t)
    for n in range(last - 1, first - 1, -1):
        new_t[n] = new_t[n + 1] - factor * (t[n + 1] - t[n])
    moved = new_t[first] - t[first]
    for n in range(1, first):
        new_t[n] = t[n] + moved
    for i, line in enumerate(lines[: steps[first]]):
        if i not in steps.values():
            lines[i] = shifted(line, moved)
    for n, i in steps.items():
        data = json.loads(lines[i])
        data["t"] = new_t[n]
        lines[i] = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return with_lines(log, lines)


def test_stream_cut_with_a_busy_machines_slower_steps_is_not_a_straggler_then_killed(shipped):
    logs = real(STREAM_CUT)
    busy = [steps_slower(log, 40, 80, 2.5) for log in logs]
    judged, ranked = verdict(STREAM_CUT, busy, shipped)
    assert (
        judged.passed and "tied with connection-reset-mid-training-aborts-then-recovers, port-refused" in judged.reason
    ), judged.reason
    straggler = next(m for m in ranked if m.entry.name == STRAGGLER_KILLED)
    assert [r.verdict.status for r in straggler.results] == [
        PASS,
        FAIL,
        PASS,
        FAIL,
    ]  # slower, no_error, error, exit 137
    # Both workers exited 1: the kill it expects did not happen, and that counts against it
    # as an unexpected kill counts against an entry (CI: 3.33 against 3.00 before).
    assert straggler.kills_absent and straggler.score == pytest.approx(5 * 5 / 7.5 - 1)
    assert tied_first(ranked)[0].score == pytest.approx(3.0)


def test_a_kill_expected_and_absent_costs_one_only_where_the_exits_are_known():
    killed = KnownFailure(
        "k",
        "k.yaml",
        "d",
        "s",
        "c",
        "f",
        (ErrorSignature(("UnavailableError",), "Socket closed"), ExitSignature(137, None, (1,))),
        (),
    )
    error = WorkerLog("worker-0", "w0", ("UnavailableError: Socket closed",), (1,))
    exited_1 = WorkerLog("worker-1", "w1", ("command terminated with exit code 1",), (1,))
    no_exit = judge_entry(killed, LogHistory([observe(error)]))  # no exit in the logs: cannot tell
    assert not no_exit.kills_absent and no_exit.score == pytest.approx(3.0)
    exit_1 = judge_entry(killed, LogHistory([observe(error), observe(exited_1)]))
    assert exit_1.kills_absent and exit_1.score == pytest.approx(3 * 3 / 5 - 1)
    # the chief's exit alone says nothing of worker-1's: no penalty (the signature still misses)
    chief_exit = WorkerLog(
        "worker-0", "w0", ("UnavailableError: Socket closed", "command terminated with exit code 1"), (1, 2)
    )
    only_chief = judge_entry(killed, LogHistory([observe(chief_exit)]))
    assert not only_chief.kills_absent and only_chief.score == pytest.approx(3 * 3 / 5)


# --- the bring-up faults: a stall that begins before the first step -------------------


def test_mtu_blackhole_at_bring_up_is_itself_first_by_its_bring_up_stall(shipped):
    judged, ranked = verdict(MTU, real(MTU), shipped)
    assert judged.passed and judged.reason == f"diagnosed as {MTU}", judged.reason
    assert scores(ranked, 2) == [(MTU, 6.0), ("port-refused-mid-training-fails-fast-then-recovers", 3.0)]
    stall = ranked[0].results[0]
    assert isinstance(stall.signature, BringUpStallSignature) and stall.verdict.passed
    # from the chief's `Waiting for 0/2 tasks to connect.` to the restarted generation's first step
    assert "Waiting for 0/2 tasks to connect" in proof_lines(stall.verdict)[0].text
    assert "step 1 " in proof_lines(stall.verdict)[1].text


def test_syn_drop_at_bring_up_ties_the_other_silent_bring_up_hangs(shipped):
    judged, ranked = verdict(SYN_DROP, real(SYN_DROP), shipped)
    assert judged.passed and "tied with port-blocked-at-bring-up-hangs-until-unblocked" in judged.reason, judged.reason
    assert {m.entry.name for m in tied_first(ranked)} >= {SYN_DROP, "port-blocked-at-bring-up-hangs-until-unblocked"}
    assert ranked[0].score == pytest.approx(3.0)


def test_bring_up_stall_needs_steps_and_a_late_first_step():
    def ev(**data):
        return json.dumps(data)

    wait = "2026-11-27 00:56:26.268861: I coordination_service.cc:506] Waiting for 0/2 tasks to connect."
    healthy = WorkerLog(
        "worker-0",
        "w",
        (wait, ev(event="step", step=1, t=1795740990.9), ev(event="step", step=2, t=1795740991.0)),
        (1, 2, 3),
    )
    late = WorkerLog("worker-0", "w", (wait, ev(event="step", step=1, t=1795741003.0)), (1, 2))
    no_steps = WorkerLog("worker-0", "w", (wait, "2026-11-27 00:57:26.000000: I something later"), (1, 2))
    sig = BringUpStallSignature(15)
    assert sig.judge(LogHistory([observe(healthy)])).status is FAIL  # 4.6 s: a healthy bring-up
    assert sig.judge(LogHistory([observe(late)])).status is PASS  # 16.7 s
    assert sig.judge(LogHistory([observe(no_steps)])).status is UNKNOWN  # no step lines: cannot tell


def test_a_stall_check_of_a_bring_up_fault_becomes_a_bring_up_stall(shipped):
    by_name = {e.name: e for e in shipped}
    assert by_name[SYN_DROP].signatures == (BringUpStallSignature(15.0),)
    assert isinstance(by_name[MTU].signatures[0], BringUpStallSignature)
    mid = by_name["mtu-blackhole-mid-training-times-out-on-the-heartbeat-then-recovers"]
    assert type(mid.signatures[0]).__name__ == "StallSignature"


# --- the silent packet faults: no error, only slower steps ------------------------------


@pytest.mark.parametrize("run", [REORDER, CORRUPT])
def test_a_no_error_scenario_whose_logs_show_only_slower_steps_holds_and_says_so(run, shipped):
    judged, ranked = verdict(run, real(run), shipped)
    assert judged.passed, judged.reason
    assert judged.reason.startswith(
        "no error in its logs, as expected; they show only slower steps, tied first with the silent "
        "slowdowns cpu-throttled-worker-slows-every-worker, latency-slows-steps-then-training-completes"
    )
    assert f"{run} itself is not ranked: it states no symptom a log shows" in judged.reason


def entry(name, *signatures) -> KnownFailure:
    return KnownFailure(name, f"scenarios/{name}.yaml", "d", "s", "c", "f", tuple(signatures), ())


def test_a_silent_scenario_still_mismatches_when_its_logs_show_more_than_slower_steps():
    quiet = entry("quiet", NoErrorSignature())
    slow = entry("slow", SlowdownSignature(2.0), NoErrorSignature())
    killed = entry("killed", SlowdownSignature(2.0), ExitSignature(137, None, None))
    steps = [
        json.dumps({"event": "step", "step": i, "t": 100 + 0.01 * i + (0.05 * (i - 40) if i > 40 else 0)})
        for i in range(1, 80)
    ]
    slow_log = WorkerLog("worker-0", "w", tuple(steps), tuple(range(1, 80)))
    judged, _ = verdict("quiet", [slow_log], [quiet, slow])
    assert judged.passed and "tied first with the silent slowdowns slow (2.00)" in judged.reason
    killed_log = WorkerLog(
        "worker-0", "w", (*steps, json.dumps({"event": "exit", "exit_code": 137, "t": 200.0})), tuple(range(1, 81))
    )
    judged, _ = verdict("quiet", [killed_log], [quiet, slow, killed])
    assert judged.status is FAIL and "has no symptom a log shows, but its logs diagnose as killed" in judged.reason


# --- after "done": the shutdown is no symptom ------------------------------------------


def test_what_follows_done_is_the_shutdown_not_a_preemption_or_a_heartbeat_timeout(catalogue):
    # packet-corrupt's worker-1 logs, after its done, TF's `... the leader task was
    # preempted/died/restarted unexpectedly ...` (worker-0 had left first)
    workers = observe_all(real(CORRUPT))
    assert all(e.exit_code == 0 for w in workers for e in w.exits)
    assert not any("preempted" in e.text for w in workers for e, _ in w.flagged)
    ranked = rank(catalogue, workers)
    assert not any(m.entry.from_field for m in tied_first(ranked)), scores(ranked)


def test_a_failed_exit_after_done_is_dropped_an_exit_0_kept():
    def ev(**data):
        return json.dumps(data)

    log = WorkerLog(
        "worker-1",
        "w",
        (ev(event="step", step=1, t=9.0), ev(event="done", step=1, t=10.0), ev(event="exit", exit_code=137, t=45.0)),
        (1, 2, 3),
    )
    assert observe(log).exits == []
    log = WorkerLog("worker-1", "w", (*log.lines[:2], ev(event="exit", exit_code=0, t=12.0)), (1, 2, 3))
    assert [e.exit_code for e in observe(log).exits] == [0]


# --- a run that shared its cores: step times are no evidence ----------------------

CONNECTION_RESET = "connection-reset-mid-training-aborts-then-recovers"


def without_exits(log: WorkerLog) -> WorkerLog:
    """The log without the lines that say how its worker exited (what CI's logs showed)."""
    return with_lines(log, [line for line in log.lines if '"event":"exit"' not in line])


def test_a_shared_runs_slower_steps_no_longer_lift_a_straggler_above_its_own_scenario(shipped):
    """CI (2026-11-27): connection-reset-... ranked straggler-then-killed-... 3.33 above
    its own 3.00: a neighbour's load slowed its steps, and its logs did not say how the
    workers exited (so no kill counted as absent). The same on stream-cut-...'s real
    logs (connection-reset's excerpts keep too few steps), and judged as the suite ran
    it, beside other scenarios, its step times are no evidence."""
    busy = [without_exits(steps_slower(log, 40, 80, 2.5)) for log in real(STREAM_CUT)]
    judged, ranked = verdict(STREAM_CUT, busy, shipped)
    assert judged.status is FAIL and scores(ranked, 1) == [(STRAGGLER_KILLED, 4.55)], (
        judged.reason
    )  # slower + error, exit untold
    judged, ranked = verdict(STREAM_CUT, busy, shipped, shared_cores=True)
    assert judged.passed and tied_first(ranked)[0].score == pytest.approx(3.0), judged.reason
    straggler = (
        next(m for m in ranked if m.entry.name == STRAGGLER_KILLED)
        if any(m.entry.name == STRAGGLER_KILLED for m in ranked)
        else None
    )
    assert straggler is None or straggler.results[0].verdict.status is UNKNOWN  # slower steps: not judged


def test_a_shared_quiet_runs_slower_steps_are_no_match_at_all(shipped):
    busy = [steps_slower(log, 40, 80, 3.0) for log in real(REORDER)]
    judged, _ = verdict(REORDER, busy, shipped, shared_cores=True)
    assert judged.passed and judged.reason == "no match, as expected of a scenario with no symptom in its logs", (
        judged.reason
    )


def test_a_run_alone_keeps_its_step_times_as_evidence(shipped):
    """The timing-sensitive scenarios run alone: their slowdowns stay evidence."""
    busy = [steps_slower(log, 40, 80, 3.0) for log in real(REORDER)]
    judged, _ = verdict(REORDER, busy, shipped)
    assert judged.passed and "they show only slower steps, tied first with the silent slowdowns" in judged.reason, (
        judged.reason
    )
