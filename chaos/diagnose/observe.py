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
import re
import time
from dataclasses import dataclass, field

from chaos.diagnose.logs import WorkerLog, worker_index
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
    lines: list[Evidence] = field(default_factory=list)  # this generation's own lines
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
    lines: list[Evidence]  # every line, for the patterns of scenario signatures

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
    r"^(?:[\w.]+\.)?(?P<cls>[A-Z]\w*(?:Error|Exception))(?:\(\))?(?::\s?(?P<msg>.*))?$"
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
_ERROR_PHRASES = re.compile(
    r"failed to connect to all addresses|Socket closed|Connection reset by peer|Connection refused|"
    r"Deadline Exceeded|stopped sending heartbeats|heartbeat timeout|Broken pipe|OS Error|Connection timed out",
    re.IGNORECASE,
)
def _severity(levels: str) -> re.Pattern:
    """A TF C++ log line of those levels: ``2026-11-25 09:18:55.85: E external/x.cc:1]``
    (TF 2.x), ``E tensorflow/core/x.cc:1]`` (TF 1.x), ``E1125 09:18:55.85 42 x.cc:1]`` (absl)."""
    return re.compile(rf"^(?:\d{{4}}-\d\d-\d\d[T ][\d:.,]+Z?:?\s*)?(?:[{levels}]\d{{4}} |[{levels}]\s+(?:\d+\s+)?\S+\.(?:cc|h):\d+\])")


_WARN_OR_WORSE = _severity("WEF")
_SEVERE = _severity("EF")
_EXIT_PATTERNS = [
    re.compile(r"command terminated with exit code (?P<code>\d+)", re.IGNORECASE),
    re.compile(r"\bexit(?:ed)?(?: with)? (?:code|status)[:= ]\s*(?P<code>\d+)", re.IGNORECASE),
    re.compile(r"^\s*Exit Code:\s+(?P<code>\d+)", re.IGNORECASE),
]
_OOM = re.compile(r"\bOOMKilled\b|Out of memory: Killed process|oom-kill", re.IGNORECASE)
_SIGNAL_EXITS = [
    (re.compile(r"^\s*Killed\s*$|terminated by signal (?:SIGKILL|9)\b|signal: killed", re.IGNORECASE), 137),
    (re.compile(r"Aborted \(core dumped\)|terminated by signal (?:SIGABRT|6)\b", re.IGNORECASE), 134),
]
# Lines a worker prints last while it waits for its peers at bring-up.
_HANG = re.compile(
    r"Started server with target:|Waiting for \d+/\d+ tasks to connect|Example stragglers:|"
    r"CreateSession still waiting for response from worker|still waiting for response from|"
    r"Waiting for the cluster, timeout|Waiting for model to be ready",
    re.IGNORECASE,
)
_KERAS_STEP_TIME = re.compile(r"\b(?P<value>\d+(?:\.\d+)?)(?P<unit>ms|s|us)/step\b")
_ISO_TIME = re.compile(r"^(?:\[[^\]]*\]\s*)?(?P<date>\d{4}-\d\d-\d\d)[T ](?P<time>\d\d:\d\d:\d\d)(?P<frac>[.,]\d+)?")
_ABSL_EPOCH = re.compile(r"^[IWEF]0000 00:00:(?P<seconds>\d{9,}\.\d+)")
_ABSL_TIME = re.compile(r"^[IWEF](?P<month>\d\d)(?P<day>\d\d) (?P<time>\d\d:\d\d:\d\d)(?P<frac>\.\d+)?")


def line_time(text: str) -> float | None:
    """Seconds since the epoch from the line's own timestamp (read as UTC), if it has one."""
    match = _ISO_TIME.match(text)
    if match:
        try:
            stamp = time.strptime(f"{match['date']} {match['time']}", "%Y-%m-%d %H:%M:%S")
        except ValueError:
            return None
    else:
        epoch = _ABSL_EPOCH.match(text)
        if epoch:  # absl before InitializeLog: "I0000 00:00:1795598333.208476"
            return float(epoch["seconds"])
        match = _ABSL_TIME.match(text)
        if not match:
            return None
        try:  # absl omits the year: only differences within one log are used
            stamp = time.strptime(f"2000-{match['month']}-{match['day']} {match['time']}", "%Y-%m-%d %H:%M:%S")
        except ValueError:
            return None
    frac = float("0." + match["frac"][1:]) if match["frac"] else 0.0
    return calendar.timegm(stamp) + frac


