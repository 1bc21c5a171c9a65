"""What one worker's log shows, read line by line into typed observations:
errors, exits, steps, start fingerprints, hang lines, each with the line that
says it (the evidence shown to the user).

Three kinds of text are understood:

* JSON event lines of this framework's harness or agent (``chaos.events``);
* Python exceptions: ``tensorflow.python.framework.errors_impl.UnavailableError:
  <message>`` (after a traceback or logged on its own), the message going on
  over the following lines until a new record starts;
* TF's C++ log lines and kubectl's text: gRPC statuses (``UNAVAILABLE: Socket
  closed`` is an ``UnavailableError``), exit codes, OOM kills, the lines a
  worker stops at while it waits for its peers, Keras' ``ms/step``.
"""

from __future__ import annotations

import calendar
import functools
import re
import time
from dataclasses import dataclass, field

from chaos.diagnose.logs import WorkerLog, worker_index
from chaos.diagnose.shapes import SHAPES, error_class, shapes_in
from chaos.events import DoneEvent, ErrorEvent, ExitEvent, LogLine, RestartEvent, StartEvent, StepEvent, parse_line
from chaos.workload.logparse import NEW_RECORD

MAX_MESSAGE_LINES = 40


@dataclass(frozen=True)
class Evidence:
    """One line of the user's logs: where it is and what it says."""

    where: str  # file:line
    log: str  # the worker log's name
    text: str

    def shown(self, width: int = 160) -> str:
        text = " ".join(self.text.split())
        return f"{self.where}  {text[: width - 3] + '...' if len(text) > width else text}"


@dataclass(frozen=True)
class ErrorSeen:
    cls: str  # short class name; "" for an error line that names none
    message: str
    t: float | None
    evidence: Evidence


@dataclass(frozen=True)
class ExitSeen:
    code: int | None
    oom_killed: bool
    evidence: Evidence
    t: float | None = None
    reason: str = ""  # "evicted", "preempted", "restarted" ... when an orchestrator says why it went away


@dataclass(frozen=True)
class StepSeen:
    step: int
    t: float | None
    batch_digest: str
    evidence: Evidence
    replica_batch_digests: tuple[str, ...] = ()  # several replicas in one worker (MirroredStrategy)


@dataclass
class Generation:
    """One life of the worker process: a restart (or a new ``start``) begins the next."""

    steps: list[StepSeen] = field(default_factory=list)
    errors: list[ErrorSeen] = field(default_factory=list)
    exits: list[ExitSeen] = field(default_factory=list)
    hang_lines: list[tuple[float | None, Evidence]] = field(default_factory=list)
    step_ms: list[float] = field(default_factory=list)  # Keras' "Nms/step", when no step times are known
    first_t: float | None = None
    last_t: float | None = None
    fingerprint: dict[str, str] | None = None
    start: Evidence | None = None
    notable: list[Evidence] = field(default_factory=list)  # this generation's flagged lines (shapes, errors, exits, waits)
    done_t: float | None = None  # when it said training was done (the framework's own logs)
    redeployed: bool = False  # begun by the runner's redeploy: until its start, lines are the old process's

    def _aftermath(self, t: float | None) -> bool:
        """Lines of a process the run was done with: after it said training was
        done (a worker whose peer left first can fail its own shutdown with
        `Socket closed`), or the old process's last words after the runner's
        redeploy stopped it (they reach the log after the restart line on a busy
        machine). Neither says anything of the failure the run was about."""
        after_done = self.done_t is not None and t is not None and t > self.done_t
        return after_done or (self.redeployed and self.start is None)

    def add_error(self, error: "ErrorSeen") -> None:
        if not self._aftermath(error.t):
            self.errors.append(error)

    def add_exit(self, exit_: "ExitSeen") -> None:
        if not (self.redeployed and self.start is None):
            self.exits.append(exit_)


