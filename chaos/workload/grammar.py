"""The one grammar of a worker's plain log lines, read the same way by a run of a
user's job without the agent (``chaos.workload.logparse``: its errors become the
timeline's ``error`` events) and by ``chaos diagnose`` (``chaos.diagnose``: a
user's logs, read after the fact):

* ``exception_line``: a Python exception's line, ``tensorflow.python.framework.errors_impl.UnavailableError:
  <message>`` (its class, short and as printed, and the start of its message; the
  message goes on over the following lines until ``ends_message``);
* ``status_line``: a gRPC or TF status stated on a log line (``UNAVAILABLE: Socket
  closed``, ``{"grpc_message":...,"grpc_status":14}``, TF 1.x's ``Unavailable: ...``),
  as the error class Python would raise for it;
* ``exit_line``: an exit code, an OOM kill or an orchestrator's word for a worker
  it took away (kubectl's, the kernel's, a shell's, mpirun's);
* ``line_time``: the line's own time stamp (ISO, kubectl ``--timestamps``, absl);
* ``unwrap``: the line without what a launcher or log collector put before it.

What each reader makes of a line is its own: the run's parser reads an exception
line only right after a traceback (a job may print ``ValueError: ...`` as text while
it trains) and reads no status or exit lines (the runner sees the exit itself);
diagnose reads an exception line anywhere (a pasted log has lost its tracebacks).
What a line says is read here, once.
"""

from __future__ import annotations

import calendar
import functools
import re
import time
from typing import NamedTuple

TRACEBACK = "Traceback (most recent call last):"
MAX_MESSAGE_LINES = 40  # an exception's message goes on over at most this many more lines
# A line that starts a new record ends a multi-line error message: a traceback,
# a TF C++ log line (I/W/E/F + date), a timestamped Python log line.
NEW_RECORD = re.compile(r"^(Traceback |[IWEF]\d{4} |\d{4}-\d\d-\d\d[ T]|\{)")


class ExceptionLine(NamedTuple):
    cls: str  # the class's own name: ``UnavailableError``
    message: str  # the message's first line ("" when the line has none)
    qualified: str  # the class as printed: ``tensorflow.python.framework.errors_impl.UnavailableError``


class StatusLine(NamedTuple):
    cls: str  # the error class Python raises for the status; "" for a failure stated with no status
    message: str


class ExitLine(NamedTuple):
    code: int | None  # None: the line says it went away, not with which code
    oom_killed: bool
    reason: str  # "evicted", "preempted", "restarted" ... when an orchestrator says why; else ""


