"""Root, cascade, teardown: which worker's line is the failure, which lines
are its consequences, and which exits are the kill that came after.

Pure functions over the observations (``chaos.diagnose.observe``), the same for
a live run's timeline, a report's logs and a user's kubectl dump. One failure
*cycle* per generation index: the first run is cycle 0, each restart begins
the next (the k-th generation of every worker; a ``restart: failed`` job's
workers that were not restarted stay in their first).

Each failure line of a cycle is one of:

* an **effect**: a peer's error (``UnavailableError``, ``DeadlineExceededError``,
  ``CancelledError``, ``AbortedError``, an error line of no class with a gRPC
  phrase) or any error whose message says another task caused it
  (``Collective ops is aborted by``, ``Error reported from /job:...``,
  ``remote target /job:...``, heartbeats, "unhealthy", "seems down");
* a **cause**: any other error (``IndexError``, ``JSONDecodeError``,
  ``ResourceExhaustedError``...), or a kill (exit 137/134, an OOM kill, an
  eviction or preemption) with no error of its own before it.

The **root** is the first cause in time. A kill with no error of its own that
comes more than KILL_MARGIN_S after the cycle's first failure line, and that no
earlier line blames, is **teardown** (the runner's or the orchestrator's kill of
a job that had already failed), and so is every kill in a generation that only
waited for its peers (killing a hung bring-up is the operator's cure) and every
exit after this framework's own teardown line. Every effect, and every later
cause of another worker, is **cascade**.

When no line states a cause (a network fault, a pause, a partition: every line
is a peer's error) the root worker is at best the one the first effect names
(``remote target /job:worker/replica:0/task:1``), said as *likely*, never as
sure: a link cut into worker 0 and a worker 1 that stopped answering look the
same from the lines. When every worker raised the same error of its own, no
worker is the root (a fault that touches all: a shared backup, a config, an
image).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace

from chaos.diagnose.generations import Generation
from chaos.diagnose.logs import worker_index
from chaos.diagnose.missing import who_is_missing
from chaos.diagnose.observations import Evidence, WorkerObservations
from chaos.diagnose.read_events import error_cls, when
from chaos.diagnose.shapes import shapes_in
from chaos.events import ErrorEvent, ExitEvent
from chaos.fingerprints import diff, ordered
from chaos.workload.grammar import YARN_EXIT_STATUS, YARN_STOPPED_BY_APP

ROOT, CASCADE, TEARDOWN = "root", "cascade", "teardown"
EFFECT_CLASSES = frozenset({"UnavailableError", "DeadlineExceededError", "CancelledError", "AbortedError", ""})
# A message that says another task caused it, whatever its class.
_EFFECT_WORDS = re.compile(
    r"Collective ops is aborted by|Error reported from /job|remote target /job|[Ss]ocket closed|"
    r"[Cc]onnection reset|failed to connect to all addresses|[Cc]onnection refused|Deadline Exceeded|"
    r"DEADLINE_EXCEEDED|[Hh]eartbeat|unhealthy|seems down|is down|leader task was preempted|The tasks have crashed|"
    r"[Bb]roken pipe|stopped sending|Error received from peer|grpc_status|\bCANCELLED\b|"
    # Horovod's stall inspector: the others wait for a rank
    r"missing ranks|Stalled ranks|Stalled ops|ready ranks|waiting for remainder of ranks|by subset of ranks|"
    # the coordination service failing every task for another one's state (a duplicate task, a restarted one)
    r"set to ERROR|different incarnation|unexpectedly tried to connect|Barrier failed|"
    # mpirun's daemon lost the daemon of another node (Open MPI's ORTE, PRRTE since Open MPI 5)
    r"lost communication with a remote daemon"
)
# The shapes of an error line that is only a return code passed up the stack, with no message of its own
# (NCCL's "NCCL INFO init.cc:950 -> 2"): a cause only when no line of the cycle states one (a peer's
# NCCL WARN says what failed; the other ranks' init then returns the error too).
WEAK_CAUSE_SHAPES = frozenset({"nccl_error_chain"})
# TF's words about the coordination leader, not an exit of this worker.
_NOT_AN_EXIT = re.compile(r"leader task was preempted|Either the leader")
# An own cause even in a peer-error class: the memory ran out here.
_OWN_WORDS = re.compile(r"\bOOM\b|[Oo]ut of memory|Resource exhausted|RESOURCE_EXHAUSTED")
# A task named in a line; one followed by /device: is the op's own device, not a peer.
_TASK_ANY = re.compile(r"/job:(?P<job>\w+)/(?:replica:\d+/)?task:(?P<task>\d+)\b")
# The lines TF prints right after an error to say which peer it came from.
_PEER_LINE = re.compile(
    r"remote target /job:|Error reported from /job:|send_device=\"/job:|^\s*/job:\w+/replica:\d+/task:\d+\s*$"
)
# ORTE's (PRRTE's) report of the daemon it lost names that daemon's node two lines down, under the
# HNP's: "  Remote daemon: [[43015,0],20] on node tf-bert-...-worker-19" (within NODE_LINES).
_DAEMON_NODE = re.compile(r"Remote daemon\s*:\s*\S+ on node (?P<node>[\w.-]+)")
NEAR_LINES = 1  # TF prints the peer right on the next line; further down is the next record's
# The op a TF error came from, printed under it (TF 1.x ``[[Node: ... = _Recv[..., send_device="/job:ps/...
# task:0/cpu:0"]]``, TF 2.x ``[[{{node ...}}]]``): its device is where an own error (an OOM) ran, a
# _Recv's send_device the peer a receive lost. Within NODE_LINES: a status wrapped over two lines
# (TF 1.x's gRPC JSON) puts it on the third.
_NODE_LINE = re.compile(r"^\s*\[\[(?:Node:|\{\{node\b)")
NODE_LINES = 3
KILL_CODES = (137, 134)
# An orchestrator took the worker away (a kill from outside): a kubelet's eviction, a cloud's
# preemption, a YARN container aborted, lost with its node, preempted or killed for its memory.
GONE_REASONS = ("evicted", "preempted") + tuple(
    reason for reason in YARN_EXIT_STATUS.values() if reason not in YARN_STOPPED_BY_APP
)
# A kill this long after the cycle's first failure came after the job had failed:
# the runner notices a peer's exit within a second or two (measured: a peer's error 0.16 s before the killed
# worker's exit event), its restart kill of a hung job comes after the symptom timeout (30 s).
KILL_MARGIN_S = 5.0
# Peers' errors this close to the first one that name another origin: the lines cannot tell who was first.
BLAME_WINDOW_S = 1.0


@dataclass(frozen=True)
class Labelled:
    """One line of the logs and what it is in the failure."""

    role: str  # root, cascade, teardown
    worker: str  # the log's name
    what: str  # "exit 137", "UnavailableError: Socket closed"
    why: str
    evidence: Evidence
    t: float | None


@dataclass(frozen=True)
class Attribution:
    """One failure cycle: its root cause, its cascade and its teardown."""

    cycle: int  # 0: the first run; n: after the n-th restart
    failed: bool  # any failure line at all in this cycle
    root: Labelled | None  # the root-cause line (None: no line of its own states it)
    root_worker: str | None  # the worker the failure began at; None: no root worker, or cannot tell
    sure: bool  # False: the best the lines allow, with its doubt in ``untold``
    no_root: str = ""  # why no worker is the root, when none is
    cascade: tuple[Labelled, ...] = ()
    teardown: tuple[Labelled, ...] = ()
    untold: tuple[str, ...] = ()  # what the lines could not tell
    steps: int = 0  # step lines (events or Keras steps) in this cycle
    max_step: int | None = None  # the highest global step this cycle reached
    before_first_step: bool = False  # the root came before any step of its generation
    roots: tuple[Labelled, ...] = ()  # the root line, and the same error of the other workers when it is every worker's

    @property
    def cause(self) -> str:
        """The root cause as a key: the same cause in two cycles gives the same key (digits and
        addresses aside); '' without a root line."""
        if self.root is not None:
            return _key(self.root.what)
        if self.no_root:
            return "no root worker: " + _key(self.no_root)
        first = next((c for c in self.cascade if c.what), None)  # only peers' errors: the first one's words
        return "peers: " + _key(first.what) if first is not None and self.failed else ""


def _key(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"0x[0-9a-f]+|\d+", "N", text)).strip()[:160]


@dataclass(frozen=True)
class _Line:
    worker: WorkerObservations
    kind: str  # cause, effect, kill, exit
    what: str
    evidence: Evidence
    t: float | None
    order: int  # position in its own log (untimed lines keep their order)
    blames: tuple[str, ...] = ()  # the tasks an effect names, in order (its own left out)
    text: str = ""  # its message, its line and the peer line after it
    own_error: bool = False  # an exit after an error of the same worker
    hung: bool = False  # an exit of a generation that only waited for its peers
    oom: bool = False  # the kernel's OOM kill: never the runner's teardown
    stopped: bool = False  # stopped by its own application (YARN's -105): the job's teardown, never a cause
    weak: bool = False  # a return code with no message of its own (WEAK_CAUSE_SHAPES)


def task_name(job: str, task: int) -> str:
    """A task as this framework names its logs (worker-0 is the chief)."""
    if job in ("worker", "chief", "master"):
        return f"worker-{task if job == 'worker' else 0}"
    return f"{job}-{task}"


# The contexts that say a task named is the peer an error came from, and those that say it is the reporter.
_PEER_BEFORE = re.compile(
    r"(?:remote target|[Rr]eported from|\bTask|\bFrom|send_device=\"|unhealthy[^/]{0,60}:\s*)\s*$"
)
_REPORTER_AFTER = re.compile(r"^\s*(?:encountered|failed\b)")
_REPORTER_BEFORE = re.compile(r"(?:on worker|on task)\s*$")


def blamed(text: str, own: int | None) -> tuple[str, ...]:
    """The tasks a line names as the peer its error came from, in order: those it says are the
    peer (``remote target /job:ps/...``, ``Error reported from``, ``Task ... heartbeat timeout``,
    a ``_Recv``'s ``send_device``) first, then any other named task that is neither the op's own
    device nor the reporter (``/job:worker/task:2 encountered ...``, ``Remote function on worker
    ... failed``). TF nests the original error first; a worker naming its own task as the origin
    blames itself."""
    strong, weak = [], []
    for m in _TASK_ANY.finditer(text):
        name = task_name(m["job"], int(m["task"]))
        before, after = text[max(0, m.start() - 80) : m.start()], text[m.end() : m.end() + 20]
        if _PEER_BEFORE.search(before):
            strong.append(name)
        elif _REPORTER_BEFORE.search(before) or _REPORTER_AFTER.match(after) or after.startswith("/"):
            continue  # the reporter, or an op's own device
        else:
            weak.append(name)
    for m in _DAEMON_NODE.finditer(text):  # the node of the daemon mpirun lost: the worker its name says
        index = worker_index(m["node"])
        strong.append(m["node"] if index is None else task_name("worker", index))
    return tuple(dict.fromkeys(strong or weak))


def is_effect(cls: str, message: str) -> bool:
    """A peer's error, or one that says another task caused it."""
    if _OWN_WORDS.search(message) and not _EFFECT_WORDS.search(message):
        return False
    # an error line of no class is a peer's only with a gRPC phrase (an NCCL WARN of no class is its own)
    return (cls in EFFECT_CLASSES and cls != "") or bool(_EFFECT_WORDS.search(message))


def _is_kill(x: ExitEvent) -> bool:
    return x.exit_code in KILL_CODES or x.oom_killed or x.reason in GONE_REASONS


def _failed_exit(x: ExitEvent) -> bool:
    return (x.exit_code not in (None, 0)) or x.oom_killed or x.reason in GONE_REASONS


def exit_text(x: ExitEvent) -> str:
    code = x.exit_code
    if x.oom_killed:
        return "exit 137, killed for memory (OOM)" if code in (137, None) else f"exit {code}, OOM-killed"
    if x.reason and code is None:
        return x.reason
    if x.reason:  # YARN's status of a container (chaos.workload.grammar.YARN_EXIT_STATUS)
        return f"exit status {code} ({x.reason})"
    return {137: "exit 137 (SIGKILL)", 134: "exit 134 (SIGABRT)", 143: "exit 143 (SIGTERM)"}.get(code, f"exit {code}")


def _number(where: str) -> tuple[str, int]:
    origin, _, number = where.rpartition(":")
    return origin, int(number) if number.isdigit() else -1


def _after(w: WorkerObservations, evidence: Evidence) -> str:
    """The peer lines TF printed right after this error (``Additional GRPC error information
    from remote target /job:worker/replica:0/task:1``): the observer keeps them among the
    coordination lines, with their place in the log."""
    origin, n = _number(evidence.where)
    near = []
    for c in w.coordination:
        o, m = _number(c.where)
        if o != origin or m <= n:
            continue
        if (m <= n + NEAR_LINES and _PEER_LINE.search(c.text)) or (
            m <= n + NODE_LINES and (_NODE_LINE.match(c.text) or _DAEMON_NODE.search(c.text))
        ):
            near.append(c.text)
    return "\n".join(near)


def trained_on_after(error: ErrorEvent, g: Generation) -> bool:
    """Whether the process stepped again after ``error``: then it lived through it (TF's
    ``WARNING:tensorflow:ParseError: ... CheckpointState`` of a backup's index read while the
    chief rewrote it, at an epoch's end), and it says nothing of what ended the process. By
    time where both have one, else by their places in the same log."""
    if not g.steps:
        return False
    last = g.steps[-1]
    error_t, last_t = when(error), when(last)
    if error_t is not None and last_t is not None:
        return last_t > error_t
    (origin, n), (step_origin, m) = _number(error.evidence.where), _number(last.evidence.where)
    return origin == step_origin and n >= 0 and m > n


def _lines(w: WorkerObservations, g: Generation) -> list[_Line]:
    own = w.index
    out: list[_Line] = []
    order = 0
    errors = [e for e in g.errors if not trained_on_after(e, g)]
    for e in errors:
        order += 1
        text = e.message + "\n" + e.evidence.text + "\n" + _after(w, e.evidence)
        cls = error_cls(e)
        kind = "effect" if is_effect(cls, text) else "cause"
        what = f"{cls}: {_first(e.message)}" if cls else _first(e.message)
        # gRPC's ":UNKNOWN:Error received from peer" goes on the record before it: its peer is that record's
        continued = e.evidence.text.lstrip().startswith(":UNKNOWN:")
        weak = kind == "cause" and not cls and not WEAK_CAUSE_SHAPES.isdisjoint(shapes_in(e.message))
        blames = () if continued else blamed(text, own)
        out.append(_Line(w, kind, what, e.evidence, when(e), order, blames, text, weak=weak))
    first_error_t = min((t for t in map(when, errors) if t is not None), default=None)
    hung = not g.steps and not g.step_ms and bool(g.hang_lines)
    for x in g.exits:
        if not _failed_exit(x) or (x.exit_code is None and _NOT_AN_EXIT.search(x.evidence.text)):
            continue  # TF's "Either the leader task was preempted/died..." says nothing of this worker
        order += 1
        x_t = when(x)
        after_error = bool(errors) and (x_t is None or first_error_t is None or x_t >= first_error_t)
        out.append(
            _Line(
                w,
                "kill" if _is_kill(x) else "exit",
                exit_text(x),
                x.evidence,
                x_t,
                order,
                own_error=after_error,
                hung=hung,
                oom=x.oom_killed,
                stopped=x.reason in YARN_STOPPED_BY_APP,
            )
        )
    return out


def _first(message: str, width: int = 140) -> str:
    for line in message.splitlines():
        line = " ".join(line.split())
        if line and not line.startswith("Graph execution error") and not line.startswith("Detected at node"):
            return line[: width - 3] + "..." if len(line) > width else line
    return " ".join(message.split())[:width]


def _when(line: _Line) -> tuple[int, float, int]:
    return (line.t is None, line.t if line.t is not None else 0.0, line.order)


def cycles(workers: list[WorkerObservations]) -> int:
    return max((len(w.generations) for w in workers), default=0)


def attribute(workers: list[WorkerObservations]) -> list[Attribution]:
    """One attribution per cycle (generation index), first run first."""
    return [attribute_cycle(workers, k) for k in range(cycles(workers))]


def _gens(workers: list[WorkerObservations], k: int) -> list[tuple[WorkerObservations, Generation]]:
    return [(w, w.generations[k]) for w in workers if k < len(w.generations)]


def _steps(gens) -> tuple[int, int | None]:
    count = sum(len(g.steps) + len(g.step_ms) for _, g in gens)
    top = max((s.step for _, g in gens for s in g.steps), default=None)
    return count, top


def _torn(gens) -> list[Labelled]:
    """Exits after this framework's own teardown line, or its stop of a worker the failure left
    running (to restart it): its kill of a job that was done or failed."""
    return [
        Labelled(
            TEARDOWN,
            w.name,
            exit_text(x),
            "after the runner's stop line (to restart it): its stop, not the failure's"
            if g.stopped_for_restart
            else "after the runner's teardown line: its kill, not the failure's",
            x.evidence,
            when(x),
        )
        for w, g in gens
        for x in g.torn
    ]


def attribute_cycle(workers: list[WorkerObservations], k: int) -> Attribution:
    gens = _gens(workers, k)
    steps, top = _steps(gens)
    torn = _torn(gens)
    lines = sorted((line for w, g in gens for line in _lines(w, g)), key=_when)
    untold: list[str] = []
    if len(workers) == 1:
        untold.append(_one_log(workers[0]))
    if not lines:
        # no error: still a failure if the others wait for a task that never came (a TF 1.x
        # session waiting for a ps, Horovod's missing ranks), not a straggler at bring-up
        suspect, more = _from_missing(workers, []) if k == 0 else (None, [])
        if suspect is None:  # nothing failed (a hang that resolved, or no failure at all)
            return Attribution(k, False, None, None, False, "", (), tuple(torn), tuple(untold), steps, top)
        untold += ["no error: the others waited for a peer that never came"] + more
        return Attribution(k, True, None, suspect, False, "", (), tuple(torn), tuple(untold), steps, top)
    if _finished(gens) and not any(line.kind in ("kill", "exit") for line in lines):
        # every worker trained to its end: an error it logged and lived through is no failure
        # (killed-chief's restarted worker warns `NotFoundError: /backup/chief/checkpoint` before its done)
        return Attribution(k, False, None, None, False, "", (), tuple(torn), tuple(untold), steps, top)
    first_t = next((line.t for line in lines if line.t is not None), None)
    if any(line.t is None for line in lines) and len({line.worker.name for line in lines}) > 1:
        untold.append("some lines have no time stamp: which worker failed first is read from the order of each log")

    teardown: list[Labelled] = list(torn)
    causes: list[_Line] = []
    rest: list[_Line] = []
    for line in lines:
        if line.kind == "effect":
            rest.append(line)
            continue
        if line.stopped:
            teardown.append(
                _label(
                    TEARDOWN,
                    line,
                    "stopped by its own application master: the teardown of a job that had already failed, not a cause",
                )
            )
            continue
        if line.kind in ("kill", "exit") and line.own_error:
            rest.append(line)  # its exit after its own error: the error says it
            continue
        if line.kind == "kill" and not line.oom:
            # hung: it only waited for its peers, and none trained (a parameter server never steps: it is
            # no hung bring-up while the workers train)
            if line.hung and not steps:
                teardown.append(
                    _label(
                        TEARDOWN,
                        line,
                        "killed while it waited for its peers: the operator's cure for a hung bring-up, not a cause",
                    )
                )
                continue
            late = first_t is not None and line.t is not None and line.t - first_t > KILL_MARGIN_S
            if late:  # blamed or not: a worker its peers lost and that was killed later hung, and was stopped
                teardown.append(
                    _label(
                        TEARDOWN,
                        line,
                        f"{line.t - first_t:.0f} s after the first failure, with no "
                        "error of its own: the kill of a job that had already failed",
                    )
                )
                continue
        if line.kind == "exit":
            rest.append(line)  # a failed exit with no error: says nothing of why
            continue
        causes.append(line)

    if any(line.weak for line in causes) and not all(line.weak for line in causes):
        rest += [line for line in causes if line.weak]  # a return code after a line that says what failed
        causes = [line for line in causes if not line.weak]
    if causes and all(_mismatch(line) for line in causes) and _from_skew(gens)[0] is not None:
        # A collective's type or shape mismatch is raised by whichever worker compares (the group's
        # leader answers CompleteInstance with it): with one worker's environment odd, the mismatch
        # is that worker's doing, not the comparer's (version-skew-tf215-..., CI of 2026-12-07:
        # the chief raised it first and was named the root).
        rest += [replace(line, kind="effect") for line in causes]
        causes = []
    roots: list[Labelled] = []
    root_worker, sure, no_root = None, False, ""
    if causes:
        roots, root_worker, sure, no_root, more = _from_causes(causes, workers)
        untold += more
    else:
        root_worker, more = _from_skew(gens)
        if root_worker is None:
            root_worker, more = _from_effects([line for line in rest if line.kind == "effect"], workers)
        if root_worker is None and k == 0:
            root_worker, more = _from_missing(workers, more)
        untold += more
        if root_worker is None and not any(line.kind == "effect" for line in rest):
            if any(g.hang_lines and not g.steps for _, g in gens):
                untold.append(
                    "a hang at bring-up with no error: the waiting workers' lines say whom they waited "
                    "for (who is missing), not whose fault it is (its own config, or a port it cannot reach)"
                )
            else:
                untold.append("no line states a cause: only failed exits")
    if len(_worker_logs(workers)) < 2:
        sure = False  # one log (a dump's preamble or a stray header aside): a peer that failed first is not in it
    taken = {r.evidence for r in roots}
    at_root = {r.worker for r in roots}
    # a root worker's exit after its own error goes with its root line; every other line is cascade
    roots += [
        _label(ROOT, line, "its exit after its error")
        for line in rest
        if line.kind in ("kill", "exit") and line.own_error and line.worker.name in at_root
    ]
    taken = {r.evidence for r in roots}
    cascade = [
        _label(CASCADE, line, _cascade_why(line, root_worker))
        for line in (*rest, *causes)
        if line.evidence not in taken
    ]
    root = roots[0] if roots else None
    before = root is not None and _before_first_step(gens, root)
    return Attribution(
        k,
        True,
        root,
        root_worker,
        sure,
        no_root,
        tuple(sorted(cascade, key=_t)),
        tuple(teardown),
        tuple(dict.fromkeys(untold)),
        steps,
        top,
        before,
        tuple(roots),
    )


def _finished(gens) -> bool:
    """Every worker of the cycle said training was done, or exited 0 (a job's own logs that say
    neither, a user's, never finished as far as they tell)."""
    return bool(gens) and all(g.done_t is not None or any(x.exit_code == 0 for x in g.exits) for _, g in gens)


def _worker_logs(workers: list[WorkerObservations]) -> list[WorkerObservations]:
    """The logs that are a worker's: not a dump's lines before its first pod header, nor a
    "pod" a stray header line made (``-----`` between two paragraphs)."""
    return [w for w in workers if not w.name.endswith("(before the first pod)") and re.search(r"[A-Za-z0-9]", w.name)]


def _t(label: Labelled) -> tuple[int, float]:
    return (label.t is None, label.t or 0.0)


def _label(role: str, line: _Line, why: str) -> Labelled:
    return Labelled(role, line.worker.name, line.what, why, line.evidence, line.t)


def _one_log(w: WorkerObservations) -> str:
    if w.index is None:
        return (
            f"one log ({w.name}) whose name says no worker: which worker printed each line, and whether a peer "
            "failed first, would show in one log per worker"
        )
    return (
        f"only {w.name}'s log: its own failure is the root as far as its lines go; the peers' logs would show "
        "whether one failed first"
    )


def _cascade_why(line: _Line, root_worker: str | None) -> str:
    if line.kind == "effect":
        names = f" (names {', '.join(line.blames)})" if line.blames else ""
        return "a peer's error: caused by a failure elsewhere" + names
    if line.kind in ("kill", "exit"):
        return "its exit after its error" if line.own_error else "a failed exit with no error of its own"
    if line.weak:
        return "an error code passed up the stack, with no message of its own: read as a consequence"
    return f"an error of its own after {root_worker or 'the first failure'}'s: read as a consequence"


def _from_causes(causes: list[_Line], workers: list[WorkerObservations]):
    """(root lines, root worker, sure, no_root, untold) from the lines that state a cause."""
    untold: list[str] = []
    first = causes[0]
    by_worker: dict[str, _Line] = {}
    for line in causes:
        by_worker.setdefault(line.worker.name, line)
    if len(workers) > 1 and len(by_worker) == len(workers):
        keys = {_key(line.what) for line in by_worker.values()}
        if len(keys) == 1:
            why = (
                f"every worker raised the same error of its own ({first.what}): a fault that touches all "
                "(a shared backup, a config, an image), not one worker's"
            )
            return (
                [_label(ROOT, line, "its own error, as every worker's") for line in by_worker.values()],
                None,
                True,
                why,
                untold,
            )
        if all(line.kind == "kill" for line in by_worker.values()):
            why = "every worker was killed, none with an error of its own first: a node, the orchestrator or the runner"
            return (
                [_label(ROOT, line, "killed, as every worker was") for line in by_worker.values()],
                None,
                False,
                why,
                untold,
            )
    others = [line for name, line in by_worker.items() if name != first.worker.name]
    sure = not others
    if others:
        other = others[0]
        gap = f" {other.t - first.t:.1f} s later" if other.t is not None and first.t is not None else " too"
        untold.append(
            f"{other.worker.name} failed on its own{gap} ({other.what}): read as a consequence, "
            "which its lines do not say"
        )
    if first.t is None and len(by_worker) > 1:
        sure = False
    why = (
        "killed from outside, with no error of its own before it"
        if first.kind == "kill"
        else "the first error that is not a peer's"
    )
    worker: str | None = first.worker.name
    if len(workers) == 1 and first.worker.index is None:
        # one stream that names no worker: only the line itself can say who printed it
        worker = _tagged(first.evidence.text, first.text)
        untold.append(
            "the root line is in one stream whose name says no worker: "
            + (f"{worker} from the line's own tag" if worker else "which worker printed it cannot be told")
        )
    return [_label(ROOT, first, why)], worker, sure, "", untold


_FROM_TASK = re.compile(r"\bFrom /job:(?P<job>\w+)/(?:replica:\d+/)?task:(?P<task>\d+)")
_MPI_RANK = re.compile(r"process rank (?P<rank>\d+)\b")
_RANK_TAG = re.compile(r"^\s*(?:\S+\s+\S+\s+\d+\s+[\d:]+\s+\d{4})?\[\d+,(?P<rank>\d+)\]<std(?:out|err)>:")
# A launcher's line about one task (TonY's ApplicationMaster: "... for task worker:5 finished with exitStatus
# -100.", "Job worker:5 exited with -100").
_LAUNCHER_TASK = re.compile(r"\b(?:for task|Job) (?P<job>[A-Za-z_]+):(?P<task>\d+) (?:finished|exited)\b")
_DEVICE_TASK = re.compile(
    r"/job:(?P<job>(?!localhost\b)\w+)/(?:replica:\d+/)?task:(?P<task>\d+)/(?:device:)?[A-Za-z]+:\d"
)


def _tagged(line: str, text: str = "") -> str | None:
    """The worker a line says it is from: mpirun's ``[1,4]<stderr>:`` (rank 4), a launcher's
    line about one task (TonY's ``for task worker:5 finished with exitStatus -100``: worker-5), or
    the device of the op that failed (``/job:worker/replica:0/task:0/device:GPU:2``: worker-0)."""
    text = text or line
    m = _RANK_TAG.match(line) or _MPI_RANK.search(text)
    if m:
        return f"rank {m['rank']}"
    m = _LAUNCHER_TASK.search(line) or _FROM_TASK.search(text) or _DEVICE_TASK.search(text)
    return task_name(m["job"], int(m["task"])) if m else None


# What "who is missing" says of a task that is enough to suspect it (not a straggler at bring-up:
# the one that could not connect may be the victim of the chief's own blocked port).
MISSING_STRENGTH = 3


def _from_missing(workers: list[WorkerObservations], untold: list[str]) -> tuple[str | None, list[str]]:
    """The task the lines show the others lost or waited for in a collective, as likely."""
    found = [
        m
        for m in who_is_missing(workers)
        if m.strength >= MISSING_STRENGTH and "connected" not in m.what and not re.match(r"^[\d.:]+$", m.who)
    ]
    if not found or (len(found) > 1 and found[0].strength == found[1].strength and found[0].who != found[1].who):
        return None, untold
    m = found[0]
    return m.who, [
        f"no line states a cause: {m.who} {m.what} ({m.evidence.where}), as likely, not sure: "
        "the lines show whom the others lost, not why"
    ]


def _mismatch(line: _Line) -> bool:
    """An error of the worker's own that only says two workers' tensors disagree."""
    return line.kind == "cause" and "collective_mismatch" in shapes_in(line.text)


def _from_skew(gens) -> tuple[str | None, list[str]]:
    """The one worker whose start fingerprint differs from the cycle's others, said as likely.

    A mismatch between two TF versions is raised by whichever side compares (the collective's
    leader answers ``CompleteInstance`` with it), so the first peer error names the comparer, not
    the odd worker. The reference is the fingerprint most workers share, else the chief's (the
    baseline the runner's own comparison uses: chaos.fingerprints.skews)."""
    prints = {w.name: (w.index, tuple(sorted(g.fingerprint.items()))) for w, g in gens if g.fingerprint}
    if len(prints) < 2 or len({p for _, p in prints.values()}) < 2:
        return None, []
    counts = Counter(p for _, p in prints.values())
    (top, n), *rest = counts.most_common()
    chief = next((p for i, p in prints.values() if i == 0), None)
    if not rest or rest[0][1] < n:
        reference, how = top, "the one the others share"
    elif chief is not None:
        reference, how = chief, "the chief's: with no fingerprint most workers share, the chief's is the job's"
    else:
        return None, []
    odd = sorted(name for name, (_, p) in prints.items() if p != reference)
    if len(odd) != 1:
        return None, []
    items = ordered(diff(dict(prints[odd[0]][1]), dict(reference)))  # TF's own version first
    shown = ", ".join(f"{k} {mine} (others {theirs})" for k, (mine, theirs) in items[:2])
    shown += f", and {len(items) - 2} more" if len(items) > 2 else ""
    return odd[0], [
        f"no line states a cause: {odd[0]}'s environment differs ({shown}); {how}; as likely, not sure: "
        "a version mismatch is raised by whichever worker compares, and the peers' errors name that one"
    ]


def _from_effects(effects: list[_Line], workers: list[WorkerObservations]) -> tuple[str | None, list[str]]:
    """The worker the first peer's error names, said as likely; None when they disagree or name none."""
    if not effects:
        return None, []
    named = [line for line in effects if line.blames]
    if not named:
        return None, ["only peers' errors, none naming the task they lost: which worker it began at cannot be told"]
    first = named[0]
    suspect = first.blames[0]
    near = [line for line in named if line.t is not None and first.t is not None and line.t - first.t <= BLAME_WINDOW_S]
    if any(line.blames[0] != suspect for line in near):
        return None, [
            f"the first peers' errors name different tasks within {BLAME_WINDOW_S:g} s "
            f"({', '.join(sorted({line.blames[0] for line in near}))}): which worker it began at cannot be told"
        ]
    if suspect == first.worker.name:
        return None, [
            f"the first peer error names {suspect}'s own task: another process with its task index "
            "(a duplicate in TF_CONFIG) or an error passed back to it: which worker it began at cannot be told"
        ]
    known = {w.name for w in workers}
    where = "" if suspect in known or len(workers) == 1 else " (no log of that name was given)"
    return suspect, [
        f"no line states a cause: {suspect}{where} is the task {first.worker.name}'s first peer error "
        "names, as likely, not sure: a link cut into one side and a worker that stopped answering "
        "look the same from the lines"
    ]


def _before_first_step(gens, root: Labelled) -> bool:
    """Whether the root came before any step of its worker's generation (a restore, a start-up)."""
    for w, g in gens:
        if w.name != root.worker:
            continue
        if not g.steps and not g.step_ms:
            return True
        first = min((t for t in map(when, g.steps) if t is not None), default=None)
        return root.t is not None and first is not None and root.t < first
    return False


def first_failure(attributions: list[Attribution]) -> Attribution | None:
    return next((a for a in attributions if a.failed), None)