@dataclass
class WorkerObservations:
    name: str
    index: int | None  # the task index its name gives; 0 is the chief
    generations: list[Generation]
    log: WorkerLog | None = None  # every line, for the patterns of scenario signatures
    flagged: list[tuple[Evidence, tuple[str, ...]]] = field(default_factory=list)  # lines with known shapes (chaos.diagnose.shapes)

    def shaped(self, names) -> list[Evidence]:
        """The flagged lines that have any of these shapes."""
        wanted = set(names)
        return [e for e, found in self.flagged if wanted.intersection(found)]

    @property
    def texts(self) -> tuple[str, ...]:
        return self.log.lines if self.log is not None else ()

    def evidence(self, i: int) -> Evidence:
        assert self.log is not None
        return Evidence(self.log.where(i), self.name, self.log.lines[i])

    @property
    def lines(self) -> list[Evidence]:
        """Every line as evidence (built on demand: a big log has many)."""
        return [self.evidence(i) for i in range(len(self.texts))]

    @property
    def errors(self) -> list[ErrorSeen]:
        return [e for g in self.generations for e in g.errors]

    @property
    def exits(self) -> list[ExitSeen]:
        return [e for g in self.generations for e in g.exits]

    @property
    def steps(self) -> list[StepSeen]:
        return [s for g in self.generations for s in g.steps]

    @property
    def fingerprint(self) -> dict[str, str] | None:
        return next((g.fingerprint for g in self.generations if g.fingerprint is not None), None)


# --- line patterns ------------------------------------------------------------

_EXCEPTION = re.compile(
    r"^(?:[\w.]+\.)?(?P<cls>[A-Z]\w*(?:Error|Exception))(?:\(\))?(?: \(see above for traceback\))?(?::\s?(?P<msg>.*))?$"
)
# An exception reported inside a longer line: "... when processing closure: UnavailableError():Graph ..."
_REPORTED = re.compile(r"\b(?P<cls>[A-Z]\w*Error)\(\):\s*(?P<msg>.*)$")
# Prefixes before an exception or status: timestamps, log levels, logger names.
_PREFIX = re.compile(
    r"^(?:\d{4}-\d\d-\d\d[T ][\d:.,]+Z?:?\s*"  # ISO / kubectl --timestamps / python logging
    r"|[IWEF]\d{4} [\d:.]+\s+\d+\s+\S+\]\s*"  # absl: E1125 04:41:42.123456  123 file.cc:45]
    r"|[IWEF] \S+\.(?:cc|h):\d+\]\s*"  # short C++ form
    r"|(?:ERROR|WARNING|CRITICAL|FATAL|INFO)(?::[\w.]+:|\s*[-:])\s*"  # ERROR:root: / ERROR -
    r"|\[[^\]]{1,40}\]\s*"
    r")+"
)
_STATUS = re.compile(
    r"\b(?P<code>UNAVAILABLE|DEADLINE_EXCEEDED|RESOURCE_EXHAUSTED|INTERNAL|ABORTED|CANCELLED|"
    r"FAILED_PRECONDITION|NOT_FOUND|UNKNOWN|DATA_LOSS|PERMISSION_DENIED|INVALID_ARGUMENT)"
    r"(?::\s*|\s+)(?P<msg>\S.*)$"
)
# TF 1.x and early 2.x print a status in words: "Unavailable: Socket closed", "Resource exhausted: OOM ...".
_STATUS_WORDS = re.compile(
    r"\b(?P<code>Unavailable|Deadline [Ee]xceeded|Resource [Ee]xhausted|Internal|Aborted|Cancelled|"
    r"Failed [Pp]recondition|Not [Ff]ound|Data [Ll]oss|Permission [Dd]enied|Invalid [Aa]rgument):\s*(?P<msg>\S.*)$"
)
# gRPC's own detail: {"grpc_message":"Socket closed","grpc_status":14} (quoted, escaped, or bare keys)
_GRPC_DETAIL = re.compile(r'grpc_message\\?"?:\s*\\?"(?P<msg>[^"\\]+)\\?",\s*\\?"?grpc_status\\?"?:\s*(?P<code>\d+)')
GRPC_CODES = {1: "CANCELLED", 2: "UNKNOWN", 4: "DEADLINE_EXCEEDED", 8: "RESOURCE_EXHAUSTED", 10: "ABORTED", 13: "INTERNAL", 14: "UNAVAILABLE"}
STATUS_CLASSES = {
    "UNAVAILABLE": "UnavailableError",
    "DEADLINE_EXCEEDED": "DeadlineExceededError",
    "RESOURCE_EXHAUSTED": "ResourceExhaustedError",
    "INTERNAL": "InternalError",
    "ABORTED": "AbortedError",
    "CANCELLED": "CancelledError",
    "FAILED_PRECONDITION": "FailedPreconditionError",
    "NOT_FOUND": "NotFoundError",
    "UNKNOWN": "UnknownError",
    "DATA_LOSS": "DataLossError",
    "PERMISSION_DENIED": "PermissionDeniedError",
    "INVALID_ARGUMENT": "InvalidArgumentError",
}
# gRPC/TF failures a C++ log line can state with no status code.
_ERROR_PHRASES = re.compile(  # case-sensitive, in TF's and gRPC's casings: IGNORECASE costs 10x on long lines
    r"[Ff]ailed to connect to all addresses|[Ss]ocket closed|[Cc]onnection reset by peer|[Cc]onnection refused|"
    r"[Dd]eadline [Ee]xceeded|DEADLINE_EXCEEDED|stopped sending heartbeats|[Hh]eartbeat timeout|[Bb]roken pipe|"
    r"OS Error|[Cc]onnection timed out"
)
def _severity(levels: str) -> re.Pattern:
    """A TF C++ log line of those levels: ``2026-11-25 09:18:55.85: E external/x.cc:1]``
    (TF 2.x), ``E tensorflow/core/x.cc:1]`` (TF 1.x), ``E1125 09:18:55.85 42 x.cc:1]`` (absl)."""
    return re.compile(rf"^(?:\d{{4}}-\d\d-\d\d[T ][\d:.,]+Z?:?\s*)?(?:[{levels}]\d{{4}} |[{levels}]\s+(?:\d+\s+)?\S+\.(?:cc|h):\d+\])")