# The class names' endings a Python exception's line has besides Error and Exception.
EXCEPTION_ENDINGS = ("Exit", "Interrupt", "Failure")
# A Python exception's line. The class ends in Error or Exception, or (as a job's
# traceback ends) Exit (SystemExit), Interrupt (KeyboardInterrupt) or Failure; TF 1.x
# prints ``NotFoundError (see above for traceback): ...``, some ``UnavailableError(): ...``.
_EXCEPTION = re.compile(
    r"^(?P<qualified>(?:[\w.]+\.)?(?P<cls>[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Failure)))(?:\(\))?"
    r"(?: \(see above for traceback\))?(?::\s?(?P<msg>.*))?$"
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


def without_prefix(text: str) -> str:
    """The line without its leading time stamps, log levels and logger names."""
    return _PREFIX.sub("", text.strip(), count=1)


def exception_line(text: str) -> ExceptionLine | None:
    """The Python exception the line states, after its prefixes (``without_prefix``):
    the whole line, or reported inside a longer one (``...: UnavailableError(): ...``)."""
    core = without_prefix(text).strip()
    match = _EXCEPTION.match(core)
    if match:
        return ExceptionLine(match["cls"], match["msg"] or "", match["qualified"])
    match = _REPORTED.search(core)
    if match:
        return ExceptionLine(match["cls"], match["msg"] or "", match["cls"])
    return None


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
GRPC_CODES = {
    1: "CANCELLED",
    2: "UNKNOWN",
    4: "DEADLINE_EXCEEDED",
    8: "RESOURCE_EXHAUSTED",
    10: "ABORTED",
    13: "INTERNAL",
    14: "UNAVAILABLE",
}
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
    return re.compile(
        rf"^(?:\d{{4}}-\d\d-\d\d[T ][\d:.,]+Z?:?\s*)?(?:[{levels}]\d{{4}} |[{levels}]\s+(?:\d+\s+)?\S+\.(?:cc|h):\d+\])"
    )


_WARN_OR_WORSE = _severity("WEF")
_SEVERE = _severity("EF")
# gRPC's Python client: "status = StatusCode.UNAVAILABLE"
_GRPC_PY_STATUS = re.compile(
    r"\bstatus = StatusCode\.(?P<code>[A-Z_]+)|\(StatusCode\.(?P<code2>[A-Z_]+), (?P<msg>[^)]*)\)"
)


def status_line(text: str) -> StatusLine | None:
    """A TF or gRPC status on a log line, as the error class Python would raise for it."""
    # a status in words ("Internal: ...") is only read where TF prints statuses, not in any sentence
    bare = without_prefix(text)
    low = text.lower()
    statusy = bool(_WARN_OR_WORSE.match(text) or "status" in low or "abort" in low or _STATUS_WORDS.match(bare))
    errorish = statusy or "error" in low
    match = _GRPC_DETAIL.search(text) if "grpc_" in text else None
    if match and int(match["code"]) in GRPC_CODES:
        return StatusLine(STATUS_CLASSES[GRPC_CODES[int(match["code"])]], match["msg"])
    match = _GRPC_PY_STATUS.search(text) if "StatusCode." in text else None
    if match and (match["code"] or match["code2"]) in STATUS_CLASSES:
        return StatusLine(STATUS_CLASSES[match["code"] or match["code2"]], match["msg"] or bare)
    match = _STATUS.search(text)
    if match and errorish:
        return StatusLine(STATUS_CLASSES[match["code"]], match["msg"])
    match = _STATUS_WORDS.search(text)
    if match and statusy:
        return StatusLine(STATUS_CLASSES[match["code"].upper().replace(" ", "_")], match["msg"])
    if _SEVERE.match(text) and _ERROR_PHRASES.search(text):
        return StatusLine("", bare)
    return None


_EXIT_PATTERNS = [
    re.compile(r"command terminated with exit code (?P<code>\d+)"),
    re.compile(r"\b[Ee]xit(?:ed)?(?: with)?(?: error| status)? (?:[Cc]ode|[Ss]tatus)[:= ]\s*(?P<code>\d+)"),
    re.compile(r"\b[Ee]xit_code[:= ]\s*(?P<code>\d+)"),
    re.compile(r"^\s*Exit Code:\s+(?P<code>\d+)"),
]
# Words without which no exit shape below can match: one cheap scan spares the rest.
_EXIT_WORDS = (
    "xit",
    "Kill",
    "kill",
    "OOM",
    "oom",
    "Out of memory",
    "signal",
    "Aborted",
    "Evict",
    "node was",
    "node had",
    "reempt",
    "lame workers",
    "Disruption",
    "BackOff",
    "Back-off",
    "replica(s) failed",
)
_OOM = re.compile(r"\bOOMKilled\b|Out of memory: Kill(?:ed)? process|oom-kill|OOM-kill")
_SIGNAL_EXITS = [
    (
        re.compile(
            r"(?<![A-Za-z])[Kk]illed\s*$|\b\d+\s+Killed\s+\S|terminated by signal (?:SIGKILL|9)\b|"
            r"[Ss]ignal: killed|exited on signal 9\b"
        ),
        137,
    ),
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


# YARN's ContainerExitStatus (org.apache.hadoop.yarn.api.records): the negative statuses a container
# ends with when YARN or its own application took it away, whatever its process would have exited with.
YARN_EXIT_STATUS = {
    -100: "aborted by YARN: released, or lost with its node",  # ABORTED
    -101: "its node's disks failed",  # DISKS_FAILED
    -102: "preempted",  # PREEMPTED
    -103: "killed by YARN for its virtual memory",  # KILLED_EXCEEDED_VMEM
    -104: "killed by YARN for its physical memory",  # KILLED_EXCEEDED_PMEM
    -105: "stopped by its application master",  # KILLED_BY_APPMASTER
    -106: "killed by the resource manager",  # KILLED_BY_RESOURCEMANAGER
    -107: "killed after its application completed",  # KILLED_AFTER_APP_COMPLETION
    -108: "killed by the container scheduler",  # KILLED_BY_CONTAINER_SCHEDULER
}
# The statuses of a container its own application stopped: the teardown of a job, never a cause.
YARN_STOPPED_BY_APP = frozenset({YARN_EXIT_STATUS[-105], YARN_EXIT_STATUS[-107]})
# A launcher's line about one task's container, which names the task: TonY's ApplicationMaster
# ("Container container_e54_..._000011 for task worker:5 finished with exitStatus -100.") and its
# session ("Job worker:5 exited with -105").
_TASK_EXIT = re.compile(
    r"\bfor task \w+:\d+ finished with exitStatus (?P<code>-?\d+)|\bJob \w+:\d+ exited with (?P<c2>-?\d+)\b"
)


def exit_line(text: str) -> ExitLine | None:
    """(exit code, OOM-killed, why it went away) a line states, if any."""
    if not any(word in text for word in _EXIT_WORDS):
        return None
    match = _TASK_EXIT.search(text) if "xited with" in text or "exitStatus" in text else None
    if match:
        code = int(match["code"] or match["c2"])
        return ExitLine(code, False, YARN_EXIT_STATUS.get(code, ""))
    for pattern in _EXIT_PATTERNS:
        match = pattern.search(text)
        if match:
            return ExitLine(int(match["code"]), bool(_OOM.search(text)), "")
    if _OOM.search(text):
        return ExitLine(None, True, "")
    for pattern, code in _SIGNAL_EXITS:
        if pattern.search(text):
            return ExitLine(code, False, "")
    for pattern, reason in _GONE:
        if pattern.search(text):
            return ExitLine(None, False, reason)
    return None


# Lines a worker prints last while it waits for its peers at bring-up.
WAITING = re.compile(  # case-sensitive: TF's own casings
    r"Started server with target:|Waiting for \d+/\d+ tasks to connect|Example stragglers:|"
    r"still waiting for response from|Waiting for the cluster, timeout|Waiting for model to be ready"
)


def ends_message(text: str) -> bool:
    """Whether this line (``unwrap``-ped) ends the message of the exception before it:
    a new record starts, or a line that says something of its own (an exit, a wait)."""
    return bool(NEW_RECORD.match(text) or exit_line(text) or WAITING.search(text))


# What launchers and log collectors put before a worker's own line: mpirun's
# --tag-output ("[1,0]<stderr>:"), a collector's "2023/10/26 12:12:05 ", quoting
# ("> "), FfDL's "135 | 1534166953117 | ". The line is read without them.
_OUTER = re.compile(
    r"^(?:\s*(?:\[\d+(?:,\d+)?\]<std(?:out|err)>:|\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+|>+ ?|\d+ \| \d+ \| ))+"
)


def unwrap(text: str) -> str:
    """The line without what a launcher or collector put before it."""
    if text[:1] not in "[0123456789> \t":
        return text
    match = _OUTER.match(text)
    return text[match.end() :] if match else text


# The leading ISO time stamp a line may have (what ``line_time`` reads first).
_LEADING_STAMP = re.compile(r"\d{4}-\d\d-\d\d[T ][\d:.,]+Z?:?\s*")


def after_stamp(text: str) -> str:
    """The line without its leading ISO time stamp: a long log repeats its lines with new stamps only."""
    stamp = _LEADING_STAMP.match(text) if text[:1].isdigit() else None
    return text[stamp.end() :] if stamp else text


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
