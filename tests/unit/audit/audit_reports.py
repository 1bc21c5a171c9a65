"""Synthetic battery Reports for the audit's tests (a plain module: tests import it)."""

from __future__ import annotations

from timeline_builder import UNAVAILABLE, TimelineBuilder, killed_and_recovered

from chaos.checks.verdict import Status, Verdict
from chaos.report.model import Report


def verdict(check, status="pass", reason=None):
    return Verdict(Status(status), reason or f"{check} {status}", check=check, role="recover")


def report(timeline, verdicts=(), error=None, name="audit-killed-worker"):
    return Report(
        scenario=name,
        file=f"{name}.yaml",
        description="d",
        explain={},
        verdicts=list(verdicts),
        timeline=timeline,
        error=error,
    )


def recovered_verdicts(exact="pass", **statuses):
    checks = ["restored_same_checkpoint", "lost_work", "identical_weights", "completed"]
    return [verdict(c, statuses.get(c, "pass")) for c in checks] + [verdict("matches_uninterrupted", exact)]


def killed_worker_report(**kw):
    """Backup at step 10, kill at 15: worker-1 exits 0.2 s later, the chief errors at 1.0 s,
    restart at 2.0 s, first step 5.6 s after it, from step 11."""
    return report(killed_and_recovered(), recovered_verdicts(**kw))


def reference_report(save_pause=0.3, dt=0.1, epoch_start=0.0):
    """30 steps of 0.1 s; a save after step 10 and 20 that takes ``save_pause`` s, reported
    as an epoch-end save is (step N, the save, the checkpoint), then ``epoch_start`` s
    before the next step (the next epoch's iterator)."""
    b = TimelineBuilder().start().steps(1, 10, dt=dt).wait(save_pause).checkpoint(10).wait(epoch_start)
    b.steps(11, 20, dt=dt).wait(save_pause).checkpoint(20).wait(epoch_start).steps(21, 30, dt=dt).done(0).done(1)
    return report(b.build(), [verdict("completed")], name="audit-reference")


def silent_report(noticed_after=None, window=40):
    """Worker-1 paused at step 15 for 50 s; the chief errors ``noticed_after`` s later (None: never)."""
    b = TimelineBuilder().start().steps(1, 10).checkpoint(10).steps(11, 15)
    b.inject("pause_worker", "worker-1", worker=1)
    if noticed_after is not None:
        b.wait(noticed_after).error(0, UNAVAILABLE, "stopped sending heartbeats").exit(0, 1)
        b.wait(50 - noticed_after)
    else:
        b.wait(50)
    b.heal("pause_worker", "worker-1").wait(1).restart().wait(3).start().restored(0, 1, 10).restored(1, 1, 10)
    b.steps(11, 30).done(0).done(1)
    return report(b.build(), recovered_verdicts(), name="audit-peer-paused")


def preempted_report(caught_after=None):
    """worker-1 preempted at step 15: TF logs `SIGTERM caught` caught_after s later (None: no
    such line), the job saves and exits 42 at 2.4 s, the chief errors at 2.5 s."""
    b = TimelineBuilder().start().steps(1, 10).checkpoint(10).steps(11, 15)
    b.inject("preempt_worker", "worker-1", worker=1, grace_s=15)
    if caught_after is not None:
        b.wait(caught_after).log(1, "W0000 preemption_notifier.cc:89] SIGTERM caught at 2026-11-27T21:00:00+00:00")
    b.wait(2.4 - (caught_after or 0)).exit(1, 42).wait(0.1).error(0, "UnavailableError", "Socket closed")
    b.wait(1.0).exit(0, 1).restart().wait(4).start().restored(0, 1, 15).restored(1, 1, 15).steps(16, 30)
    return report(b.done(0).done(1).build(), recovered_verdicts(), name="audit-preemption")


def preempted_trained_to_end_report():
    """The example's fit job preempted at epoch 2 with a 15 s grace (docs/audit.md): TF caught the
    SIGTERM 0.6 s later, both workers trained to step 30 and exited 0, no restart."""
    b = TimelineBuilder().start().steps(1, 10).checkpoint(10).steps(11, 15)
    b.inject("preempt_worker", "worker-1", worker=1, grace_s=15)
    b.wait(0.6).log(1, "W0000 preemption_notifier.cc:89] SIGTERM caught at 2026-11-27T21:00:00+00:00")
    b.steps(16, 30).done(0).done(1).wait(0.5).exit(0, 0).wait(0.7).exit(1, 0)
    return report(b.build(), [verdict("completed")], name="audit-preemption")
