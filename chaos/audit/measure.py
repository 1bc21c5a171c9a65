"""What the audit reads from each battery run's Report: timings and verdicts.

Every figure is a ``Figure``: a value with how it was computed, or no value
with why it could not be (never a guess, never 0 for "absent"). Timings come
from the run's one timeline (chaos.timeline), with the helpers the checks and
``chaos compare`` use (fault windows, step durations, ``steps_lost``); the
verdicts come from the checks the battery listed (chaos.audit.battery).
"""

from __future__ import annotations

import re
import statistics
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from chaos.audit.battery import BatteryEntry
from chaos.audit.noticing import how_noticed
from chaos.checks.select import first_by_worker
from chaos.checks.verdict import Verdict, unknown
from chaos.compare.metrics import steps_lost
from chaos.events import (
    CheckpointEvent,
    DoneEvent,
    ErrorEvent,
    ExitEvent,
    InjectEvent,
    LogLine,
    PlanEvent,
    RestartEvent,
    RestoredEvent,
    StartEvent,
    StepEvent,
)
from chaos.report.model import Report
from chaos.timeline import Timeline

MEASURED = "measured"
NOT_MEASURED = "not measured"


@dataclass(frozen=True)
class Figure:
    """A measured number (``value``) and how, or None and why not."""

    value: float | None
    note: str
    how: str = ""  # a detection's way of noticing (chaos.audit.noticing); "" for other figures

    @property
    def known(self) -> bool:
        return self.value is not None

    @classmethod
    def of(cls, value: float, note: str, how: str = "") -> Figure:
        return cls(float(value), note, how)

    @classmethod
    def missing(cls, why: str) -> Figure:
        return cls(None, why)


# What ``RunMeasures.verdict`` says of a check the run has not (the entry did not ask it, or the
# run broke): it could not be judged.
ABSENT = unknown("not asked in this run")


@dataclass(frozen=True)
class RunMeasures:
    key: str
    title: str
    kind: str
    status: str  # measured | not measured
    why: str = ""  # why not measured (refused by validation, run error, fault never acted)
    scenario: str = ""
    report: str = ""  # the run's HTML page (its JSON beside it), when written
    workers: int = 0
    detection: dict[str, Figure] = field(default_factory=dict)  # worker -> inject to its first error/exit
    detect_s: Figure = Figure.missing("no fault")  # inject -> first process exit (or the restart)
    # How long the inject itself took (its command sent -> done): the fault landed somewhere in it,
    # so a time measured from the inject is only known to within this (chaos.audit.agreement).
    inject_s: Figure = Figure.missing("no fault")
    restart_after_s: Figure = Figure.missing("no restart")  # inject -> the runner's restart
    # A SIGTERM reaches the job through TF's own poll (SIGTERM_POLL_S): when TF noticed it, and how
    # long the job took from there to the target's exit (its own save and exit, the poll taken out).
    sigterm_noticed_s: Figure = Figure.missing("no SIGTERM")
    exit_after_sigterm_noticed_s: Figure = Figure.missing("no SIGTERM")
    exit_lag: dict[str, Figure] = field(default_factory=dict)  # worker -> its first error -> its exit
    hang: bool | None = None  # no worker noticed within the symptom window
    symptom_window_s: float = 0.0
    restart_s: Figure = Figure.missing("no restart")  # restart -> first step
    restart_parts: dict[str, Figure] = field(default_factory=dict)
    steps_lost: Figure = Figure.missing("no restart")
    save_interval_steps: int = 0
    step_time_s: Figure = Figure.missing("no steps")
    save_cost_s: Figure = Figure.missing("no checkpoint")
    save_extras_s: list[float] = field(default_factory=list)  # each save's cost before the first fault (C's samples)
    # The run had the machine to itself: the reference always, a fault run under -j 1. Only such
    # runs feed the card's step time and C (chaos.audit.card.job_speed).
    alone: bool = True
    target_exit_code: int | None = None
    # The job's own exit codes (chaos.audit.policy reads them): per worker, its first exit after the
    # fault before the restart (no watchdog kill, no exit after it finished training), and the
    # failures of the life after the restart (what the restart did not fix).
    exit_codes: dict[str, int] = field(default_factory=dict)
    exit_codes_after_restart: dict[str, int] = field(default_factory=dict)
    target_done: bool = False  # the fault's target reported done before it exited (training ended first)
    resumed_step: int | None = None  # first step after the restart
    start_after_heal_s: Figure = Figure.missing("no heal")
    # The report's verdicts of the checks the battery lists, by check (their status and reason:
    # the evidence stays in the run's report).
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    drift: Figure = Figure.missing("not compared")
    backup_dirs: dict[str, str] = field(default_factory=dict)  # worker -> the backup dir its plan event named

    @property
    def measured(self) -> bool:
        return self.status == MEASURED

    def verdict(self, check: str) -> Verdict:
        return self.verdicts.get(check, ABSENT)

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "verdicts": {k: {"status": v.status.value, "reason": v.reason} for k, v in self.verdicts.items()},
        }


