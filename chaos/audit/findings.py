"""The audit's criteria: each one measured from the battery's runs, with why
it matters and the fix (naming the TF setting where one exists).

A criterion is ``ok`` (met), a ``finding`` (not met) or ``not measured`` (no
run of the battery could judge it; ``measured`` then says why). Every
threshold is stated in the criterion's text and in docs/audit.md; each is a
comparison between two measured quantities or a verdict, except the
interval's factor of 2 (see ``interval_criterion``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass

from chaos.audit.measure import RunMeasures
from chaos.checks.verdict import Status

OK = "ok"
FINDING = "finding"
NOT_MEASURED = "not measured"

DETECTION = "detection"
RECOVERY = "recovery"
CHECKPOINTING = "checkpointing"
AREAS = (DETECTION, RECOVERY, CHECKPOINTING)

# Fault kinds after which the job must notice, restart and resume.
FAILURES = ("crash", "preemption", "silent")

# Waste at the actual interval over the waste at the optimum. With
# w(tau) = C/tau + tau/(2M), an interval a factor k off the optimum wastes
# (k + 1/k)/2 times the minimum: k = 2 gives 1.25.
INTERVAL_FACTOR = 2.0
INTERVAL_WASTE_LIMIT = (INTERVAL_FACTOR + 1 / INTERVAL_FACTOR) / 2

# Timed criteria (slow-detection, slow-exit) compare two measured durations;
# closer than this they are not judged either way: issue 25 asks two runs of
# the battery to agree within 20 % (chaos.audit.agreement uses this figure), and
# a comparison inside that spread flipped a grade between two runs (measured).
TIMING_SPREAD = 0.20


@dataclass(frozen=True)
class Finding:
    id: str
    area: str
    title: str  # the criterion, said as what a resilient job does
    status: str  # ok | finding | not measured
    measured: str  # what the runs showed (or why nothing could be judged)
    why: str  # why it matters
    fix: str  # what to change ("" when ok)
    setting: str = ""  # the TF / orchestrator setting the fix names
    runs: tuple[str, ...] = ()  # battery keys it was judged from

    def to_dict(self) -> dict:
        return asdict(self)


def _f(value: float | None, unit: str = "s") -> str:
    return "?" if value is None else f"{value:.2f} {unit}".rstrip()


def _judged(runs: Iterable[RunMeasures], kinds: tuple[str, ...]) -> list[RunMeasures]:
    return [r for r in runs if r.kind in kinds and r.measured]


def _skipped(runs: Iterable[RunMeasures], kinds: tuple[str, ...]) -> str:
    gone = [f"{r.key}: {r.why}" for r in runs if r.kind in kinds and not r.measured]
    return "; ".join(gone)


def _none_measured(runs, kinds, what: str) -> str:
    why = _skipped(runs, kinds)
    return f"no run could judge {what}" + (f" ({why})" if why else " (none in this battery)")


# --- detection ---------------------------------------------------------------


def hang(runs: list[RunMeasures], context: Context) -> Finding:
    base = dict(
        id="hang",
        area=DETECTION,
        title="every failure raises an error or ends a process within the symptom window",
        why="a job that hangs holds every node and makes no progress until a person notices; "
        "the orchestrator restarts only what exits",
        setting="tf.distribute.experimental.CommunicationOptions(timeout_seconds=...) passed to "
        "MultiWorkerMirroredStrategy(communication_options=...); the coordination service's "
        "heartbeat_timeout_in_ms (TF default 10 s)",
    )
    judged = [r for r in _judged(runs, FAILURES) if r.hang is not None]  # None: training ended first
    if not judged:
        return Finding(**base, status=NOT_MEASURED, measured=_none_measured(runs, FAILURES, "detection"), fix="")
    hung = [r for r in judged if r.hang]
    keys = tuple(r.key for r in judged)
    if not hung:
        worst = max((f.value for r in judged for f in r.detection.values() if f.known), default=None)
        return Finding(
            **base,
            status=OK,
            runs=keys,
            fix="",
            measured=f"{len(judged)} of {len(judged)} failures noticed; the slowest worker's first error "
            f"or exit came {_f(worst)} after the fault",
        )
    shown = "; ".join(f"{r.title}: no error or exit on any worker within {r.symptom_window_s:g} s" for r in hung)
    return Finding(
        **base,
        status=FINDING,
        runs=keys,
        measured=shown,
        fix="set a collective timeout longer than your slowest collective (e.g. a few times the "
        "step time, at least the longest save) so a peer whose data never arrives raises "
        "DeadlineExceededError, and keep the heartbeat timeout set; add a progress watchdog in "
        "the orchestrator for what neither catches",
    )


def _restart(r: RunMeasures, context: Context) -> float:
    """The yardstick R: the card's median restart when known, else this run's own."""
    return context.restart_s if context.restart_s is not None else r.restart_s.value


def _closeness(value: float, limit: float) -> str:
    """slower | close | within: closer than TIMING_SPREAD is neither."""
    top = max(abs(value), abs(limit))
    if top == 0 or abs(value - limit) / top <= TIMING_SPREAD:
        return "close"
    return "slower" if value > limit else "within"


def _timed(base: dict, judged: list[RunMeasures], value: Callable, limit: Callable, row: Callable, fix: str) -> Finding:
    """A criterion that compares two measured durations per run: a finding when
    some run is clearly slower, met when every run is clearly within, and not
    judged when the closest calls are within the battery's own spread (a
    timing that flips a grade between two runs is noise, not a finding)."""
    keys = tuple(r.key for r in judged)
    sort: dict[str, list[RunMeasures]] = {"slower": [], "close": [], "within": []}
    for r in judged:
        sort[_closeness(value(r), limit(r))].append(r)
    said = lambda label, rs: f"{label}: " + "; ".join(map(row, rs)) if rs else ""  # noqa: E731
    close = said(
        f"too close to call (within {TIMING_SPREAD * 100:.0f} %, the spread of timings between two runs "
        "of the battery)",
        sort["close"],
    )
    if sort["slower"]:
        text = "; ".join(t for t in (said("slower", sort["slower"]), said("within", sort["within"]), close) if t)
        return Finding(**base, status=FINDING, measured=text, runs=keys, fix=fix)
    if not sort["close"]:
        return Finding(**base, status=OK, measured="; ".join(map(row, judged)), fix="", runs=keys)
    text = "; ".join(t for t in (close, said("within", sort["within"])) if t)
    return Finding(**base, status=NOT_MEASURED, measured=text, fix="", runs=keys)


def slow_detection(runs: list[RunMeasures], context: Context) -> Finding:
    base = dict(
        id="slow-detection",
        area=DETECTION,
        title="detecting a failure takes no longer than the rest of its downtime (the median restart R + lost work)",
        why="every failure costs detection + restart + lost work; when detection is the larger part, "
        "the timeouts, not the checkpoints, set the job's goodput",
        setting="the coordination service's heartbeat_timeout_in_ms; CommunicationOptions(timeout_seconds=...)",
    )
    judged = [r for r in _judged(runs, FAILURES) if r.detect_s.known and r.restart_s.known]
    if not judged:
        return Finding(
            **base,
            status=NOT_MEASURED,
            fix="",
            measured=_none_measured(runs, FAILURES, "detection against restart (needs a restart)"),
        )
    lost = context.expected_lost_s
    rr = lambda r: _restart(r, context)  # noqa: E731
    row = lambda r: f"{r.title}: D {_f(r.detect_s.value)} vs R {_f(rr(r))} + L {_f(lost)}"  # noqa: E731
    return _timed(
        base,
        judged,
        lambda r: r.detect_s.value,
        lambda r: rr(r) + (lost or 0.0),
        row,
        fix="a silent failure is found by the heartbeat (or collective) timeout: lower it toward "
        "your longest legitimate pause (a GC, a save to slow storage), not below",
    )


def slow_exit(runs: list[RunMeasures], context: Context) -> Finding:
    base = dict(
        id="slow-exit",
        area=DETECTION,
        title="a worker that raised a fatal error exits no later than a restart takes (error -> exit <= the median R)",
        why="an orchestrator acts on a process's exit, not on a line in its log: the time a failed process "
        "lingers (TF's teardown, atexit handlers, waiting threads) is downtime of every node",
        setting="",
    )
    judged = [r for r in _judged(runs, FAILURES) if r.restart_s.known and any(f.known for f in r.exit_lag.values())]
    if not judged:
        return Finding(
            **base,
            status=NOT_MEASURED,
            fix="",
            measured=_none_measured(runs, FAILURES, "error -> exit (needs an error, an exit and a restart)"),
        )

    def worst(r: RunMeasures) -> tuple[str, float]:
        return max(((w, f.value) for w, f in r.exit_lag.items() if f.known), key=lambda p: p[1])

    rr = lambda r: _restart(r, context)  # noqa: E731
    row = lambda r: f"{r.title}: {worst(r)[0]} error -> exit {_f(worst(r)[1])} vs R {_f(rr(r))}"  # noqa: E731
    return _timed(
        base,
        judged,
        lambda r: worst(r)[1],
        rr,
        row,
        fix="exit as soon as training fails: catch the error around fit / the loop, log it, flush, "
        "and end with os._exit(1) (as the example's preemption job ends with os._exit(42)) "
        "instead of the interpreter's teardown",
    )


# --- recovery ----------------------------------------------------------------


def _verdict_criterion(
    check: str,
    id: str,
    title: str,
    why: str,
    fix: str,
    setting: str = "",
    kinds: tuple[str, ...] = FAILURES,
    area: str = RECOVERY,
) -> Callable:
    def criterion(runs: list[RunMeasures], context: Context) -> Finding:
        base = dict(id=id, area=area, title=title, why=why, setting=setting)
        judged = [r for r in _judged(runs, kinds) if r.verdict(check).status in (Status.PASS, Status.FAIL)]
        unknown = [
            f"{r.title}: {r.verdict(check).reason}"
            for r in _judged(runs, kinds)
            if r.verdict(check).status not in (Status.PASS, Status.FAIL)
        ]
        if not judged:
            why_not = "; ".join(unknown) or _skipped(runs, kinds) or "no such run in this battery"
            return Finding(**base, status=NOT_MEASURED, fix="", measured=f"not judged: {why_not}")
        failed = [r for r in judged if r.verdict(check).failed]
        text = "; ".join(f"{r.title}: {r.verdict(check).reason}" for r in (failed or judged))
        if unknown:
            text += "; not judged: " + "; ".join(unknown)
        keys = tuple(r.key for r in judged)
        if not failed:
            return Finding(**base, status=OK, measured=text, fix="", runs=keys)
        return Finding(**base, status=FINDING, measured=text, fix=fix, runs=keys)

    return criterion


completes = _verdict_criterion(
    "completed",
    "no-recovery",
    "after each failure the restarted job trains to the end",
    "a job that cannot come back after a restart turns one node failure into a failed run",
    "restart every worker when one exits, and restore from the last backup at start "
    "(tf.keras.callbacks.BackupAndRestore, or CheckpointManager.latest_checkpoint in a custom loop)",
    setting="tf.keras.callbacks.BackupAndRestore(backup_dir=...)",
)

same_checkpoint = _verdict_criterion(
    "restored_same_checkpoint",
    "restored-apart",
    "every worker restores the same checkpoint",
    "workers that restore different checkpoints train on from different weights: a collective mismatch or "
    "silently wrong weights",
    "keep the backup dir on storage every worker and every restart sees (one shared path), written by the chief",
    setting="BackupAndRestore(backup_dir=<shared path>)",
)

lost_work = _verdict_criterion(
    "lost_work",
    "lost-more-than-interval",
    "a restart loses at most one checkpoint interval of steps",
    "work lost beyond one interval means the restore did not pick up the newest backup (or none)",
    "restore the newest backup at start; check the backup dir is the one written to",
)


def bit_exact(runs: list[RunMeasures], context: Context) -> Finding:
    base = dict(
        id="not-bit-exact",
        area=RECOVERY,
        title="a resumed run ends with exactly the weights of an uninterrupted one",
        why="a job that restores but diverges trains a different model after every failure: results depend on "
        "when nodes failed, and a regression cannot be told from a fault",
        setting="tf.keras.utils.set_random_seed, tf.config.experimental.enable_op_determinism(); the input "
        "position restored with the model (BackupAndRestore restores model, optimizer and epoch only)",
    )
    judged = [
        r for r in _judged(runs, FAILURES) if r.verdict("matches_uninterrupted").status in (Status.PASS, Status.FAIL)
    ]
    if not judged:
        reasons = "; ".join(f"{r.title}: {r.verdict('matches_uninterrupted').reason}" for r in _judged(runs, FAILURES))
        why = reasons or _skipped(runs, FAILURES) or "no such run in this battery"
        return Finding(**base, status=NOT_MEASURED, fix="", measured=f"not judged: {why}")
    drifted = [r for r in judged if r.verdict("matches_uninterrupted").failed]
    keys = tuple(r.key for r in judged)
    if not drifted:
        return Finding(
            **base, status=OK, fix="", runs=keys, measured=f"bit-exact after {len(judged)} of {len(judged)} failures"
        )
    text = "; ".join(
        f"{r.title}: {r.verdict('matches_uninterrupted').reason}"
        + (f" (final loss drift {r.drift.value:.3g})" if r.drift.known else "")
        for r in drifted
    )
    return Finding(
        **base,
        status=FINDING,
        runs=keys,
        measured=text,
        fix="seed every RNG, enable op determinism, and make each batch a function of the global step "
        "(or checkpoint the input iterator with the model), so a resumed run sees the same batches; "
        "save at epoch ends if the input restarts at each epoch",
    )


def _one_run_completes(kind: str, what: str, text: Callable[[RunMeasures], str], fix: str, **base) -> Callable:
    """A criterion judged from the runs of ``kind`` (one, or ``--repeat`` of them): their
    ``completed`` verdicts; one run that did not complete is the finding."""

    def criterion(runs: list[RunMeasures], context: Context) -> Finding:
        judged = _judged(runs, (kind,))
        if not judged:
            return Finding(**base, status=NOT_MEASURED, fix="", measured=_none_measured(runs, (kind,), what))
        failed = [r for r in judged if not r.verdict("completed").passed]
        shown = failed or judged
        label = (lambda r: f"{r.key}: ") if len(judged) > 1 else (lambda r: "")  # noqa: E731
        measured = "; ".join(f"{label(r)}{text(r)}; {r.verdict('completed').reason}" for r in shown)
        keys = tuple(r.key for r in judged)
        if not failed:
            return Finding(**base, status=OK, measured=measured, fix="", runs=keys)
        return Finding(**base, status=FINDING, measured=measured, runs=keys, fix=fix)

    return criterion


empty_checkpoint = _one_run_completes(
    "empty_checkpoint",
    "a restart on an empty directory",
    lambda r: f"first step after the restart: {r.resumed_step if r.resumed_step is not None else 'none'}",
    "treat a missing or empty checkpoint directory as a fresh start (latest_checkpoint is None)",
    id="empty-checkpoint",
    area=RECOVERY,
    title="a restart that finds an empty checkpoint directory starts over and completes",
    why="a new node, a wiped volume or a backup dir on local disk gives the restart nothing to restore; "
    "a job that crashes on that never recovers without a person",
)

bring_up = _one_run_completes(
    "bring_up",
    "a blocked port at bring-up",
    lambda r: f"first step {_f(r.start_after_heal_s.value)} after the port opened ({r.start_after_heal_s.note})",
    "let the strategy wait for its peers at bring-up (MWMS does by default); "
    "restart the job when a worker exits during bring-up",
    id="bring-up-blocked",
    area=RECOVERY,
    title="a job whose peer is unreachable at bring-up starts once it is reachable, and completes",
    why="nodes come up in any order; a job that gives up while a peer is still starting needs a person",
)


# --- checkpointing -------------------------------------------------------------


def interval(runs: list[RunMeasures], context: Context) -> Finding:
    base = dict(
        id="interval-off-optimum",
        area=CHECKPOINTING,
        title=f"the checkpoint interval is within a factor of {INTERVAL_FACTOR:g} of the optimum for this "
        f"MTBF (time lost to saves and failures at most {INTERVAL_WASTE_LIMIT:g}x what it is at tau_Daly)",
        why="saving too often spends the time on saves; too rarely, on work redone after each failure",
        setting="BackupAndRestore(save_freq=<steps>) / the custom loop's save period",
    )
    if context.waste_ratio is None:
        return Finding(**base, status=NOT_MEASURED, fix="", measured=context.model_missing or "no model")
    actual, best = context.interval_s, context.best_interval_s
    text = (
        f"interval {_f(actual)} ({context.interval_steps} steps), optimum {_f(best)} "
        f"({context.best_interval_steps} steps); time lost {context.waste_ratio:.2f}x what it is at the optimum"
    )
    if context.waste_ratio <= INTERVAL_WASTE_LIMIT:
        return Finding(**base, status=OK, measured=text, fix="", runs=context.model_runs)
    return Finding(
        **base,
        status=FINDING,
        measured=text,
        runs=context.model_runs,
        fix=f"save every {context.best_interval_steps} steps (about {_f(best)} of training) instead of "
        f"every {context.interval_steps}",
    )


def preemption(runs: list[RunMeasures], context: Context) -> Finding:
    base = dict(
        id="preemption-swallowed",
        area=CHECKPOINTING,
        title="a preempted worker saves and exits within its grace period (SIGTERM handled)",
        why="a preemption announces itself; a job that trains through the SIGTERM is SIGKILLed and loses the "
        "steps since its last save, and the survivors wait for their collectives to abort",
        setting="tf.distribute.experimental.PreemptionCheckpointHandler (custom loop), "
        "BackupAndRestore(save_before_preemption=True) (honoured on Google Cloud only)",
    )
    judged = [r for r in _judged(runs, ("preemption",)) if r.target_exit_code is not None]
    if not judged:
        return Finding(
            **base,
            status=NOT_MEASURED,
            fix="",
            measured=_none_measured(runs, ("preemption",), "a preemption (or the worker never exited)"),
        )
    # A run whose preempted worker finished training within the grace period judges nothing.
    timely = [r for r in judged if not r.target_done]
    if not timely:
        r = judged[0]
        return Finding(
            **base,
            status=NOT_MEASURED,
            fix="",
            runs=tuple(r.key for r in judged),
            measured=f"not judged: the preempted worker finished training within the grace period "
            f"(done, then exit {r.target_exit_code}): train longer than the grace after epoch 2",
        )
    keys = tuple(r.key for r in timely)
    killed = [r for r in timely if r.target_exit_code == 137]
    r = (killed or timely)[0]
    lost = f", {r.steps_lost.value:g} steps lost" if r.steps_lost.known else ""
    of = f" ({len(killed) or len(timely)} of {len(timely)} runs)" if len(timely) > 1 else ""
    if not killed:
        codes = ", ".join(sorted({str(x.target_exit_code) for x in timely}))
        return Finding(
            **base,
            status=OK,
            runs=keys,
            fix="",
            measured=f"the preempted worker exited {codes} before the SIGKILL{lost}{of}",
        )
    return Finding(
        **base,
        status=FINDING,
        runs=keys,
        measured=f"the preempted worker trained on through SIGTERM and was SIGKILLed (exit 137){lost}{of}",
        fix="run every step through PreemptionCheckpointHandler.run (it saves at one step on every "
        "worker and exits 42) and have the orchestrator restart on exit 42",
    )


def shared_dir(runs: list[RunMeasures], context: Context) -> Finding:
    base = dict(
        id="backup-not-shared",
        area=CHECKPOINTING,
        title="every worker backs up to one directory on the run's shared checkpoint storage",
        why="a backup dir on a worker's own disk is gone with the worker, or restores apart from the others",
        setting="BackupAndRestore(backup_dir=<the shared checkpoint_dir>)",
    )
    measured = [r for r in runs if r.measured and r.backup_dirs]
    if not measured:
        return Finding(
            **base,
            status=NOT_MEASURED,
            fix="",
            measured="the job named no backup dir (no BackupAndRestore seen, no report.plan call, or agent: none)",
        )
    dirs = sorted({d for r in measured for d in r.backup_dirs.values()})
    outside = [
        d
        for d in dirs
        if context.checkpoint_dir
        and not (d == context.checkpoint_dir or d.startswith(context.checkpoint_dir.rstrip("/") + "/"))
    ]
    keys = tuple(r.key for r in measured)
    if len(dirs) == 1 and not outside:
        where = f" (under checkpoint_dir {context.checkpoint_dir})" if context.checkpoint_dir else ""
        return Finding(**base, status=OK, runs=keys, fix="", measured=f"every worker backs up to {dirs[0]}{where}")
    text = f"backup dirs named: {', '.join(dirs)}"
    if outside:
        text += f"; outside the shared checkpoint_dir {context.checkpoint_dir}: {', '.join(outside)}"
    return Finding(
        **base,
        status=FINDING,
        runs=keys,
        measured=text,
        fix="point every worker's backup_dir at the same path on the shared checkpoint storage",
    )


def chief_only_writes(runs: list[RunMeasures], context: Context) -> Finding:
    return Finding(
        id="chief-writes",
        area=CHECKPOINTING,
        title="only the chief writes the checkpoint the job restores from",
        status=NOT_MEASURED,
        measured="not measured: the events say which checkpoint exists, not which worker wrote it",
        why="workers writing the same files race; BackupAndRestore and CheckpointManager write the real "
        "checkpoint on the chief and temporary ones elsewhere",
        fix="",
        setting="",
    )


@dataclass(frozen=True)
class Context:
    """What the criteria need beyond the runs: the model's figures (chaos.audit.card)."""

    expected_lost_s: float | None = None
    restart_s: float | None = None  # the model's R (median over the failure runs): steadier than one run's
    interval_s: float | None = None
    interval_steps: int = 0
    best_interval_s: float | None = None
    best_interval_steps: int = 0
    waste_ratio: float | None = None
    model_missing: str = ""
    model_runs: tuple[str, ...] = ()
    checkpoint_dir: str = ""


CRITERIA: tuple[Callable[[list[RunMeasures], Context], Finding], ...] = (
    hang,
    slow_detection,
    slow_exit,
    completes,
    lost_work,
    same_checkpoint,
    bit_exact,
    empty_checkpoint,
    bring_up,
    interval,
    preemption,
    shared_dir,
    chief_only_writes,
)


def evaluate(runs: list[RunMeasures], context: Context) -> list[Finding]:
    return [criterion(runs, context) for criterion in CRITERIA]