_WARN_OR_WORSE = _severity("WEF")
_SEVERE = _severity("EF")
_EXIT_PATTERNS = [
    re.compile(r"command terminated with exit code (?P<code>\d+)"),
    re.compile(r"\b[Ee]xit(?:ed)?(?: with)?(?: error| status)? (?:[Cc]ode|[Ss]tatus)[:= ]\s*(?P<code>\d+)"),
    re.compile(r"\b[Ee]xit_code[:= ]\s*(?P<code>\d+)"),
    re.compile(r"^\s*Exit Code:\s+(?P<code>\d+)"),
]
# Words without which no exit shape below can match: one cheap scan spares the rest.
_EXIT_WORDS = ("xit", "Kill", "kill", "OOM", "oom", "Out of memory", "signal", "Aborted", "Evict", "node was",
               "node had", "reempt", "lame workers", "Disruption", "BackOff", "Back-off", "replica(s) failed")
_OOM = re.compile(r"\bOOMKilled\b|Out of memory: Kill(?:ed)? process|oom-kill|OOM-kill")
_SIGNAL_EXITS = [
    (re.compile(r"(?<![A-Za-z])[Kk]illed\s*$|\b\d+\s+Killed\s+\S|terminated by signal (?:SIGKILL|9)\b|"
                r"[Ss]ignal: killed|exited on signal 9\b"), 137),
    (re.compile(r"Aborted \(core dumped\)|terminated by signal (?:SIGABRT|6)\b|exited on signal 6\b"), 134),
    (re.compile(r"exited on signal 15\b|terminated by signal (?:SIGTERM|15)\b"), 143),
]
# An orchestrator's or cloud's word for a worker it took away (no exit code in the line).
_GONE = [
    (re.compile(r"\bEvicted\b|The node (?:was low on resource|had condition)"), "evicted"),
    (re.compile(r"\b[Pp]reempted\b|PREEMPTED|lame workers found|PreemptionByScheduler|DisruptionTarget"), "preempted"),
    (re.compile(r"CrashLoopBackOff|Back-off restarting failed container|\bBackOff\b"), "restarted"),
    (re.compile(r"has failed because \d+ \w+ replica\(s\) failed"), "failed replica"),
]

# Lines a worker prints last while it waits for its peers at bring-up.
_HANG = re.compile(  # case-sensitive: TF's own casings
    r"Started server with target:|Waiting for \d+/\d+ tasks to connect|Example stragglers:|"
    r"still waiting for response from|Waiting for the cluster, timeout|Waiting for model to be ready"
)
# What launchers and log collectors put before a worker's own line: mpirun's
# --tag-output ("[1,0]<stderr>:"), a collector's "2023/10/26 12:12:05 ", quoting
# ("> "), FfDL's "135 | 1534166953117 | ". The line is read without them.
_OUTER = re.compile(
    r"^(?:\s*(?:\[\d+(?:,\d+)?\]<std(?:out|err)>:|\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+|>+ ?|\d+ \| \d+ \| ))+"
)
# gRPC's Python client: "status = StatusCode.UNAVAILABLE"
_GRPC_PY_STATUS = re.compile(r"\bstatus = StatusCode\.(?P<code>[A-Z_]+)|\(StatusCode\.(?P<code2>[A-Z_]+), (?P<msg>[^)]*)\)")
_KERAS_STEP_TIME = re.compile(r"\b(?P<value>\d+(?:\.\d+)?)(?P<unit>ms|s|us)/step\b")
_ISO_TIME = re.compile(r"^(?:\[[^\]]*\]\s*)?(?P<date>\d{4}-\d\d-\d\d)[T ](?P<time>\d\d:\d\d:\d\d)(?P<frac>[.,]\d+)?")
_ABSL_EPOCH = re.compile(r"^[IWEF]0000 00:00:(?P<seconds>\d{9,}\.\d+)")
_ABSL_TIME = re.compile(r"^[IWEF](?P<month>\d\d)(?P<day>\d\d) (?P<time>\d\d:\d\d:\d\d)(?P<frac>\.\d+)?")


