"""Each criterion shown met, not met, and not measurable, from synthetic runs."""

import pytest

from chaos.audit.findings import FINDING, NOT_MEASURED, OK, Context, evaluate
from chaos.audit.measure import MEASURED, Figure, RunMeasures
from chaos.checks.verdict import failed, passed, unknown

PASS, FAIL, UNKNOWN = passed("ok"), failed("it failed"), unknown("no weights digest")


def run(kind="crash", key=None, **fields):
    base = dict(
        key=key or kind,
        title=f"the {kind} run",
        kind=kind,
        status=MEASURED,
        workers=2,
        symptom_window_s=40.0,
        save_interval_steps=20,
    )
    return RunMeasures(**{**base, **fields})


def refused(kind, why="refused for this workload: needs the harness"):
    return RunMeasures(key=kind, title=f"the {kind} run", kind=kind, status="not measured", why=why)


def by_id(runs, context=Context()):  # noqa: B008 - a frozen value
    return {f.id: f for f in evaluate(runs, context)}


def fig(v):
    return Figure.of(v, "measured")


CASES = [
    # (finding id, runs, context, expected status, text expected in measured)
    ("hang", [run(hang=False, detection={"worker-0": fig(0.4)})], Context(), OK, "1 of 1"),
    ("hang", [run(hang=True)], Context(), FINDING, "no error or exit"),
    ("hang", [refused("crash")], Context(), NOT_MEASURED, "needs the harness"),
    ("slow-detection", [run(detect_s=fig(1.0), restart_s=fig(3.0))], Context(expected_lost_s=1.0), OK, "D 1.00 s"),
    (
        "slow-detection",
        [run(kind="silent", detect_s=fig(10.0), restart_s=fig(3.0))],
        Context(expected_lost_s=1.0),
        FINDING,
        "D 10.00 s",
    ),
    ("slow-detection", [run(kind="reference")], Context(), NOT_MEASURED, "no run could judge"),
    ("slow-exit", [run(restart_s=fig(11.0), exit_lag={"worker-0": fig(2.0)})], Context(), OK, "exit 2.00 s"),
    ("slow-exit", [run(restart_s=fig(11.0), exit_lag={"worker-0": fig(25.0)})], Context(), FINDING, "exit 25.00 s"),
    ("no-recovery", [run(verdicts={"completed": PASS})], Context(), OK, "ok"),
    ("no-recovery", [run(verdicts={"completed": FAIL})], Context(), FINDING, "it failed"),
    ("no-recovery", [run(verdicts={"completed": UNKNOWN})], Context(), NOT_MEASURED, "no weights digest"),
    ("lost-more-than-interval", [run(verdicts={"lost_work": PASS})], Context(), OK, "ok"),
    ("lost-more-than-interval", [run(verdicts={"lost_work": FAIL})], Context(), FINDING, "it failed"),
    ("restored-apart", [run(verdicts={"restored_same_checkpoint": PASS})], Context(), OK, "ok"),
    ("restored-apart", [run(verdicts={"restored_same_checkpoint": FAIL})], Context(), FINDING, "it failed"),
    ("not-bit-exact", [run(verdicts={"matches_uninterrupted": PASS})], Context(), OK, "bit-exact after 1 of 1"),
    (
        "not-bit-exact",
        [run(verdicts={"matches_uninterrupted": FAIL}, drift=fig(0.004))],
        Context(),
        FINDING,
        "drift 0.004",
    ),
    ("not-bit-exact", [run(verdicts={"matches_uninterrupted": UNKNOWN})], Context(), NOT_MEASURED, "no weights digest"),
    (
        "empty-checkpoint",
        [run("empty_checkpoint", resumed_step=1, verdicts={"completed": PASS})],
        Context(),
        OK,
        "first step after the restart: 1",
    ),
    ("empty-checkpoint", [run("empty_checkpoint", verdicts={"completed": FAIL})], Context(), FINDING, "none"),
    ("empty-checkpoint", [refused("empty_checkpoint")], Context(), NOT_MEASURED, "needs the harness"),
    (
        "bring-up-blocked",
        [run("bring_up", start_after_heal_s=fig(2.5), verdicts={"completed": PASS})],
        Context(),
        OK,
        "2.50 s after the port opened",
    ),
    ("bring-up-blocked", [run("bring_up", verdicts={"completed": FAIL})], Context(), FINDING, "it failed"),
    (
        "interval-off-optimum",
        [],
        Context(interval_s=2.0, interval_steps=20, best_interval_s=2.4, best_interval_steps=24, waste_ratio=1.01),
        OK,
        "optimum 2.40 s",
    ),
    (
        "interval-off-optimum",
        [],
        Context(interval_s=2.0, interval_steps=20, best_interval_s=12.0, best_interval_steps=120, waste_ratio=1.9),
        FINDING,
        "1.90x",
    ),
    (
        "interval-off-optimum",
        [],
        Context(model_missing="not computed: C: no checkpoint"),
        NOT_MEASURED,
        "no checkpoint",
    ),
    ("preemption-swallowed", [run("preemption", target_exit_code=42, steps_lost=fig(0))], Context(), OK, "exited 42"),
    (
        "preemption-swallowed",
        [run("preemption", target_exit_code=137, steps_lost=fig(13))],
        Context(),
        FINDING,
        "13 steps lost",
    ),
    ("preemption-swallowed", [refused("preemption")], Context(), NOT_MEASURED, "needs the harness"),
    (
        "backup-not-shared",
        [run(backup_dirs={"worker-0": "/ckpt/b", "worker-1": "/ckpt/b"})],
        Context(checkpoint_dir="/ckpt"),
        OK,
        "every worker backs up to /ckpt/b",
    ),
    (
        "backup-not-shared",
        [run(backup_dirs={"worker-0": "/tmp/b", "worker-1": "/tmp/b"})],
        Context(checkpoint_dir="/ckpt"),
        FINDING,
        "outside the shared checkpoint_dir /ckpt: /tmp/b",
    ),
    ("backup-not-shared", [run()], Context(), NOT_MEASURED, "named no backup dir"),
    ("chief-writes", [run()], Context(), NOT_MEASURED, "not measured"),
]


