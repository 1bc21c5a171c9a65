"""job_step_counts: the job's own step counter against the steps it trained."""

from __future__ import annotations

from timeline_builder import TimelineBuilder

from chaos.checks import JobStepCounts
from chaos.checks.verdict import Status
from chaos.events import CheckpointEvent, DoneEvent


def with_counter(per_step: int, workers=2):
    b = TimelineBuilder(workers=workers).start().steps(1, 20)
    for w in range(workers):
        b._add(CheckpointEvent(t=b.t, source=f"worker-{w}", step=20, path="ckpt-1", job_step=per_step * 20))
    b.steps(21, 40)
    for w in range(workers):
        b._add(DoneEvent(t=b.t + 1, source=f"worker-{w}", step=40, job_step=per_step * 40))
    return b


def timeline(b):
    from chaos.timeline import Timeline

    return Timeline(b.info, b.events)


def test_a_counter_that_counts_each_step_once_passes():
    verdict = JobStepCounts().judge(timeline(with_counter(1)))
    assert verdict.status is Status.PASS and "1x the trained steps at all 4 reports" in verdict.reason


def test_a_counter_summed_over_the_workers_fails_with_its_ratio():
    verdict = JobStepCounts().judge(timeline(with_counter(2)))
    assert verdict.status is Status.FAIL
    assert "read 40 at checkpoint after 20 trained steps (2x; expected 1x)" in verdict.reason, verdict.reason


def test_a_scenario_showing_the_miscount_names_it():
    assert JobStepCounts(per_step=2).judge(timeline(with_counter(2))).status is Status.PASS
    assert JobStepCounts(per_step=2).judge(timeline(with_counter(1))).status is Status.FAIL


def test_no_counter_of_the_jobs_own_is_unknown_not_a_pass():
    from chaos.checks.base import run_check

    b = TimelineBuilder().start().steps(1, 5)
    b._add(CheckpointEvent(t=b.t, source="worker-0", step=5, path="ckpt-1"))
    verdict = run_check(JobStepCounts(), timeline(b))
    assert verdict.status is Status.UNKNOWN and "no worker reported a step counter" in verdict.reason