def not_measured(entry: BatteryEntry, why: str, scenario: str = "", report: str = "") -> RunMeasures:
    return RunMeasures(entry.key, entry.title, entry.kind, NOT_MEASURED, why, scenario, report)


# --- timings -----------------------------------------------------------------


def first_inject(timeline: Timeline) -> InjectEvent | None:
    """The first fault that acts on a running job (a stale_checkpoint only
    changes the next restart, so the kill after it is the failure)."""
    injects = [i for i in timeline.of(InjectEvent) if i.fault != "stale_checkpoint"]
    return injects[0] if injects else None


# Faults whose own effect is a process's end: their target's exit 137 is the fault, not a watchdog.
ENDS_A_PROCESS = frozenset({"kill_worker", "preempt_worker", "host_oom", "kill_during_save"})
STALL = "no progress"  # how the runner's stall watchdog words its restarts (chaos.runner.supervisor)


def watchdog_kills(timeline: Timeline, inject: InjectEvent) -> list[ExitEvent]:
    """Exits the runner caused: SIGKILLs (137) ahead of a restart its stall
    watchdog ordered ("no progress for N s"), after a fault that ends no process."""
    round_ = first_restart_round(timeline, inject.t)
    if inject.fault in ENDS_A_PROCESS or not round_ or not round_[0].reason.startswith(STALL):
        return []
    return [e for e in timeline.of(ExitEvent) if inject.t <= e.t <= round_[0].t and e.exit_code == 137]


def next_restart(timeline: Timeline, after: float) -> float:
    """When the first restart at or after ``after`` came (inf: none)."""
    return next((r.t for r in timeline.of(RestartEvent) if r.t >= after), float("inf"))


def _done_in_life(timeline: Timeline, inject: InjectEvent) -> dict[int, float]:
    """Per worker: when it reported training done after the inject, before any restart."""
    restart = next_restart(timeline, inject.t)
    return {
        w: d.t for w, d in first_by_worker([d for d in timeline.of(DoneEvent) if inject.t <= d.t < restart]).items()
    }


def finished_after(timeline: Timeline, inject: InjectEvent) -> set[int]:
    """Workers that reported training done after the inject (before any restart): their exit that
    follows is the end of training, not a sign of the fault (a preempted job whose last steps fit
    in the grace period trains to the end on every worker, exit 0, and nothing noticed anything)."""
    return set(_done_in_life(timeline, inject))


def all_finished(timeline: Timeline, inject: InjectEvent) -> bool:
    """Every worker trained to the end after the fault: nothing had to notice it."""
    return set(timeline.workers()) <= finished_after(timeline, inject)


def noticing_exits(timeline: Timeline, inject: InjectEvent, until: float) -> list[ExitEvent]:
    """The exits from the inject up to ``until`` that can be a fault's sign: not a worker's exit
    after it finished training."""
    done = _done_in_life(timeline, inject)
    return [
        e
        for e in timeline.of(ExitEvent)
        if inject.t <= e.t <= until and not (e.worker in done and done[e.worker] <= e.t)
    ]


