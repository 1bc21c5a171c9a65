"""The event contract between workers, the runner and the checks.

A worker prints one JSON object per line on stdout; anything else it prints is a
log line. The runner adds its own events (inject, heal, exit, restart, phase).
Everything is parsed here, at the boundary, into typed values: nothing downstream
handles raw dicts. This module imports nothing heavy: the worker harness (inside
the TF image) and the runner (on the host) share it.
"""

from __future__ import annotations

import functools
import json
import time
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar

RUNNER = "runner"


# One encoder for every line: json.dumps with options builds a new one per call (a few us an event).
_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"))


@functools.lru_cache(maxsize=None)  # noqa: UP033 -- functools.cache is 3.9+; the agent runs in a job's Python, 3.8 too
def _wire_fields(cls: type) -> tuple[str, ...]:
    """The names of the fields ``cls`` prints, in declaration order."""
    return tuple(f.name for f in fields(cls) if f.metadata.get("wire", True))


@dataclass(frozen=True)
class SourceLine:
    """The log line a reader found an event in: ``where`` (file:line), the log's name, its text."""

    where: str
    log: str
    text: str


@dataclass(frozen=True)
class Event:
    """Base of every event. ``source`` is ``worker-N`` or ``runner`` (read from a user's log by
    ``chaos diagnose``: the log's name when it gives no index)."""

    kind: ClassVar[str] = "event"
    t: float
    source: str
    # The line ``chaos diagnose`` read this event from (None for a worker's or the runner's own):
    # the reader's, so off the wire and out of equality. Not kw_only (Python 3.10): the agent runs
    # in a job's Python, 3.8 too; so an event's own fields are given by keyword.
    evidence: SourceLine | None = field(default=None, compare=False, metadata={"wire": False})

    @property
    def worker(self) -> int | None:
        """The worker index for worker events, None for runner events (and a log named otherwise)."""
        index = self.source[len("worker-") :]
        return int(index) if self.source.startswith("worker-") and index.isdecimal() else None

    def to_dict(self) -> dict[str, Any]:
        # A flat copy, not dataclasses.asdict: the agent prints an event per training step, and
        # asdict's recursive deep copy was most of the cost of printing one (docs/notebook/agent.md).
        # Fields are plain values, lists and dicts of them; a field with metadata wire=False stays
        # off the wire.
        out: dict[str, Any] = {"event": self.kind}
        for f in _wire_fields(type(self)):
            value = getattr(self, f)
            out[f] = value.copy() if isinstance(value, (list, dict)) else value
        return out

    def to_json(self) -> str:
        return _JSON.encode(self.to_dict())


def _scalar_json(value: Any) -> str:
    """``value`` as ``_JSON`` writes it: the plain types by hand (float.__repr__, not repr: a NumPy
    float64 is a float whose repr names NumPy), anything else through the encoder."""
    if value is None or value is True or value is False:
        return "null" if value is None else "true" if value else "false"
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "Infinity" if value > 0 else "-Infinity"
        return float.__repr__(value)
    if isinstance(value, int):
        return int.__repr__(value)
    return _JSON.encode(value)


class LineTemplate:
    """The JSON line of one event class whose fields are the defaults but for ``varying`` (and
    ``fixed``, the same for every line): the same text as ``cls(...).to_json()`` (a unit test
    holds them equal), with no event built. The agent prints a step event per training step of
    a custom loop: building one and encoding it cost about half of the agent's time a step
    (docs/notebook/agent.md)."""

    def __init__(self, cls: type[Event], varying: tuple[str, ...], **fixed: Any) -> None:
        defaults: dict[str, Any] = {"event": cls.kind}
        for f in fields(cls):
            if f.name in _wire_fields(cls) and f.name not in varying:
                defaults[f.name] = fixed[f.name] if f.name in fixed else _default(f)
        self.varying = frozenset(varying)
        self._order: list[str] = []  # the varying names, in the line's order
        self._text: list[str] = [""]  # the constant text before, between and after them
        for i, name in enumerate(sorted({*defaults, *varying})):
            self._text[-1] += ("," if i else "{") + _JSON.encode(name) + ":"
            if name in self.varying:
                self._order.append(name)
                self._text.append("")
            else:
                self._text[-1] += _JSON.encode(defaults[name])
        self._text[-1] += "}"

    def line(self, values: dict[str, Any]) -> str:
        """The line for these values of the varying fields (every one of them)."""
        text = self._text
        parts = [text[0]]
        for i, name in enumerate(self._order):
            parts.append(_scalar_json(values[name]))
            parts.append(text[i + 1])
        return "".join(parts)


def _default(f) -> Any:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    raise TypeError(f"field {f.name} has no default: name it in varying or fixed")


