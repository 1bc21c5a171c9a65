"""What a workload reports, and so what the checks can judge.

The built-in harness reports everything. A user's job reports what its agent
sees (Keras ``fit`` hooked from outside the user's code), what its own
one-line report calls send, or, with no agent, only what the runner sees from
outside: exits, exit codes, OOM kills, stalls and hangs, TF errors in its
stderr, and steps if the scenario gives a progress pattern for its log lines.

A check declares the evidence it needs (``Check.evidence``); one that needs
what the workload does not report is ``unknown``, naming what is missing,
never pass or fail; ``chaos validate`` says it up front. A fault declares the
hooks it needs inside the training process (``Fault.needs``); validation
refuses it for a workload that cannot serve it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable


class Evidence(str, enum.Enum):
    START = "start"  # start events: TF version, environment fingerprint
    STEPS = "steps"  # step events with the global step and loss
    LOCAL_LOSS = "local_loss"  # each worker's own batch loss beside the global one
    BATCH_DIGESTS = "batch_digests"  # a digest of the batch each worker consumed
    RESTORED = "restored"  # restored events: which checkpoint, where training resumed
    CHECKPOINTS = "checkpoints"  # checkpoint events: each new backup
    DONE = "done"  # done events: training finished
    WEIGHTS = "weights_digest"  # done events carry a digest of the final weights
    ERRORS = "errors"  # error events with the exception class and message
    INITIAL_WEIGHTS = "initial_weights"  # weights digests at train begin and after the first step
    DROPOUT_MASKS = "dropout_masks"  # a hash of each step's dropout mask
    LOCAL_BATCH = "local_batch"  # each worker's batch per step
    WEIGHTS_FINITE = "weights_finite"  # whether each worker's weights are all finite after every step
    JOB_STEP = "job_step"  # the job's own step counter at each save, beside the steps it trained
    JOB_COUNTERS = "job_counters"  # the job's integer counters at each save and restore


class Hook(str, enum.Enum):
    """What a fault may need inside the training process."""

    COMMANDS = "commands"  # runner -> training process commands (memory demand)
    SETTINGS = "settings"  # the harness's training settings (sharding, seed)
    TF_IMAGES = "tf_images"  # the workload runs on the framework's per-TF-version images


SAYS = {
    Evidence.START: "start events (TF version, environment fingerprint)",
    Evidence.STEPS: "training steps",
    Evidence.LOCAL_LOSS: "each worker's local loss",
    Evidence.BATCH_DIGESTS: "batch digests",
    Evidence.RESTORED: "restored events (which checkpoint training resumed from)",
    Evidence.CHECKPOINTS: "checkpoint events",
    Evidence.DONE: "done events",
    Evidence.WEIGHTS: "final weights digest",
    Evidence.ERRORS: "error events",
    Evidence.INITIAL_WEIGHTS: "weights digests at train begin and after the first step",
    Evidence.DROPOUT_MASKS: "dropout mask hashes",
    Evidence.LOCAL_BATCH: "each worker's batch per step",
    Evidence.WEIGHTS_FINITE: "a per-step report that the weights are finite",
    Evidence.JOB_STEP: "the job's own step counter",
    Evidence.JOB_COUNTERS: "the job's own counters at its saves and restores",
}

EVERYTHING = frozenset(Evidence)
# The agent hooks Keras fit from outside the job's code: no batch contents, no per-worker loss.
# Initial weights, dropout masks, batch sizes and the per-step finiteness of the weights
# come from the harness's own train step and callbacks only.
AGENT = frozenset(
    EVERYTHING
    - {
        Evidence.BATCH_DIGESTS,
        Evidence.LOCAL_LOSS,
        Evidence.INITIAL_WEIGHTS,
        Evidence.DROPOUT_MASKS,
        Evidence.LOCAL_BATCH,
        Evidence.WEIGHTS_FINITE,
    }
)
# No agent: errors parsed from stderr only; steps only with a progress pattern.
LOG_ONLY = frozenset({Evidence.ERRORS})


def missing(needed: frozenset, provided: frozenset) -> list[str]:
    """What of ``needed`` the workload does not report, said for a person."""
    return [SAYS[e] for e in Evidence if e in needed and e not in provided]


def unproduced(events: Iterable) -> dict[str, str]:
    """Evidence a job that trained to its end did not produce, each with why (for a
    check that needs it: unknown with that reason, never a fail for a missing event).

    Only for events of a run that ended cleanly (the uninterrupted reference run,
    or a run whose every worker exited 0): there, no step, done or digest means the
    job does not report it. A job with the agent reports them from Keras ``fit``
    or from its own ``chaos.agent.report`` calls.
    """
    from chaos.events import CheckpointEvent, DoneEvent, EpochEndEvent, PlanEvent, RestoredEvent, StepEvent

    events = list(events)
    done = {e.source: e for e in events if isinstance(e, DoneEvent)}
    stepped = any(isinstance(e, StepEvent) for e in events)
    reported = (
        stepped
        or bool(done)
        or any(isinstance(e, (PlanEvent, CheckpointEvent, RestoredEvent, EpochEndEvent)) for e in events)
    )
    calls = "made no report.{} call" if reported else "made no report call"
    out: dict[str, str] = {}
    if not stepped:
        out[Evidence.STEPS.value] = f"no training steps: the job ran no Keras fit and {calls.format('step')}"
    if not done:
        out[Evidence.DONE.value] = f"no done report: the job ran no Keras fit and {calls.format('done')}"
        out[Evidence.WEIGHTS.value] = f"no weights digest: the job ran no Keras fit and {calls.format('done')}"
    else:
        empty = sorted(source for source, e in done.items() if not e.weights_digest)
        if empty:
            out[Evidence.WEIGHTS.value] = (
                f"no weights digest: {', '.join(empty)} reported done without weights "
                "(report.done(model.get_weights()) reports them)"
            )
    return out