def detection_by_worker(timeline: Timeline, inject: InjectEvent) -> dict[str, Figure]:
    """Per worker: from the inject to its first error or exit, before the
    orchestrator restarted it (an exit the restart caused is not the worker
    noticing, nor is a kill by the runner's stall watchdog, nor its exit
    after it finished training)."""
    restart = next_restart(timeline, inject.t)
    killed = watchdog_kills(timeline, inject)
    signs = [
        e
        for e in [*timeline.of(ErrorEvent), *noticing_exits(timeline, inject, restart)]
        if inject.t <= e.t < restart and not any(e is k for k in killed)
    ]
    first = first_by_worker(sorted(signs, key=lambda e: e.t))
    finished = finished_after(timeline, inject)
    out: dict[str, Figure] = {}
    for w in timeline.workers():
        e = first.get(w)
        if e is None:
            why = (
                "no error: the runner's stall watchdog killed it"
                if any(k.worker == w for k in killed)
                else "nothing to notice: it finished training (done, then its exit)"
                if w in finished
                else "no error and no exit before the restart (still waiting)"
            )
            out[f"worker-{w}"] = Figure.missing(why)
        elif isinstance(e, ExitEvent):
            out[f"worker-{w}"] = Figure.of(e.t - inject.t, f"exit {e.exit_code}", how_noticed(e))
        else:
            how = how_noticed(e)
            name = e.error_class.rsplit(".", 1)[-1]
            out[f"worker-{w}"] = Figure.of(e.t - inject.t, name if how == name else f"{name}: {how}", how)
    return out


# With the coordination service on, TF's C++ handler takes SIGTERM and a thread looks at its flag
# once a second (tsl preemption_notifier.cc, kListenInterval = 1 s), then logs this line and tells
# the preemption handler. So whatever a job does on SIGTERM starts 0-1 s after the signal: two
# runs of one preemption differ by up to a second before the job's own code runs.
SIGTERM_CAUGHT = re.compile(r"SIGTERM caught at")
SIGTERM_POLL_S = 1.0


def sends_sigterm(inject: InjectEvent) -> bool:
    return inject.fault == "preempt_worker" or (
        inject.fault == "kill_worker" and inject.params.get("signal") == "SIGTERM"
    )


def sigterm_figures(timeline: Timeline, inject: InjectEvent) -> tuple[Figure, Figure]:
    """(the inject -> TF's `SIGTERM caught` line on a target worker, that line -> the target's
    exit), before the restart. Missing when the fault sends no SIGTERM (a SIGTERM the runner's
    stall watchdog sent on stopping a hung worker is not the fault's), or no target logged the
    line (the job runs without TF's coordination service and the signal's own disposition acted)."""
    if not sends_sigterm(inject):
        none = Figure.missing(f"{inject.fault} sends no SIGTERM")
        return none, none
    restart = next_restart(timeline, inject.t)
    targets = inject.target_workers(timeline.info.num_workers)
    caught = next(
        (
            e
            for e in timeline.of(LogLine)
            if e.worker in targets and inject.t <= e.t < restart and SIGTERM_CAUGHT.search(e.text)
        ),
        None,
    )
    if caught is None:
        none = Figure.missing("no target worker logged TF's `SIGTERM caught`")
        return none, none
    noticed = Figure.of(
        caught.t - inject.t,
        f"fault -> worker-{caught.worker}'s `SIGTERM caught` (TF polls for it every {SIGTERM_POLL_S:g} s)",
    )
    exit_ = next((e for e in timeline.of(ExitEvent, caught.worker) if caught.t <= e.t <= restart), None)
    if exit_ is None:
        return noticed, Figure.missing(f"worker-{caught.worker} did not exit before the restart")
    if caught.worker in finished_after(timeline, inject):
        return noticed, Figure.missing(
            f"worker-{caught.worker} trained to the end first (done, then exit "
            f"{exit_.exit_code}): its exit was not its answer to the SIGTERM"
        )
    return noticed, Figure.of(exit_.t - caught.t, f"`SIGTERM caught` -> exit {exit_.exit_code}")