# --- worker events ----------------------------------------------------------


@dataclass(frozen=True)
class StartEvent(Event):
    """The worker started: versions and an environment fingerprint."""

    kind: ClassVar[str] = "start"
    tf_version: str = ""
    keras_version: str = ""
    python_version: str = ""
    # name -> value: package versions, selected env vars, image id, ...
    fingerprint: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RestoredEvent(Event):
    """Training resumed from a checkpoint: ``epoch``/``step`` are where it resumes."""

    kind: ClassVar[str] = "restored"
    epoch: int = 0
    step: int = 0
    checkpoint: str = ""
    weights_digest: str = ""
    # The job's integer counters as restored (CheckpointEvent.job_counters, .job_counter_parts).
    job_counters: dict[str, int] = field(default_factory=dict)
    job_counter_parts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class StepEvent(Event):
    """One training step finished. ``step`` is the global step count (1-based)."""

    kind: ClassVar[str] = "step"
    epoch: int = 0
    step: int = 0
    loss: float = 0.0  # mean over all workers (all-reduced)
    local_loss: float = 0.0  # this worker's own batch
    batch_digest: str = ""  # digest of the batch this worker consumed
    dropout_mask: str = ""  # hash of the dropout mask this worker drew ('' without dropout)
    weights_digest: str = ""  # weights after this step; the harness fills it on a run's first step
    # Every weight finite after this step (None: not reported). The loss alone cannot
    # tell: with TF's oneDNN fused Dense+ReLU a NaN weight gives a finite loss.
    weights_finite: bool | None = None
    # One per replica when the worker runs several (MirroredStrategy); empty otherwise.
    replica_batch_digests: list[str] = field(default_factory=list)
    replica_local_losses: list[float] = field(default_factory=list)
    # False when the job's step gave no loss (a custom loop whose train step returns none,
    # seen by the agent): loss and local_loss are then NaN placeholders, not a NaN loss.
    loss_reported: bool = True
    # Read from a plain log line by the scenario's progress pattern, not reported as an event.
    logged: bool = False


@dataclass(frozen=True)
class EpochEndEvent(Event):
    kind: ClassVar[str] = "epoch_end"
    epoch: int = 0
    step: int = 0
    loss: float = 0.0


@dataclass(frozen=True)
class CheckpointEvent(Event):
    kind: ClassVar[str] = "checkpoint"
    epoch: int = 0
    step: int = 0
    path: str = ""
    # The job's own step counter at the save (a CheckpointManager's step_counter, or a
    # global_step variable it checkpoints), beside ``step``, the steps it trained; -1: none.
    job_step: int = -1
    # The job's integer counters (scalar integer variables at the checkpoint's top, by name, but
    # save_counter) as this worker reads them at the save, from the agent on a custom loop.
    job_counters: dict[str, int] = field(default_factory=dict)
    # On-read counters aggregated by SUM: this worker's own part (the job reads the sum of every
    # worker's part; reading the sum is a collective, which the agent never runs).
    job_counter_parts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class DoneEvent(Event):
    kind: ClassVar[str] = "done"
    epoch: int = 0
    step: int = 0
    weights_digest: str = ""
    job_step: int = -1  # the job's own step counter at the end (CheckpointEvent.job_step)


@dataclass(frozen=True)
class ErrorEvent(Event):
    kind: ClassVar[str] = "error"
    error_class: str = ""  # fully qualified, e.g. tensorflow.python.framework.errors_impl.UnavailableError
    message: str = ""


@dataclass(frozen=True)
class CommandEvent(Event):
    """A worker applied a runner command (``chaos.worker.control``)."""

    kind: ClassVar[str] = "command"
    command: str = ""
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class LogLine(Event):
    """A non-JSON line a worker printed (stdout or stderr)."""

    kind: ClassVar[str] = "log"
    text: str = ""


# --- runner events ----------------------------------------------------------


@dataclass(frozen=True)
class PhaseEvent(Event):
    """The runner entered a phase: bring_up, training, fault, recover, teardown."""

    kind: ClassVar[str] = "phase"
    phase: str = ""


@dataclass(frozen=True)
class InjectEvent(Event):
    """A fault was injected: ``t`` when the runner acted, ``completed_t`` when
    the inject call returned (the fault has reached the cluster by then)."""

    kind: ClassVar[str] = "inject"
    fault: str = ""  # registered fault name
    target: str = ""  # e.g. worker-1, "worker-0,worker-1", or cluster
    params: dict[str, Any] = field(default_factory=dict)
    completed_t: float = 0.0

    def target_workers(self, num_workers: int) -> list[int]:
        """The worker indices this fault acts on (every worker for ``cluster``)."""
        names = [n for n in self.target.split(",") if n.startswith("worker-")]
        if not names:
            return list(range(num_workers))
        return [int(n.split("-", 1)[1]) for n in names]


