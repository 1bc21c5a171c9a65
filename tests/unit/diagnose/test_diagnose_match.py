"""Ranking the catalogue against logs: excerpts of this framework's own runs
(tests/unit/diagnose/logs/<scenario>/, trimmed from `chaos run --report-dir`)
diagnose as their scenario against the shipped catalogue; other TF versions'
messages find the same failures; nothing matching says so and shows the
suspicious lines instead."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chaos.checks.verdict import Status
from chaos.diagnose import build, diagnose_logs, read_logs, split_dump
from chaos.diagnose.catalogue import KnownFailure
from chaos.diagnose.history import LogHistory
from chaos.diagnose.logs import WorkerLog
from chaos.diagnose.match import judge_entry, rank, tied_first
from chaos.diagnose.observe import observe
from chaos.diagnose.read_events import error_cls
from chaos.diagnose.render import render
from chaos.diagnose.selfcheck import verdict
from chaos.diagnose.signatures import (
    ErrorSignature,
    ExitSignature,
    HangSignature,
    IdenticalBatchesSignature,
    NoErrorSignature,
    PatternSignature,
    SkewSignature,
    SlowdownSignature,
    StallSignature,
    proof_lines,
)

PASS, FAIL, UNKNOWN = Status.PASS, Status.FAIL, Status.UNKNOWN

ROOT = Path(__file__).resolve().parents[3]
LOGS = Path(__file__).parent / "logs"
RUNS = sorted(p.name for p in LOGS.iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def shipped():
    entries, notes = build([ROOT / "scenarios"], ROOT / "docs" / "findings.md")
    assert not notes
    return entries


def entry(name, *signatures) -> KnownFailure:
    return KnownFailure(name, f"scenarios/{name}.yaml", "d", "s", "c", "f", tuple(signatures), ())


def text_log(name: str, *lines: str) -> WorkerLog:
    return WorkerLog(name, f"{name}.log", tuple(lines), tuple(range(1, len(lines) + 1)))


def ev(**data) -> str:
    return json.dumps(data)


@pytest.mark.parametrize("run", RUNS)
def test_each_runs_logs_diagnose_as_its_scenario(run, shipped):
    logs, _ = read_logs([LOGS / run])
    judged, ranked = verdict(run, logs, shipped)
    assert judged.passed, judged.reason
    assert ranked[0].score == max(m.score for m in ranked)


def test_killed_worker_evidence_names_the_lines(shipped):
    workers, ranked = diagnose_logs(read_logs([LOGS / "killed-worker-recovers-from-checkpoint"])[0], shipped)
    top = ranked[0]
    wheres = [e.where for r in top.matched for e in proof_lines(r.verdict)]
    assert any(w.endswith("worker-1.log:13") for w in wheres)  # the exit 137 event
    assert all(r.verdict.passed for r in top.results)


def test_role_matters_a_killed_chief_is_not_a_killed_worker():
    killed_worker = entry(
        "kw", ErrorSignature(("UnavailableError",), "Socket closed", (0,)), ExitSignature(137, None, (1,))
    )
    killed_chief = entry("kc", ErrorSignature(("UnavailableError",), ".*", (1,)), ExitSignature(137, None, (0,)))
    logs = [
        text_log("worker-0", "UnavailableError: Collective ops is aborted by: Socket closed"),
        text_log("worker-1", "command terminated with exit code 137"),
    ]
    ranked = rank([killed_chief, killed_worker], [observe(l) for l in logs])
    assert [m.entry.name for m in ranked] == ["kw"]


def test_unnamed_logs_may_be_any_worker():
    killed_chief = entry("kc", ErrorSignature(("UnavailableError",), ".*", (1,)), ExitSignature(137, None, (0,)))
    logs = [text_log("a", "UnavailableError: Socket closed"), text_log("b", "command terminated with exit code 137")]
    assert [m.entry.name for m in rank([killed_chief], [observe(l) for l in logs])] == ["kc"]


def test_a_kill_nobody_expects_counts_against_an_entry():
    paused = entry("paused", ErrorSignature(("UnavailableError",), "heartbeats", None))
    killed = entry("killed", ErrorSignature(("UnavailableError",), "heartbeats", None), ExitSignature(137))
    logs = [
        text_log("worker-0", ev(event="step", step=1, t=1.0), "UnavailableError: stopped sending heartbeats"),
        text_log("worker-1", ev(event="step", step=1, t=1.0), ev(event="exit", exit_code=137, t=2.0)),
    ]
    ranked = rank([paused, killed], [observe(l) for l in logs])
    assert [m.entry.name for m in ranked] == ["killed", "paused"]
    assert ranked[1].unexplained and ranked[1].score == pytest.approx(3.0 - 1)


def test_equal_scores_are_tied_and_the_output_says_so():
    a = entry("refused", ErrorSignature(("UnavailableError",), "Socket closed|refused", None))
    b = entry("cut", ErrorSignature(("UnavailableError",), "Socket closed|reset", None))
    workers = [observe(text_log("worker-0", "UnavailableError: Socket closed"))]
    ranked = rank([a, b], workers)
    assert {m.entry.name for m in tied_first(ranked)} == {"refused", "cut"}
    assert "equally likely: the logs show the same symptoms as cut" in render(workers, ranked, 3, [])


def test_signatures_the_logs_cannot_judge_do_not_count_against():
    skew = entry(
        "skew", SkewSignature(("tf_version",)), ErrorSignature(("InternalError",), "Collective instance", None)
    )
    workers = [observe(text_log("worker-0", "InternalError: Collective instance 112 expected type 1"))]
    match = judge_entry(skew, LogHistory(workers))
    assert match.coverage == 1.0 and [r.verdict.status for r in match.results] == [UNKNOWN, PASS]


def test_class_less_line_earns_half():
    e = entry("x", ErrorSignature(("UnavailableError",), "failed to connect to all addresses", None))
    workers = [observe(text_log("w", "E0101 00:00:00.000001  1 x.cc:1] failed to connect to all addresses"))]
    match = judge_entry(e, LogHistory(workers))
    assert match.results[0].earned == 3.0 * 0.5 and match.score == pytest.approx(1.5 * 0.5)
    assert rank([e], workers)[0].score == pytest.approx(0.75)  # a candidate still: it earned 1.5


def test_a_class_only_match_is_a_candidate_a_partial_one_below_it_is_not():
    e = entry(
        "x",
        ErrorSignature(("UnavailableError",), "failed to connect", None),
        ErrorSignature(("InternalError",), ".*", None),
    )
    workers = [observe(text_log("w", "InternalError: boom"))]
    assert [m.entry.name for m in rank([e], workers)] == ["x"]
    weak = entry("y", ErrorSignature(("UnavailableError",), "Socket closed", None))
    half = [observe(text_log("w", "E0101 00:00:00.000001  1 x.cc:1] Socket closed, retrying"))]
    assert rank([weak], half)  # 3 x 0.5 = 1.5: enough
    assert not rank([weak], [observe(text_log("w", "I0101 00:00:00.000001  1 x.cc:1] Socket closed, retrying"))])


def test_no_match_says_so_and_shows_suspicious_lines(shipped):
    lines = [
        "Epoch 1/5",
        "ValueError: could not broadcast input array from shape (3,) into shape (4,)",
        "command terminated with exit code 2",
    ]
    workers, ranked = diagnose_logs([text_log("trainer-0", *lines)], shipped)
    assert ranked == []
    text = render(workers, ranked, 3, [])
    assert "no failure in the catalogue matches these logs." in text
    assert "trainer-0.log:2  ValueError: could not broadcast" in text and "trainer-0.log:3" in text
    assert "reproduce:" not in text


def test_clean_logs_give_no_match_and_say_nothing_suspicious(shipped):
    workers, ranked = diagnose_logs(
        [text_log("worker-0", "Epoch 1/1", "20/20 [====] - 1s 5ms/step - loss: 0.5")], shipped
    )
    assert ranked == [] and "no error, failed exit or wait for peers" in render(workers, ranked, 3, [])


def test_tf1_create_session_hang_diagnoses_as_a_bring_up_hang(shipped):
    lines = [
        f"2018-01-02 03:04:{s:02d}.000001: I tensorflow/core/distributed_runtime/master.cc:221] "
        "CreateSession still waiting for response from worker: /job:worker/replica:0/task:1"
        for s in range(0, 60, 10)
    ]
    workers, ranked = diagnose_logs([text_log("worker-0", *lines)], shipped)
    top = tied_first(ranked)
    assert top and all(any(isinstance(r.signature, HangSignature) for r in m.matched) for m in top)
    assert "port-blocked-at-bring-up-hangs-until-unblocked" in {m.entry.name for m in ranked}


def test_tf1_hang_naming_another_task_rules_out_an_entry_expecting_worker_1():
    hang1 = entry("missing-1", HangSignature(15, (1,)))
    line = "I tensorflow/core/distributed_runtime/master.cc:193] CreateSession still waiting for response from worker: /job:ps/replica:0/task:0"
    assert rank([hang1], [observe(text_log("worker-0", line))]) == []


def test_grpc_connect_failure_of_an_older_tf_diagnoses_as_a_peer_gone(shipped):
    dump = "\n".join(
        [
            "[pod/job-worker-0/tf] 2021-03-04 05:06:07.000001: E tensorflow/core/common_runtime/ring_reducer.cc:300] "
            "Aborting RingReduce with Unavailable: failed to connect to all addresses",
            "[pod/job-worker-0/tf] tensorflow.python.framework.errors_impl.UnavailableError: [_Derived_]Collective ops is "
            "aborted by: failed to connect to all addresses",
            "[pod/job-worker-1/tf] Epoch 3/5",
        ]
    )
    workers, ranked = diagnose_logs(split_dump(dump, "job.log", "job"), shipped)
    names = {m.entry.name for m in tied_first(ranked)}
    assert (
        "killed-worker-recovers-from-checkpoint" in names
        or "port-refused-mid-training-fails-fast-then-recovers" in names
    )


def test_socket_closed_with_an_oom_kill_in_kubectl_describe_text_is_host_oom(shipped):
    logs = [
        text_log(
            "job-worker-0",
            "tensorflow.python.framework.errors_impl.UnavailableError: Collective ops is aborted by: Socket closed",
        ),
        text_log(
            "job-worker-1", "    Last State:     Terminated", "      Reason:       OOMKilled", "      Exit Code:    137"
        ),
    ]
    _, ranked = diagnose_logs(logs, shipped)
    assert ranked[0].entry.name == "host-oom-kills-worker-then-recovers"


def test_stall_is_quiet_before_the_first_error_or_a_long_gap_between_steps():
    stall = StallSignature(8)

    def err(t):
        return ev(event="error", error_class="UnavailableError", message="x", t=t)

    def st(n, t):
        return ev(event="step", step=n, t=t)

    frozen = [observe(text_log("w", st(1, 1.0), st(2, 1.01), err(8.0)))]  # 7 s of quiet, then the timeout
    at_once = [observe(text_log("w", st(1, 1.0), st(2, 1.01), err(2.0)))]
    # a reset: the chief aborts at once, the peer waits 5 s for its own error: no stall
    reset = [
        observe(text_log("worker-0", st(1, 1.0), st(2, 1.01), err(1.1))),
        observe(text_log("worker-1", st(1, 1.0), st(2, 1.01), err(6.0))),
    ]
    gap = [observe(text_log("w", st(1, 1.0), st(2, 10.0)))]  # a blackhole that healed: no error at all
    restarted = [
        observe(
            text_log(
                "w",
                st(1, 1.0),
                ev(event="exit", exit_code=1, t=2.0),
                ev(event="restart", reason="x", t=3.0),
                st(2, 20.0),
            )
        )
    ]
    assert stall.judge(LogHistory(frozen)).status is PASS and stall.judge(LogHistory(gap)).status is PASS
    assert stall.judge(LogHistory(at_once)).status is FAIL and stall.judge(LogHistory(reset)).status is FAIL
    assert stall.judge(LogHistory(restarted)).status is FAIL
    assert stall.judge(LogHistory([observe(text_log("w", "Epoch 1/5"))])).status is UNKNOWN


def steps(intervals_ms, name="worker-0"):
    t, lines = 0.0, []
    for i, ms in enumerate(intervals_ms, 1):
        t += ms / 1000
        lines.append(ev(event="step", step=i, t=t, source=name))
    return observe(text_log(name, *lines))


def test_slowdown_needs_most_steps_of_a_window_slower():
    slowdown = SlowdownSignature(2.0)
    throttled = [5.0] * 20 + [25.0] * 20 + [5.0] * 10
    noisy = [8.0] * 20 + [8.0, 40.0] * 10 + [8.0] * 10  # every other step slow: a busy machine
    assert slowdown.judge(LogHistory([steps(throttled)])).status is PASS
    assert slowdown.judge(LogHistory([steps(noisy)])).status is FAIL
    assert slowdown.judge(LogHistory([steps([5.0] * 10)])).status is UNKNOWN  # too few steps to judge
    small = [5.0] * 20 + [12.0] * 20  # 2.4x, but 7 ms: within what a busy core does
    assert slowdown.judge(LogHistory([steps(small)])).status is FAIL


def test_identical_batches_and_skew_from_the_event_lines():
    def worker(i, digest, tf):
        start = ev(event="start", tf_version=tf, fingerprint={"pkg:tensorflow-cpu": tf}, t=0.0, source=f"worker-{i}")
        return observe(
            text_log(
                f"worker-{i}",
                start,
                *[ev(event="step", step=s, batch_digest=digest(s), t=s, source=f"worker-{i}") for s in range(1, 8)],
            )
        )

    same = [worker(0, lambda s: f"d{s}", "2.20.0"), worker(1, lambda s: f"d{s}", "2.18.1")]
    differ = [worker(0, lambda s: f"a{s}", "2.20.0"), worker(1, lambda s: f"b{s}", "2.20.0")]
    assert IdenticalBatchesSignature(5).judge(LogHistory(same)).status is PASS
    assert IdenticalBatchesSignature(5).judge(LogHistory(differ)).status is FAIL
    assert SkewSignature(("tf_version", "pkg:tensorflow-cpu")).judge(LogHistory(same)).status is PASS
    assert SkewSignature(("tf_version",)).judge(LogHistory(differ)).status is FAIL
    assert NoErrorSignature().judge(LogHistory(same)).status is PASS


def test_pattern_signature_and_a_non_positive_entry_is_never_a_candidate():
    quiet = entry("quiet", NoErrorSignature())
    pattern = entry("sigterm", PatternSignature("SIGTERM caught"))
    workers = [observe(text_log("w", "preemption_notifier.cc:89] SIGTERM caught at 2026-01-01"))]
    assert [m.entry.name for m in rank([quiet, pattern], workers)] == ["sigterm"]


def test_identical_batches_compares_the_replicas_of_one_worker():
    # A MirroredStrategy worker reports each replica's batch digest in its step events.
    def worker(replica_digests):
        lines = [
            ev(
                event="step",
                step=s,
                batch_digest=replica_digests(s)[0],
                replica_batch_digests=replica_digests(s),
                t=s,
                source="worker-0",
            )
            for s in range(1, 8)
        ]
        return [observe(text_log("worker-0", *lines))]

    assert IdenticalBatchesSignature(5).judge(LogHistory(worker(lambda s: [f"d{s}", f"d{s}"]))).status is PASS
    assert IdenticalBatchesSignature(5).judge(LogHistory(worker(lambda s: [f"d{s}", f"e{s}"]))).status is FAIL
    assert (
        IdenticalBatchesSignature(5).judge(LogHistory(worker(lambda s: [f"d{s}"]))).status is UNKNOWN
    )  # one lane: cannot tell


def test_a_class_naming_its_cause_is_specific_a_tf_status_class_is_not():
    assert ErrorSignature(("JSONDecodeError",)).weight == 3.0
    assert ErrorSignature(("UnavailableError", "DeadlineExceededError")).weight == 1.5
    assert ErrorSignature(("UnavailableError",), "Socket closed").weight == 3.0


def test_a_matched_no_error_earns_nothing_a_missed_one_costs():
    slow = entry("slow", SlowdownSignature(2.0))
    slow_quiet = entry("slow-quiet", SlowdownSignature(2.0), NoErrorSignature())
    quiet = [steps([5.0] * 20 + [25.0] * 20)]
    assert {m.entry.name for m in tied_first(rank([slow, slow_quiet], quiet))} == {"slow", "slow-quiet"}
    noisy = quiet + [observe(text_log("worker-1", "UnavailableError: boom"))]
    assert [m.entry.name for m in rank([slow_quiet, slow], noisy)] == ["slow", "slow-quiet"]


def test_what_the_runners_redeploy_caused_is_not_a_symptom():
    """The runner's stop-without-grace (a `restart` event saying `redeploy`) kills
    running workers: their exits and the errors of its last seconds are dropped;
    a crash long before it stays."""
    lines = [
        ev(event="step", step=1, t=100.0),
        ev(event="error", error_class="json.decoder.JSONDecodeError", message="Expecting ','", t=101.0),
        ev(event="exit", exit_code=1, t=101.5),
        "1970-01-01 00:01:42.000000: E ring_alg.cc:1] Aborting RingReduce with UNAVAILABLE: Socket closed",
        ':UNKNOWN:Error received from peer  {grpc_message:"Socket closed", grpc_status:14}',
        ev(event="exit", exit_code=137, t=130.0),
        ev(event="restart", reason="redeploy: tf_config healed", t=130.5),
    ]
    obs = observe(
        text_log("worker-1", *lines)
    )  # the stamped line came 28 s before the stop; the unstamped one takes its time
    assert [error_cls(e) for e in obs.errors] == ["JSONDecodeError", "UnavailableError", "UnavailableError"]
    assert [e.exit_code for e in obs.exits] == [1]
    late = [line.replace("00:01:42", "00:02:09") for line in lines]  # 1 s before the stop: its doing
    obs = observe(text_log("worker-1", *late))
    assert [error_cls(e) for e in obs.errors] == ["JSONDecodeError"] and [e.exit_code for e in obs.exits] == [1]
    plain = observe(text_log("worker-1", *lines[:-1], ev(event="restart", reason="worker-1 failed", t=130.5)))
    assert [e.exit_code for e in plain.exits] == [1, 137]
    # On a busy machine the old process's last words reach the log after the restart line:
    # until the redeployed worker starts, they are still the stop's doing.
    after = [
        *lines[:-1][:3],
        ev(event="restart", reason="redeploy: tf_config healed", t=130.5),
        ev(
            event="error",
            error_class="tensorflow.python.framework.errors_impl.UnavailableError",
            message="Socket closed",
            t=131.0,
        ),
        ev(event="exit", exit_code=137, t=131.2),
        ev(event="start", tf_version="2.20", t=150.0),
        ev(
            event="error",
            error_class="tensorflow.python.framework.errors_impl.UnavailableError",
            message="Connection reset",
            t=160.0,
        ),
    ]
    obs = observe(text_log("worker-1", *after))
    assert [(error_cls(e), e.message) for e in obs.errors] == [
        ("JSONDecodeError", "Expecting ','"),
        ("UnavailableError", "Connection reset"),
    ]
    assert [e.exit_code for e in obs.exits] == [1]


# --- a family ranks by its strongest evidence; no confident answer across families ----------


def _fam(name, family, *signatures, origin="scenario") -> KnownFailure:
    return KnownFailure(
        name,
        f"scenarios/{name}.yaml",
        "d",
        "s",
        "c",
        "f",
        tuple(signatures),
        (),
        family=family,
        origin=origin,
        sources=("https://example.invalid/t/1",) if origin == "field" else (),
    )


def test_a_weak_scenario_does_not_sink_its_family_below_another():
    """The scenario of family A matches weakly, the field entry of A strongly,
    a scenario of family B in between: family A comes first, its scenario
    listed first and ranked at the field entry's score."""
    a_scenario = _fam("a-weak", "killed", ErrorSignature(("UnavailableError",), ".*", None))
    a_field = _fam(
        "a-field",
        "killed",
        PatternSignature("preempted by the scheduler"),
        PatternSignature("rank 7 was"),
        origin="field",
    )
    b_scenario = _fam("b-mid", "checkpoint", PatternSignature("rank 7"))
    workers = [
        observe(text_log("worker-0", "UnavailableError: Socket closed", "rank 7 was preempted by the scheduler"))
    ]
    ranked = rank([b_scenario, a_scenario, a_field], workers)
    assert [m.entry.name for m in ranked] == ["a-weak", "a-field", "b-mid"]
    assert ranked[0].score == pytest.approx(1.5) and ranked[0].lifted_to == pytest.approx(4.0)
    assert ranked[1].capped_from == pytest.approx(4.0) and ranked[1].ranked_at < ranked[0].ranked_at
    assert ranked[2].ranked_at == pytest.approx(2.0)
    text = render(workers, ranked, 3, [])
    assert "ranked at 4.00, the score of the evidence from the field for its family" in text


def test_tied_first_across_families_is_no_confident_match(tmp_path):
    from chaos.diagnose.match import confident

    hang = _fam("waits", "hang", PatternSignature("Waiting for model to be ready"))
    blocked = _fam("blocked", "port_blocked", PatternSignature("Waiting for model"))
    workers = [observe(text_log("worker-1", "INFO:tensorflow:Waiting for model to be ready."))]
    ranked = rank([hang, blocked], workers)
    assert len(tied_first(ranked)) == 2 and not confident(ranked)
    text = render(workers, ranked, 3, [])
    assert "no confident match: these logs fit 2 families of failure equally well (hang, port_blocked)" in text
    assert "lines worth a look:" in text and "the candidates, equally likely" in text
    # tied within one family is still an answer: the family is the same
    same = _fam("blocked-too", "hang", PatternSignature("Waiting for model"))
    assert confident(rank([hang, same], workers))
    assert not confident([])