@functools.lru_cache(maxsize=4096)
def _stamp(date: str, clock: str) -> float | None:
    try:
        return float(calendar.timegm(time.strptime(f"{date} {clock}", "%Y-%m-%d %H:%M:%S")))
    except ValueError:
        return None


def line_time(text: str) -> float | None:
    """Seconds since the epoch from the line's own timestamp (read as UTC), if it has one."""
    match = _ISO_TIME.match(text)
    if match:
        stamp = _stamp(match["date"], match["time"])
    else:
        epoch = _ABSL_EPOCH.match(text)
        if epoch:  # absl before InitializeLog: "I0000 00:00:1795598333.208476"
            return float(epoch["seconds"])
        match = _ABSL_TIME.match(text)
        if not match:
            return None
        # absl omits the year: only differences within one log are used
        stamp = _stamp(f"2000-{match['month']}-{match['day']}", match["time"])
    if stamp is None:
        return None
    frac = float("0." + match["frac"][1:]) if match["frac"] else 0.0
    return stamp + frac


def _core(text: str) -> str:
    """The line without what a launcher or collector put before it."""
    return _OUTER.sub("", text, count=1) if text[:1] in "[0123456789> \t" else text


def _exception(text: str) -> tuple[str, str] | None:
    core = _PREFIX.sub("", text.strip(), count=1).strip()
    match = _EXCEPTION.match(core) or _REPORTED.search(core)
    if match:
        return match["cls"], match["msg"] or ""
    return None


def _status(text: str) -> tuple[str, str] | None:
    """A TF or gRPC status on a log line, as the error class Python would raise for it."""
    # a status in words ("Internal: ...") is only read where TF prints statuses, not in any sentence
    bare = _PREFIX.sub("", text.strip(), count=1)
    low = text.lower()
    statusy = bool(_WARN_OR_WORSE.match(text) or "status" in low or "abort" in low or _STATUS_WORDS.match(bare))
    errorish = statusy or "error" in low
    match = _GRPC_DETAIL.search(text) if "grpc_" in text else None
    if match and int(match["code"]) in GRPC_CODES:
        return STATUS_CLASSES[GRPC_CODES[int(match["code"])]], match["msg"]
    match = _GRPC_PY_STATUS.search(text) if "StatusCode." in text else None
    if match and (match["code"] or match["code2"]) in STATUS_CLASSES:
        return STATUS_CLASSES[match["code"] or match["code2"]], match["msg"] or bare
    match = _STATUS.search(text)
    if match and errorish:
        return STATUS_CLASSES[match["code"]], match["msg"]
    match = _STATUS_WORDS.search(text)
    if match and statusy:
        return STATUS_CLASSES[match["code"].upper().replace(" ", "_")], match["msg"]
    if _SEVERE.match(text) and _ERROR_PHRASES.search(text):
        return "", bare
    return None


def _exit(text: str) -> tuple[int | None, bool, str] | None:
    """(exit code, OOM-killed, why it went away) a line states, if any."""
    if not any(word in text for word in _EXIT_WORDS):
        return None
    for pattern in _EXIT_PATTERNS:
        match = pattern.search(text)
        if match:
            return int(match["code"]), bool(_OOM.search(text)), ""
    if _OOM.search(text):
        return None, True, ""
    for pattern, code in _SIGNAL_EXITS:
        if pattern.search(text):
            return code, False, ""
    for pattern, reason in _GONE:
        if pattern.search(text):
            return None, False, reason
    return None