def job_exit_codes(timeline: Timeline, inject: InjectEvent) -> tuple[dict[str, int], dict[str, int]]:
    """(per worker: its first exit code after the fault, before the restart; per worker: its failing
    exit code in the life after the restart). Left out: kills by the runner's stall watchdog (the
    runner's, not the job's) and exits after a worker finished training. After the restart, a
    worker's exit counts if it is the first failure of that life or the worker reported an error of
    its own before it: a later 137 with no error of its own is the teardown of a run that had failed."""
    restart = next_restart(timeline, inject.t)
    killed = watchdog_kills(timeline, inject)
    before = {}
    for e in noticing_exits(timeline, inject, restart):
        if e.t < restart and not any(e is k for k in killed):
            before.setdefault(f"worker-{e.worker}", e.exit_code)
    after: dict[str, int] = {}
    if restart == float("inf"):
        return before, after
    failing = [e for e in timeline.of(ExitEvent) if e.t > restart and e.exit_code != 0]
    errors = [e for e in timeline.of(ErrorEvent) if e.t > restart]
    for i, e in enumerate(failing):
        own_error = any(x.worker == e.worker and x.t <= e.t for x in errors)
        if i == 0 or own_error:
            after.setdefault(f"worker-{e.worker}", e.exit_code)
    return before, after


def exit_lags(timeline: Timeline, inject: InjectEvent) -> dict[str, Figure]:
    """Per worker that raised an error after the fault: from that error to its
    process's exit (before the restart): how long a failed process lingers."""
    restart = next_restart(timeline, inject.t)
    errors = first_by_worker([e for e in timeline.of(ErrorEvent) if inject.t <= e.t < restart])
    out: dict[str, Figure] = {}
    for w, error in errors.items():
        exit_ = next((e for e in timeline.of(ExitEvent, w) if error.t <= e.t <= restart), None)
        out[f"worker-{w}"] = (
            Figure.of(exit_.t - error.t, f"error -> exit {exit_.exit_code}")
            if exit_
            else Figure.missing("did not exit before the restart")
        )
    return out


def detect_figure(timeline: Timeline, inject: InjectEvent, round_: list[RestartEvent]) -> Figure:
    """D: from the fault to the first worker process that exited (the earliest an
    orchestrator watching processes can restart the job); with no exit before
    the runner's restart, to that restart; neither: not measured."""
    until = round_[0].t if round_ else float("inf")
    exits = noticing_exits(timeline, inject, until)
    if exits and any(exits[0] is k for k in watchdog_kills(timeline, inject)):
        return Figure.of(
            exits[0].t - inject.t,
            f"fault -> the runner's stall watchdog killed {exits[0].source} "
            f"({round_[0].reason}): the job itself never noticed",
        )
    if exits:
        return Figure.of(
            exits[0].t - inject.t, f"fault -> the first process exit ({exits[0].source}, code {exits[0].exit_code})"
        )
    if round_:
        return Figure.of(until - inject.t, "fault -> the runner's restart (no process exited before it)")
    if all_finished(timeline, inject):
        return Figure.missing("every worker finished training after the fault: nothing to detect")
    return Figure.missing("no process exited and the job was not restarted")


def first_restart_round(timeline: Timeline, after: float) -> list[RestartEvent]:
    """The restart events from the first one after ``after`` up to the next step."""
    group: list[RestartEvent] = []
    for e in timeline.events:
        if e.t < after:
            continue
        if isinstance(e, RestartEvent):
            group.append(e)
        elif isinstance(e, StepEvent) and group:
            break
    return group