def _exception(text: str) -> tuple[str, str] | None:
    core = _PREFIX.sub("", text.strip(), count=1).strip()
    match = _EXCEPTION.match(core) or _REPORTED.search(core)
    if match:
        return match["cls"], match["msg"] or ""
    return None


def _status(text: str) -> tuple[str, str] | None:
    """A TF or gRPC status on a log line, as the error class Python would raise for it."""
    # a status in words ("Internal: ...") is only read where TF prints statuses, not in any sentence
    statusy = bool(_WARN_OR_WORSE.match(text) or re.search(r"status|StartAbort|Abort", text, re.IGNORECASE))
    errorish = statusy or "error" in text.lower()
    match = _GRPC_DETAIL.search(text)
    if match and int(match["code"]) in GRPC_CODES:
        return STATUS_CLASSES[GRPC_CODES[int(match["code"])]], match["msg"]
    match = _STATUS.search(text)
    if match and errorish:
        return STATUS_CLASSES[match["code"]], match["msg"]
    match = _STATUS_WORDS.search(text)
    if match and statusy:
        return STATUS_CLASSES[match["code"].upper().replace(" ", "_")], match["msg"]
    if _SEVERE.match(text) and _ERROR_PHRASES.search(text):
        return "", _PREFIX.sub("", text.strip(), count=1)
    return None


def _exit(text: str) -> tuple[int | None, bool] | None:
    for pattern in _EXIT_PATTERNS:
        match = pattern.search(text)
        if match:
            return int(match["code"]), bool(_OOM.search(text))
    if _OOM.search(text):
        return None, True
    for pattern, code in _SIGNAL_EXITS:
        if pattern.search(text):
            return code, False
    return None


def observe(log: WorkerLog) -> WorkerObservations:
    """Every observation in one worker's log, by generation."""
    generations = [Generation()]
    lines: list[Evidence] = []
    pending: dict | None = None  # an exception whose message may go on over the next lines
    last_t: float | None = None

    def flush() -> None:
        nonlocal pending
        if pending is not None:
            generations[-1].add_error(ErrorSeen(pending["cls"], pending["msg"], pending["t"], pending["evidence"]))
            pending = None

    for i, text in enumerate(log.lines):
        evidence = Evidence(log.where(i), log.name, text)
        lines.append(evidence)
        if not text.strip():
            continue
        generations[-1].lines.append(evidence)
        event = parse_line(text, log.name, 0.0)
        t = event.t if not isinstance(event, LogLine) and event.t else line_time(text)
        gen = generations[-1]
        if t is not None:
            gen.first_t = t if gen.first_t is None else gen.first_t
            gen.last_t = t
            last_t = t
        else:
            t = last_t  # a line without a stamp came after the last stamped one
        if pending is not None:
            goes_on = not NEW_RECORD.match(text) and not _exit(text) and not _HANG.search(text)
            if isinstance(event, LogLine) and goes_on and pending["lines"] < MAX_MESSAGE_LINES:
                pending["msg"] += "\n" + text
                pending["lines"] += 1
                continue
            flush()
        if not isinstance(event, LogLine):
            _event(event, Evidence(evidence.where, log.name, describe(event)), generations)
            continue
        _text_line(text, t, evidence, generations[-1])
        found = _exception(text)
        if found:
            pending = {"cls": found[0], "msg": found[1], "t": t, "evidence": evidence, "lines": 0}
    flush()
    generations = [g for g in generations if g.steps or g.errors or g.exits or g.hang_lines or g.start or g.step_ms]
    return WorkerObservations(log.name, worker_index(log.name), generations or [Generation()], lines)


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


def _text_line(text: str, t: float | None, evidence: Evidence, gen: Generation) -> None:
    if _HANG.search(text):
        gen.hang_lines.append((t, evidence))
    status = _status(text)
    if status and not _exception(text):
        gen.add_error(ErrorSeen(status[0], status[1], t, evidence))
    exited = _exit(text)
    if exited:
        gen.add_exit(ExitSeen(exited[0], exited[1], evidence, t))
    match = _KERAS_STEP_TIME.search(text)
    if match:
        scale = {"ms": 1.0, "s": 1000.0, "us": 0.001}[match["unit"]]
        gen.step_ms.append(float(match["value"]) * scale)