@dataclass(frozen=True)
class HealEvent(Event):
    kind: ClassVar[str] = "heal"
    fault: str = ""
    target: str = ""


@dataclass(frozen=True)
class ExitEvent(Event):
    """A worker container exited (``source`` is the worker)."""

    kind: ClassVar[str] = "exit"
    exit_code: int | None = 0  # None: a log line said the worker went away but gave no code (chaos diagnose)
    oom_killed: bool = False
    reason: str = ""  # why its orchestrator says it went away: "evicted", "preempted" ... ("" for the runner's)


@dataclass(frozen=True)
class StopEvent(Event):
    """The runner is stopping a worker's container that is still running, to restart it
    (``source`` is the worker): its exit, and what it prints from now on, are the runner's doing,
    not a failure's. A reader of its log alone (``chaos diagnose``) can tell them apart by it."""

    kind: ClassVar[str] = "stop"
    reason: str = ""


@dataclass(frozen=True)
class RestartEvent(Event):
    """A worker container was (re)started (``source`` is the worker): by the runner, or by the
    orchestrator's own restart policy (``by``: ``runner`` / ``orchestrator``; scenario field
    ``cluster.recovery.by``)."""

    kind: ClassVar[str] = "restart"
    reason: str = ""
    by: str = "runner"


# The topic of the agent's notice that it cannot see this job's training steps (its TF has
# no tf.function it can hook): the runner then judges the job as agent: none would.
STEPS_UNOBSERVED = "agent-steps-unobserved"


@dataclass(frozen=True)
class NoticeEvent(Event):
    """Something the runner noticed that the report must carry: a fault that
    landed after its target finished, a heal that failed, objects teardown
    could not remove. ``topic`` is a short key, ``text`` says it for a person."""

    kind: ClassVar[str] = "notice"
    topic: str = ""
    text: str = ""


@dataclass(frozen=True)
class AddressEvent(Event):
    """Where a worker's container came up on the run's network (runner event):
    so the proxy's "first client from HOST" lines name which task reached a link,
    and on a multi-node backend which node it runs on."""

    kind: ClassVar[str] = "address"
    task: str = ""  # "worker-1"
    address: str = ""  # its IP on the run's network
    node: str = ""  # the node it runs on, where a backend has several (a swarm node's host name)


@dataclass(frozen=True)
class PlanEvent(Event):
    """What a worker is about to train, said when training begins (by the agent
    at ``fit``'s train begin, or a custom loop's ``report.plan``), so the runner
    knows the final step and the save interval without the scenario declaring
    them. 0 means unknown; ``initial_epoch`` is the caller's, before any restore."""

    kind: ClassVar[str] = "plan"
    epochs: int = 0
    steps_per_epoch: int = 0
    total_steps: int = 0
    initial_epoch: int = 0
    save_every_steps: int = 0  # steps between checkpoints (0: none or unknown)
    checkpoint_dir: str = ""  # where the backups go (BackupAndRestore's backup_dir)
    weights_digest: str = ""  # the weights training begins from (restored ones after a restore)
    local_batch: int = 0  # this worker's batch per step (0: unknown)


EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (
        StartEvent,
        RestoredEvent,
        StepEvent,
        EpochEndEvent,
        CheckpointEvent,
        DoneEvent,
        ErrorEvent,
        CommandEvent,
        LogLine,
        PhaseEvent,
        InjectEvent,
        HealEvent,
        ExitEvent,
        StopEvent,
        RestartEvent,
        NoticeEvent,
        AddressEvent,
        PlanEvent,
    )
}


def event_from_dict(data: dict[str, Any]) -> Event:
    """Build a typed event; unknown keys are ignored, unknown kinds raise ValueError."""
    kind = data.get("event")
    cls = EVENT_TYPES.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise ValueError(f"unknown event kind {kind!r}; valid: {sorted(EVENT_TYPES)}")
    names = set(_wire_fields(cls))  # a line cannot set a reader's field
    return cls(**{k: v for k, v in data.items() if k in names})


def parse_line(line: str, source: str, t: float | None = None) -> Event:
    """Parse one line a worker printed: a JSON event, or else a log line.

    ``source`` and ``t`` are authoritative when the line carries none (log
    lines); a JSON event carries its own ``t`` stamped by the worker.
    """
    stripped = line.strip()
    now = time.time() if t is None else t
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and data.get("event") in EVENT_TYPES:
            data.setdefault("t", now)
            data["source"] = data.get("source") or source
            try:
                return event_from_dict(data)
            except (TypeError, ValueError):
                pass
    return LogLine(t=now, source=source, text=line.rstrip("\n"))