def restart_figures(timeline: Timeline, after: float) -> tuple[Figure, dict[str, Figure], int | None]:
    """Restart to first step, its parts, and the first step trained after it."""
    group = first_restart_round(timeline, after)
    if not group:
        return Figure.missing("no restart after the fault"), {}, None
    t0 = group[0].t
    first = next((s for s in timeline.of(StepEvent) if s.t > group[-1].t), None)
    starts = first_by_worker([e for e in timeline.of(StartEvent) if e.t >= t0])
    restores = first_by_worker([e for e in timeline.of(RestoredEvent) if e.t >= t0])
    parts: dict[str, Figure] = {}
    if starts:
        up = max(e.t for e in starts.values())
        parts["process_start_s"] = Figure.of(up - t0, "restart -> the last worker's start event")
        if restores:
            parts["restore_s"] = Figure.of(
                max(e.t for e in restores.values()) - up,
                "last start -> the last restored event (cluster rendezvous + restore)",
            )
    if first is None:
        return Figure.missing("no step after the restart"), parts, None
    if restores:
        parts["first_step_s"] = Figure.of(
            first.t - max(e.t for e in restores.values()), "last restored event -> first step"
        )
    return Figure.of(first.t - t0, "first restart -> first training step after it"), parts, first.step


def step_time(timeline: Timeline) -> Figure:
    """Median interval between consecutive steps of the chief before the first fault."""
    before = timeline.before_first_fault()
    median = before.median_step_time(0)
    if median is None:
        return Figure.missing("fewer than two consecutive steps before the first fault")
    return Figure.of(median, "median interval between consecutive chief steps before the first fault")


def save_cost(timeline: Timeline) -> tuple[Figure, list[float]]:
    """C: what a save adds to training, one figure per checkpoint the chief reported
    before the first fault.

    A save falls in one of two places around the chief's step N (the step the
    checkpoint holds). At an epoch's end (BackupAndRestore's default) the job
    reports step N, then saves, then the checkpoint is reported: the save is the
    time from step N to the checkpoint. Mid-epoch, the job saves in step N's
    batch-end callbacks before step N is reported: the save lengthens step N's
    interval beyond the median. A save's cost is the larger of the two. The
    interval after the checkpoint is left out: at an epoch's end it holds the
    next epoch's start (its input iterator), which a job pays whether or not it
    saves; on the example's fit job it took either ~0.07 s or ~0.6 s, and
    counting it made C 0.13 s in one battery and 0.35 s in the next."""
    before = timeline.before_first_fault()
    gaps = {e.step: d for e, d in before.step_durations(0)}
    if len(gaps) < 2:
        return Figure.missing("fewer than two consecutive steps before the first fault"), []
    median = statistics.median(gaps.values())
    steps = before.of(StepEvent, 0)
    extras = []
    for c in before.of(CheckpointEvent, 0):
        reported = [s for s in steps if s.step == c.step and s.t <= c.t]
        parts = ([c.t - reported[-1].t] if reported else []) + ([gaps[c.step] - median] if c.step in gaps else [])
        if parts:
            extras.append(max(0.0, *parts))
    if not extras:
        return Figure.missing(
            "the job reported no checkpoint after a step (no BackupAndRestore seen, "
            "no report.checkpoint call, or agent: none)"
        ), []
    return Figure.of(
        statistics.median(extras),
        f"median over {len(extras)} saves of (step N -> its checkpoint, or step N's interval - the "
        "median interval: the longer)",
    ), extras


def save_interval(timeline: Timeline) -> int:
    """Steps between saves: the run info's (harness settings or the job's plan event)."""
    if timeline.info.save_interval_steps:
        return timeline.info.save_interval_steps
    plans = [p.save_every_steps for p in timeline.of(PlanEvent) if p.save_every_steps]
    return plans[0] if plans else 0


def _verdicts(report: Report) -> dict[str, Verdict]:
    out: dict[str, Verdict] = {}
    for v in report.verdicts:
        out.setdefault(v.check, replace(v, evidence=()))
    return out


def drift(timeline: Timeline, judged: Verdict) -> Figure:
    if judged.passed:
        return Figure.of(0.0, judged.reason)
    reference = timeline.info.reference_final_loss
    last = timeline.last_step()
    if not judged.failed:
        return Figure.missing(judged.reason)
    if reference is None or last is None:
        return Figure.missing(f"{judged.reason}; no final loss to compare")
    return Figure.of(abs(last.loss - reference), f"|final loss {last.loss:.6g} - uninterrupted {reference:.6g}|")