@pytest.mark.parametrize(
    "finding, runs, context, status, text", CASES, ids=[f"{c[0]}-{c[3].replace(' ', '_')}" for c in CASES]
)
def test_criterion(finding, runs, context, status, text):
    got = by_id(runs, context)[finding]
    assert got.status == status, got
    assert text in got.measured, got.measured
    if status == FINDING:
        assert got.fix and got.why
    else:
        assert got.fix == ""


def test_every_finding_is_shown_firing_and_not_firing():
    ids = {c[0] for c in CASES}
    assert ids == set(by_id([]))
    for finding in ids - {"chief-writes"}:
        assert {c[3] for c in CASES if c[0] == finding} >= {OK, FINDING}, finding


def test_fixes_name_the_tf_setting_for_detection():
    hang = by_id([run(hang=True)])["hang"]
    assert "CommunicationOptions(timeout_seconds" in hang.setting and "heartbeat_timeout_in_ms" in hang.setting


def test_a_preempted_worker_that_finished_in_its_grace_is_not_judged():
    got = by_id([run("preemption", target_exit_code=0, target_done=True)])["preemption-swallowed"]
    assert got.status == NOT_MEASURED and "finished training within the grace period" in got.measured


@pytest.mark.parametrize("lag, status", [(2.0, OK), (25.0, FINDING)])
def test_slow_exit_compares_a_failed_process_s_lingering_with_the_restart(lag, status):
    r = run(restart_s=fig(11.0), exit_lag={"worker-0": fig(lag), "worker-1": Figure.missing("no exit")})
    got = by_id([r])["slow-exit"]
    assert got.status == status and f"worker-0 error -> exit {lag:.2f} s vs R 11.00 s" in got.measured
    assert by_id([run()])["slow-exit"].status == NOT_MEASURED


def test_the_card_s_median_restart_is_the_yardstick_when_known():
    r = run(kind="silent", detect_s=fig(6.0), restart_s=fig(2.0), exit_lag={"worker-1": fig(3.0)})
    alone = by_id([r], Context(expected_lost_s=0.5))
    assert alone["slow-detection"].status == FINDING and alone["slow-exit"].status == FINDING
    median = by_id([r], Context(expected_lost_s=0.5, restart_s=8.0))
    assert median["slow-detection"].status == OK and median["slow-exit"].status == OK
    assert "vs R 8.00 s" in median["slow-exit"].measured


@pytest.mark.parametrize("detect, status", [(4.4, NOT_MEASURED), (3.6, NOT_MEASURED), (6.0, FINDING), (2.0, OK)])
def test_a_timing_within_the_batterys_spread_of_its_limit_is_not_judged_either_way(detect, status):
    """Measured: slow-exit flipped between two runs of one job and moved its grade;
    a comparison closer than 20 % (the runs' agreement goal) is too close to call."""
    got = by_id([run(detect_s=fig(detect), restart_s=fig(3.0))], Context(expected_lost_s=1.0))["slow-detection"]
    assert got.status == status
    assert ("too close to call (within 20 %" in got.measured) == (status == NOT_MEASURED)


def test_one_clearly_slower_run_is_a_finding_even_beside_a_close_one():
    runs = [run(key="a", detect_s=fig(10.0), restart_s=fig(3.0)), run(key="b", detect_s=fig(4.2), restart_s=fig(3.0))]
    got = by_id(runs, Context(expected_lost_s=1.0))["slow-detection"]
    assert got.status == FINDING and got.measured.startswith("slower: the crash run: D 10.00 s")
    assert "too close to call" in got.measured


# --- --repeat: every run of an entry is judged, not only the first ---------------------------


def test_one_repeat_that_does_not_complete_is_the_finding():
    runs = [
        run("empty_checkpoint", key="empty-checkpoint-dir", resumed_step=1, verdicts={"completed": PASS}),
        run("empty_checkpoint", key="empty-checkpoint-dir#2", verdicts={"completed": FAIL}),
    ]
    got = by_id(runs)["empty-checkpoint"]
    assert got.status == FINDING and "empty-checkpoint-dir#2" in got.measured
    assert got.runs == ("empty-checkpoint-dir", "empty-checkpoint-dir#2")
    both = by_id(
        [runs[0], run("empty_checkpoint", key="empty-checkpoint-dir#2", resumed_step=1, verdicts={"completed": PASS})]
    )["empty-checkpoint"]
    assert both.status == OK


def test_a_preemption_swallowed_in_one_repeat_of_three_is_the_finding():
    runs = [
        run("preemption", key="preemption", target_exit_code=42, steps_lost=fig(0)),
        run("preemption", key="preemption#2", target_exit_code=137, steps_lost=fig(13)),
        run("preemption", key="preemption#3", target_exit_code=0, target_done=True),
    ]
    got = by_id(runs)["preemption-swallowed"]
    assert got.status == FINDING and "1 of 2 runs" in got.measured and "13 steps lost" in got.measured
    assert got.runs == ("preemption", "preemption#2")  # the run that finished in its grace judges nothing
    handled = by_id([runs[0], run("preemption", key="preemption#2", target_exit_code=42, steps_lost=fig(1))])
    assert handled["preemption-swallowed"].status == OK