# The gate: a line worth the reader's patterns contains one of these (lower
# case). Most lines of a long log (INFO lines, progress bars without a step
# time) contain none and cost one scan; chaos/diagnose's unit tests check that
# every shape the reader and the field catalogue know passes it.
GATE_WORDS = (
    "error", "exception", "traceback", "exit", "kill", "oom", "memory", "alloc", "nccl", "fail", "unavailable",
    "timeout", "timed out", "deadline", "refused", "reset", "socket", "closed", "abort", "exhausted", "nan",
    "inf ", "diverged", "evict", "preempt", "backoff", "terminat", "sigterm", "signal", "waiting", "started server",
    "straggler", "/step", "tf_config", "cluster", "not found", "no such", "denied", "checksum", "corrupt",
    "data loss", "sstable", "mismatch", "insufficient", "symbol", "shard", "down", "heartbeat", "barrier",
    "ready", "restart", "incarnation", "protobuf", "larger than", "rank", "stall", "core dump", "warn",
    "incompatible", "shape", "checkpoint", "ckpt", "lame", "status", "grpc", "connect", "low on resource",
    "disruption", "unhandled", "ibv_", "end of sequence", "out of range", "defined in job", "no worker",
    "task_type", "collective", "/job:", "invalid", "loss", "cuda", "restor", "libcu", "dynamic library",
) + tuple(sorted({word.lower() for shape in SHAPES for word in shape.words}))


def notable(text: str) -> bool:
    """Whether the reader looks at this line beyond its time stamp."""
    low = text.lower()
    return any(word in low for word in GATE_WORDS)


MAX_SAME_SHAPE = 3  # flagged lines kept per (shapes, text without digits): a long log repeats its errors


def _repeat_key(names: tuple[str, ...], text: str) -> tuple:
    return names, re.sub(r"[\d.:]+", "", text[:200])


def observe(log: WorkerLog) -> WorkerObservations:
    """Every observation in one worker's log, by generation. A line that
    passes no gate word (``notable``) is skipped: it cannot hold any shape read
    here, and a 100 MB log holds millions of them."""
    generations = [Generation()]
    flagged: list[tuple[Evidence, tuple[str, ...]]] = []
    repeats: dict[tuple, int] = {}
    pending: dict | None = None  # an exception whose message may go on over the next lines
    last_t: float | None = None

    def flush() -> None:
        nonlocal pending
        if pending is not None:
            generations[-1].add_error(ErrorSeen(pending["cls"], pending["msg"], pending["t"], pending["evidence"]))
            pending = None

    def flag(evidence: Evidence, names: tuple[str, ...]) -> None:
        key = _repeat_key(names, evidence.text)
        seen = repeats.get(key, 0)
        repeats[key] = seen + 1
        if seen < MAX_SAME_SHAPE:
            flagged.append((evidence, names))
            generations[-1].notable.append(evidence)

    for i, raw in enumerate(log.lines):
        if not raw or raw.isspace():
            continue
        is_json = raw[0] == "{" or (raw[0] in " \t" and raw.lstrip().startswith("{"))
        if not (is_json or pending is not None or notable(raw)):
            continue
        evidence = Evidence(log.where(i), log.name, raw)
        text = _core(raw)
        event = parse_line(text, log.name, 0.0) if is_json else None
        if isinstance(event, LogLine):
            event = None
        t = event.t if event is not None and event.t else line_time(text)
        gen = generations[-1]
        if t is not None:
            gen.first_t = t if gen.first_t is None else gen.first_t
            gen.last_t = t
            last_t = t
        else:
            t = last_t  # a line without a stamp came after the last stamped one
        if pending is not None:
            goes_on = not NEW_RECORD.match(text) and not _exit(text) and not _HANG.search(text)
            if event is None and goes_on and pending["lines"] < MAX_MESSAGE_LINES:
                pending["msg"] += "\n" + text
                pending["lines"] += 1
                names = shapes_in(text)
                if names:
                    flag(evidence, names)
                continue
            flush()
        if event is not None:
            _event(event, Evidence(evidence.where, log.name, describe(event)), generations)
            continue
        names = _text_line(text, t, evidence, generations[-1])
        if names:
            flag(evidence, names)
        found = _exception(text)
        if found:
            pending = {"cls": found[0], "msg": found[1], "t": t, "evidence": evidence, "lines": 0}
    flush()
    generations = [g for g in generations if g.steps or g.errors or g.exits or g.hang_lines or g.start or g.step_ms]
    return WorkerObservations(log.name, worker_index(log.name), generations or [Generation()], log, flagged)