def measure(entry: BatteryEntry, report: Report, symptom_window_s: float, alone: bool = True) -> RunMeasures:
    """The audit's figures from one battery run (``alone``: nothing else of the battery ran beside it)."""
    artifact = report.artifacts.get("page", "")
    if report.error:
        return not_measured(entry, f"the run broke: {report.error}", report.scenario, artifact)
    timeline = report.timeline
    verdicts = _verdicts(report)
    save, extras = save_cost(timeline)
    base = dict(
        key=entry.key,
        title=entry.title,
        kind=entry.kind,
        status=MEASURED,
        scenario=report.scenario,
        report=artifact,
        workers=timeline.info.num_workers,
        verdicts=verdicts,
        save_interval_steps=save_interval(timeline),
        step_time_s=step_time(timeline),
        save_cost_s=save,
        save_extras_s=extras,
        symptom_window_s=symptom_window_s,
        alone=alone,
        backup_dirs={
            f"worker-{w}": p.checkpoint_dir
            for w, p in first_by_worker(timeline.of(PlanEvent)).items()
            if p.checkpoint_dir
        },
    )
    inject = first_inject(timeline)
    if inject is None:
        return RunMeasures(**base, detect_s=Figure.missing("no fault: the uninterrupted run"))
    window = next((w for w in timeline.fault_windows() if w.inject is inject), None)
    late = timeline.landed_late(window) if window is not None else None
    if late:
        return not_measured(entry, late, report.scenario, artifact)
    acting = timeline.acting_from(window) if window is not None else inject.t
    detection = detection_by_worker(timeline, inject)
    noticed = [f.value - max(0.0, acting - inject.t) for f in detection.values() if f.known]
    # A job that trained to the end on every worker did not hang, nor did anything have to notice.
    hang = None if not noticed and all_finished(timeline, inject) else (not noticed or min(noticed) > symptom_window_s)
    restart, parts, resumed = restart_figures(timeline, inject.t)
    round_ = first_restart_round(timeline, inject.t)
    detect = detect_figure(timeline, inject, round_)
    lost = steps_lost(report)
    targets = inject.target_workers(timeline.info.num_workers)
    exits = [e for e in timeline.of(ExitEvent) if e.t >= inject.t and e.worker in targets]
    sigterm_noticed, exit_after_noticed = sigterm_figures(timeline, inject)
    codes_before, codes_after = job_exit_codes(timeline, inject)
    heal_after = None
    if window is not None and window.heal is not None:
        first = next((s for s in timeline.of(StepEvent) if s.t > window.heal.t), None)
        heal_after = (
            Figure.of(first.t - window.heal.t, "heal -> first step after it")
            if first
            else Figure.missing("no step after the heal")
        )
    return RunMeasures(
        **base,
        detection=detection,
        detect_s=detect,
        inject_s=(
            Figure.of(inject.completed_t - inject.t, "the inject's command sent -> done")
            if inject.completed_t >= inject.t
            else Figure.missing("the inject did not say when it was done")
        ),
        exit_lag=exit_lags(timeline, inject),
        sigterm_noticed_s=sigterm_noticed,
        exit_after_sigterm_noticed_s=exit_after_noticed,
        restart_after_s=(
            Figure.of(
                round_[0].t - inject.t, "fault -> the runner's restart (restart: all waits for every worker to exit)"
            )
            if round_
            else Figure.missing("no restart")
        ),
        hang=hang,
        restart_s=restart,
        restart_parts=parts,
        steps_lost=(
            Figure.of(lost, "last step before the restart - the step restored")
            if lost is not None
            else Figure.missing("no restart, or no step before it")
        ),
        target_exit_code=exits[0].exit_code if exits else None,
        exit_codes=codes_before,
        exit_codes_after_restart=codes_after,
        target_done=any(
            d.worker in targets and inject.t <= d.t <= (exits[0].t if exits else float("inf"))
            for d in timeline.of(DoneEvent)
        ),
        resumed_step=resumed,
        start_after_heal_s=heal_after or Figure.missing("the fault was not healed"),
        drift=drift(timeline, verdicts.get("matches_uninterrupted", ABSENT)),
    )


def verdict_of(report: Report, check: str) -> Verdict | None:
    return next((v for v in report.verdicts if v.check == check), None)
