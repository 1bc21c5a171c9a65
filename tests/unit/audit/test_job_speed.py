"""The card's step time and save cost C: pooled over every run that had the machine to itself."""

import pytest

from chaos.audit.card import job_speed
from chaos.audit.measure import MEASURED, Figure, RunMeasures


def run(kind, step, extras, alone=True, key=None):
    save = Figure.of(sorted(extras)[len(extras) // 2], "median") if extras else Figure.missing("no checkpoint")
    return RunMeasures(
        key=key or kind,
        title=kind,
        kind=kind,
        status=MEASURED,
        alone=alone,
        step_time_s=Figure.of(step, "median") if step else Figure.missing("no steps"),
        save_cost_s=save,
        save_extras_s=list(extras),
    )


def test_every_save_of_every_run_alone_is_a_sample_of_c():
    runs = [
        run("reference", 0.010, [0.10, 0.12]),
        run("crash", 0.015, [0.20], key="killed-worker"),
        run("silent", 0.016, [0.22, 0.25], key="partition"),
    ]
    step, save = job_speed(runs)
    # The reference alone would say 0.11 s and 10 ms.
    assert save.value == pytest.approx(0.178) and "mean over 5 saves" in save.note
    assert "the uninterrupted run and 2 fault run(s) before their fault" in save.note
    assert step.value == pytest.approx(0.015) and "median over 3 runs" in step.note


def test_c_is_the_mean_cost_of_a_save_not_the_median_of_two_kinds_of_save():
    # The example's fit job, 2026-11-28: its saves cost ~0.1 s or ~0.5 s, 20 and 21 of 41,
    # and the median sat on the edge of the upper kind. The model needs the expected cost.
    cheap, dear = [0.10] * 20, [0.50] * 21
    _, save = job_speed(
        [
            run("reference", 0.01, cheap[:10] + dear[:11]),
            run("crash", 0.01, cheap[10:] + dear[11:], key="killed-worker"),
        ]
    )
    assert save.value == pytest.approx((20 * 0.10 + 21 * 0.50) / 41)
    assert "standard error" in save.note


def test_a_run_beside_others_is_left_out():
    loaded = run("crash", 0.5, [5.0] * 9, alone=False, key="killed-worker")
    step, save = job_speed([run("reference", 0.010, [0.10, 0.12]), loaded])
    assert save.value == pytest.approx(0.11) and step.value == pytest.approx(0.010)
    assert "fault run" not in save.note and "uninterrupted run" in save.note


def test_with_no_run_alone_the_figures_are_the_median_of_all_runs_and_say_so():
    step, save = job_speed(
        [run("crash", 0.02, [0.3], alone=False, key="a"), run("silent", 0.04, [0.5], alone=False, key="b")]
    )
    assert save.value == pytest.approx(0.4) and "median over a, b" in save.note
    assert step.value == pytest.approx(0.03)


def test_one_save_gives_no_standard_error():
    _, save = job_speed([run("reference", 0.01, [0.2])])
    assert save.value == pytest.approx(0.2) and "mean over 1 saves" in save.note and "error" not in save.note


def test_no_save_anywhere_is_missing_not_zero():
    step, save = job_speed([run("reference", 0.01, [])])
    assert not save.known and "no run measured a save cost" in save.note