def describe(event) -> str:
    """A JSON event line as a person reads it."""
    if isinstance(event, ErrorEvent):
        # TF's "Graph execution error:" lists the Python frames first; the cause comes after them
        kept = [
            line.strip() for line in event.message.splitlines()
            if line.strip() and not line.strip().startswith(("File ", "Detected at node", "Graph execution error"))
        ]
        message = " ".join(kept) or " ".join(event.message.split())
        return f"[event] {event.error_class.rsplit('.', 1)[-1]}: {message}"
    if isinstance(event, ExitEvent):
        return f"[event] exited {event.exit_code}" + (" (OOM-killed)" if event.oom_killed else "")
    if isinstance(event, StepEvent):
        return f"[event] step {event.step} (epoch {event.epoch}, loss {event.loss:.4g}, batch {event.batch_digest[:12] or '-'})"
    if isinstance(event, StartEvent):
        return f"[event] start: TF {event.tf_version}, Python {event.python_version}"
    return f"[event] {event.kind}"


REDEPLOY_AFTERMATH_S = 3.0


def _forget_redeploy(gen: Generation, restart_t: float) -> None:
    """This framework's runner redeploys workers to apply a configuration (its
    ``restart`` event says ``redeploy: ...``): it stops them without grace, so
    their exits and the errors the stop caused in its last seconds are the
    runner's doing, not the failure's. A user's logs have no such event."""
    since = restart_t - REDEPLOY_AFTERMATH_S
    gen.exits[:] = [e for e in gen.exits if e.t is None or e.t < since]
    gen.errors[:] = [e for e in gen.errors if e.t is None or e.t < since]


def _event(event, evidence: Evidence, generations: list[Generation]) -> None:
    gen = generations[-1]
    if isinstance(event, RestartEvent) and event.reason.startswith("redeploy"):
        _forget_redeploy(gen, event.t)
    restarted = isinstance(event, RestartEvent) or (isinstance(event, StartEvent) and gen.start is not None)
    if restarted and (gen.start or gen.steps or gen.errors or gen.exits or gen.hang_lines):
        redeploy = isinstance(event, RestartEvent) and event.reason.startswith("redeploy")
        generations.append(Generation(first_t=event.t, last_t=event.t, redeployed=redeploy))
        gen = generations[-1]
    if isinstance(event, StartEvent):
        gen.start = evidence
        gen.fingerprint = {"tf_version": event.tf_version, **event.fingerprint}
    elif isinstance(event, StepEvent):
        gen.steps.append(StepSeen(event.step, event.t, event.batch_digest, evidence, tuple(event.replica_batch_digests)))
    elif isinstance(event, ErrorEvent):
        short = event.error_class.rsplit(".", 1)[-1]
        # the traceback printed beside the event says the same: keep one
        if not any(e.cls == short and e.message[:80] == event.message[:80] for e in gen.errors):
            gen.add_error(ErrorSeen(short, event.message, event.t, evidence))
    elif isinstance(event, ExitEvent):
        gen.add_exit(ExitSeen(event.exit_code, event.oom_killed, evidence, event.t))
    elif isinstance(event, DoneEvent):
        gen.done_t = event.t


def _text_line(text: str, t: float | None, evidence: Evidence, gen: Generation) -> tuple[str, ...]:
    """Read one log line into ``gen``; the shapes it has (``chaos.diagnose.shapes``)."""
    names = shapes_in(text)
    hang = _HANG.search(text)
    if hang:
        gen.hang_lines.append((t, evidence))
    status = _status(text)
    exception = _exception(text)
    if status and not exception:
        gen.add_error(ErrorSeen(status[0], status[1], t, evidence))
    elif names and not exception:
        cls = error_class(names)  # a failure shape with no status: the CUDA driver's OOM, NCCL's WARN...
        if cls is not None:
            gen.add_error(ErrorSeen(cls, _PREFIX.sub("", text.strip(), count=1), t, evidence))
    exited = _exit(text)
    if exited:
        gen.add_exit(ExitSeen(exited[0], exited[1], evidence, t, exited[2]))
    if "/step" in text:
        match = _KERAS_STEP_TIME.search(text)
        if match:
            scale = {"ms": 1.0, "s": 1000.0, "us": 0.001}[match["unit"]]
            gen.step_ms.append(float(match["value"]) * scale)
    if names:
        return names
    if status or exception:
        return ("error",)
    if exited:
        return ("exit",)
    return ("waiting",) if hang else ()
