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

import dataclasses
import functools
import heapq
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

try:  # Python >= 3.11 names them so (sre_parse warns there)
    from re import _constants as sre_constants  # type: ignore[attr-defined]
    from re import _parser as sre_parse
except ImportError:  # pragma: no cover
    import sre_constants
    import sre_parse  # type: ignore[no-redef]

from chaos.diagnose.logs import PREAMBLE, Splitter, WorkerLog, empty_logs_error, iter_files, unique_names, worker_index
from chaos.diagnose.shapes import _TOKEN as _WORD
from chaos.diagnose.shapes import ALWAYS_WORDS, KEY_TOKENS, TASK_LINE, error_class, shapes_in
from chaos.events import (
    DoneEvent,
    ErrorEvent,
    ExitEvent,
    LogLine,
    PhaseEvent,
    RestartEvent,
    StartEvent,
    StepEvent,
    parse_line,
)
from chaos.events_text import evidence_text
from chaos.workload.grammar import (
    EXCEPTION_ENDINGS,
    MAX_MESSAGE_LINES,
    WAITING,
    ExceptionLine,
    ExitLine,
    after_stamp,
    ends_message,
    exception_line,
    exit_line,
    line_time,
    status_line,
    unwrap,
    without_prefix,
)

MAX_MESSAGE_CHARS = 20_000
MAX_EVIDENCE = 4  # lines shown for one symptom
# What a worker's observations keep, whatever the log's length: a long log
# repeats its errors, waits and step times; the first ones (the last waits and
# the longest step times) say what the rest would.
MAX_FLAGGED = 2000  # flagged lines per worker (after MAX_SAME_SHAPE of each kind)
MAX_KEPT = 2000  # errors, exits, wait lines and Keras step times per generation
LOSS_KEPT = 200  # loss values kept per name: the first ones, the last ones, and the highest in between
# "loss = 3.54", "cross_entropy = 3936.8", "- loss: 0.1038", "train loss:1.1", "Total loss is 721.2"
_LOSS = re.compile(
    r"(?<![A-Za-z_])(?P<key>(?:[A-Za-z]+_)?(?:loss|cross_entropy|xent))\b[\"']?\s*(?:[:=]|\bis\b)\s*"
    r"(?P<value>[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\d.])",
    re.IGNORECASE,
)


class LossSeries:
    """The loss values one log prints, by name, in order, in bounded memory: the
    first LOSS_KEPT, the last LOSS_KEPT, and the highest of those in between."""

    def __init__(self) -> None:
        self.early: list[tuple[float, Evidence]] = []
        self.peak: tuple[float, Evidence] | None = None
        self.late: list[tuple[float, Evidence]] = []

    def add(self, value: float, evidence: Evidence) -> None:
        if len(self.early) < LOSS_KEPT:
            self.early.append((value, evidence))
            return
        self.late.append((value, evidence))
        if len(self.late) > 2 * LOSS_KEPT:
            for old in self.late[:LOSS_KEPT]:
                if self.peak is None or old[0] > self.peak[0]:
                    self.peak = old
            del self.late[:LOSS_KEPT]

    def values(self) -> list[tuple[float, Evidence]]:
        return self.early + ([self.peak] if self.peak else []) + self.late


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
    notable: list[Evidence] = field(
        default_factory=list
    )  # this generation's flagged lines (shapes, errors, exits, waits)
    done_t: float | None = None  # when it said training was done (the framework's own logs)
    redeployed: bool = False  # begun by the runner's redeploy: until its start, lines are the old process's
    # A redeployed generation: when the runner's stop of the old process was seen in this
    # log (its SIGKILL exit, 137), for ``settle`` to date the whole redeploy from.
    stopped_t: float | None = None
    more_errors: int = 0  # errors past MAX_KEPT: counted, not kept
    # This framework's runner began its teardown (its line in the log): what follows is its kill.
    torn_down_t: float | None = None
    teardown_exits: int = 0  # exits by that kill: counted, not read as the failure's
    torn: list[ExitSeen] = field(default_factory=list)  # the first of them, for attribution to label (MAX_EVIDENCE)

    def _aftermath(self, t: float | None) -> bool:
        """Lines of a process the run was done with: after it said training was
        done (a worker whose peer left first can fail its own shutdown with
        `Socket closed`), or the old process's last words after the runner's
        redeploy stopped it (they reach the log after the restart line on a busy
        machine). Neither says anything of the failure the run was about."""
        after_done = self.done_t is not None and t is not None and t > self.done_t
        return after_done or (self.redeployed and self.start is None) or self._torn_down(t)

    def add_error(self, error: ErrorSeen) -> None:
        if not self._aftermath(error.t):
            if len(self.errors) < MAX_KEPT:
                self.errors.append(error)
            else:
                self.more_errors += 1

    def add_exit(self, exit_: ExitSeen) -> None:
        if self.redeployed and self.start is None:
            # the old process's exit, after the restart line: the runner's stop (kept only as its time)
            if exit_.code == STOP_CODE and exit_.t is not None:
                self.stopped_t = exit_.t if self.stopped_t is None else min(self.stopped_t, exit_.t)
            return
        if self._after_done_failed(exit_):
            return
        if self._torn_down(exit_.t) and exit_.code == STOP_CODE:
            self.teardown_exits += 1  # the runner's kill of a worker that outlived the failed run
            if len(self.torn) < MAX_EVIDENCE:
                self.torn.append(exit_)
            return
        if len(self.exits) < MAX_KEPT:
            self.exits.append(exit_)

    def _torn_down(self, t: float | None) -> bool:
        return self.torn_down_t is not None and t is not None and t >= self.torn_down_t

    def _after_done_failed(self, exit_: ExitSeen) -> bool:
        """A failed exit after the worker said training was done: its shutdown
        failing (its peer left first), or the runner's teardown killing a process
        that lingered past the symptom timeout (137), or TF's line about it
        (`... the leader task was preempted/died ...`). Like the errors of that
        moment, it says nothing of the failure the run was about; an exit 0 is
        kept (it says the job ended)."""
        failed = exit_.code != 0 or exit_.oom_killed  # code None: a line saying it went away ("preempted")
        return failed and self.done_t is not None and exit_.t is not None and exit_.t > self.done_t

    def add_hang(self, t: float | None, evidence: Evidence) -> None:
        self.hang_lines.append((t, evidence))
        if len(self.hang_lines) >= 2 * MAX_KEPT:  # the last ones are read (what it waited at last)
            del self.hang_lines[:MAX_KEPT]

    def add_step_ms(self, ms: float) -> None:
        self.step_ms.append(ms)
        if len(self.step_ms) >= 2 * MAX_KEPT:  # the first and the longest ones are read
            self.step_ms[1:] = heapq.nlargest(MAX_KEPT - 1, self.step_ms[1:])


@dataclass
class WorkerObservations:
    name: str
    index: int | None  # the task index its name gives; 0 is the chief
    generations: list[Generation]
    log: WorkerLog | None = None  # every line, when it was read whole (``observe``)
    flagged: list[tuple[Evidence, tuple[str, ...]]] = field(
        default_factory=list
    )  # lines with known shapes (chaos.diagnose.shapes)
    first: Evidence | None = None  # its first line
    watched: dict[str, list[Evidence]] | None = (
        None  # the lines each watched pattern matched (``Watch``), up to MAX_EVIDENCE
    )
    losses: dict[str, LossSeries] = field(default_factory=dict)  # the loss values it printed, by name
    coordination: list[Evidence] = field(default_factory=list)  # the coordination service's last lines (Observer)

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


# --- line patterns (the grammar itself: chaos.workload.grammar) -----------------

_KERAS_STEP_TIME = re.compile(r"\b(?P<value>\d+(?:\.\d+)?)(?P<unit>ms|s|us)/step\b")


# The gate: a line worth the reader's patterns has one of these words (its
# lower-case letter runs, ``shapes.tokens``) or substrings; most lines of a long
# log (INFO lines, progress bars) have none and cost one split. The words are the
# reader's own (exceptions, statuses, exits, waits) and every shape's keys; the
# unit tests check that every line the reader understands in the corpus's dev cases
# and the framework's own runs passes it.
READER_TOKENS = frozenset(
    "error errors exception fail failed failure fails abort aborted aborting startabort unavailable deadline exceeded "
    "exhausted internal cancelled precondition unknown invalid denied range exit exited kill killed oom oomkilled "
    "memory alloc allocate signal sigkill sigterm evicted preempted preemption backoff crashloopbackoff lame disruption "
    "disruptiontarget started waiting stragglers socket reset refused broken timed timeout heartbeat heartbeats "
    "statuscode core dumped terminated".split()
)
GATE_TOKENS = READER_TOKENS | KEY_TOKENS
GATE_SUBSTRINGS = tuple(
    dict.fromkeys(
        ("rror", "xception", "TF_CONFIG", "DATA_LOSS", "Data loss", "NOT_FOUND", "Not found", "not found")
        + EXCEPTION_ENDINGS  # SystemExit, KeyboardInterrupt, ...Failure: the grammar's exception lines
        + ALWAYS_WORDS
    )
)


def notable(text: str, low: str | None = None) -> set[str] | None:
    """The line's words (``shapes.tokens``) if the reader looks at it beyond its
    time stamp, else None. ``low``: the line in lower case, if the caller has it."""
    words = _WORD.findall(text.lower() if low is None else low)
    if not GATE_TOKENS.isdisjoint(words):
        return set(words)
    for sub in GATE_SUBSTRINGS:
        if sub in text:
            return set(words)
    return None


MAX_SAME_SHAPE = 3  # flagged lines kept per (shapes, text without digits): a long log repeats its errors


_NO_DIGITS = str.maketrans("", "", "0123456789.:")


def _repeat_key(names: tuple[str, ...], text: str) -> tuple:
    return names, text[:200].translate(_NO_DIGITS)


class Watch:
    """The patterns of the catalogue's scenario signatures (``PatternSignature``),
    looked for while the log is read: a long log is not kept, so a pattern that
    may name any line is searched line by line here. A line is searched only if
    it holds the literal text the pattern needs (``required_literals``); one
    combined search for any of them spares most lines first."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns: tuple[str, ...] = tuple(dict.fromkeys(patterns))
        self._always: list[tuple[str, Callable]] = []  # patterns that need no literal: tried on every line
        # each pattern under the literals of which one is in any line it matches (per branch, its longest group)
        keyed: dict[tuple[str, bool], list[tuple[str, Callable, Needed]]] = {}
        for pattern in self.patterns:
            try:
                search = re.compile(pattern).search
            except re.error:
                continue  # the signature itself reports it when judged
            needed = required_literals(pattern)
            if needed is None:
                self._always.append((pattern, search))
                continue
            for branch in needed.branches:
                best = max(branch, key=_keyness)
                for lit in best:
                    bucket = keyed.setdefault((lit, needed.fold), [])
                    if all(p != pattern for p, _, _ in bucket):
                        bucket.append((pattern, search, needed))
        self._keyed = [(lit, fold, tuple(bucket)) for (lit, fold), bucket in keyed.items()]
        self._fold = any(fold for _, fold, _ in self._keyed)

    def matched(self, text: str, low: str | None = None) -> list[str]:
        """The patterns the line matches, in the order they were given. (A
        loop of substring tests: faster here than one search for any of the
        literals, which a case-folded one slows down.)"""
        out = [pattern for pattern, search in self._always if search(text)] if self._always else []
        folded = (text.lower() if low is None else low) if self._fold else text
        tried: set[str] | None = None
        for lit, fold, bucket in self._keyed:
            if lit not in (folded if fold else text):
                continue
            tried = set() if tried is None else tried
            for pattern, search, needed in bucket:
                if pattern not in tried:
                    tried.add(pattern)
                    if needed.found_in(folded if needed.fold else text) and search(text):
                        out.append(pattern)
        if len(out) > 1:
            out.sort(key=self.patterns.index)
        return out


MIN_LITERAL = 3
# Words on most lines of a training log (a Keras progress line says "loss"):
# a pattern's other literals are a better first test.
COMMON_WORDS = frozenset("loss step steps epoch error info warning worker task grpc true false train".split())


def _keyness(group: tuple[str, ...]) -> tuple[bool, int]:
    """How well a group of literals sorts lines out: not common words, then longer."""
    return (not all(lit.strip(" \"':").lower() in COMMON_WORDS for lit in group), min(map(len, group)))


@dataclass(frozen=True)
class Needed:
    """What text a line must hold for a pattern to match it: for one of the
    ``branches`` (a top-level alternation; one branch otherwise), every group of
    it, one literal of each group. Lower-case when the pattern ignores case."""

    fold: bool
    branches: tuple[tuple[tuple[str, ...], ...], ...]

    def found_in(self, text: str) -> bool:
        for branch in self.branches:
            for group in branch:
                if len(group) == 1:
                    if group[0] not in text:
                        break
                elif not any(lit in text for lit in group):
                    break
            else:
                return True
        return False


def _runs(items) -> list[str]:
    """The literal runs of MIN_LITERAL characters in a parsed sequence."""
    runs, run = [], ""
    for op, arg in items:
        if op is sre_constants.LITERAL:
            run += chr(arg)
            continue
        if len(run) >= MIN_LITERAL:
            runs.append(run)
        run = ""
    if len(run) >= MIN_LITERAL:
        runs.append(run)
    return runs


def _groups(items) -> list[tuple[str, ...]]:
    """The requirements of a parsed sequence: each of its literal runs, and
    for a group holding an alternation whose every branch has a run, one of them."""
    groups = [(run,) for run in _runs(items)]
    for op, arg in items:
        if op is sre_constants.SUBPATTERN and not arg[1] & re.IGNORECASE:  # not a (?i:...) group: its case is its own
            inner = list(arg[-1])
            if len(inner) == 1 and inner[0][0] is sre_constants.BRANCH:
                alternatives = [max(_runs(list(b)), key=len, default="") for b in inner[0][1][1]]
                if alternatives and all(alternatives):
                    groups.append(tuple(dict.fromkeys(alternatives)))
    return groups


@functools.lru_cache(maxsize=256)
def required_literals(pattern: str) -> Needed | None:
    """The literal text any match of ``pattern`` must contain (``Needed``);
    None when a branch of it needs none (every line is then searched). Read
    from the parsed pattern: only runs of literal characters at its top level
    (or in a top-level group of alternatives, or at the top of each branch of a
    top-level alternation) count, so the test never drops a line the pattern
    would match."""
    try:
        parsed = sre_parse.parse(pattern)
    except re.error:
        return None
    fold = bool(parsed.state.flags & re.IGNORECASE)
    items = list(parsed)
    if len(items) == 1 and items[0][0] is sre_constants.BRANCH:
        branches = [list(b) for b in items[0][1][1]]
    else:
        branches = [items]
    out = []
    for branch in branches:
        groups = _groups(branch)
        if not groups:
            return None
        out.append(tuple(tuple(lit.lower() for lit in g) if fold else g for g in groups))
    return Needed(fold, tuple(out))


class Observer:
    """One worker's log read line by line (``feed``) into its observations
    (``finish``): only what the signatures use is kept, never the lines."""

    def __init__(self, name: str, origin: str, watch: Watch | None = None) -> None:
        self.name = name
        self.origin = origin
        self.watch = watch
        self.generations = [Generation()]
        self.flagged: list[tuple[Evidence, tuple[str, ...]]] = []
        self.repeats: dict[tuple, int] = {}
        self.pending: dict | None = None  # an exception whose message may go on over the next lines
        self.last_t: float | None = None
        self.stragglers = False  # right after "Example stragglers:": the task lines that follow
        self.first: Evidence | None = None
        self.nonblank = 0
        self.watched: dict[str, list[Evidence]] | None = {p: [] for p in watch.patterns} if watch else None
        self.losses: dict[str, LossSeries] = {}
        self.loss_lines = 0
        # The coordination service's lines (who it waits for, who connected), the last ones kept:
        # "who is missing" reads a straggler report and its end from them (chaos.diagnose.missing).
        self.coordination: list[Evidence] = []

    def _flush(self) -> None:
        pending = self.pending
        if pending is not None:
            self.generations[-1].add_error(ErrorSeen(pending["cls"], pending["msg"], pending["t"], pending["evidence"]))
            self.pending = None

    def _flag(self, evidence: Evidence, names: tuple[str, ...], t: float | None) -> None:
        if len(self.flagged) >= MAX_FLAGGED or self.generations[-1]._aftermath(t):
            return  # the shutdown's lines after training was done (a peer that left first) are no failure's shape
        key = _repeat_key(names, evidence.text)
        seen = self.repeats.get(key, 0)
        self.repeats[key] = seen + 1
        if seen < MAX_SAME_SHAPE:
            self.flagged.append((evidence, names))
            self.generations[-1].notable.append(evidence)

    def _loss(self, number: int, raw: str) -> None:
        """The loss values a step line prints (every line at first, then every
        16th: a long log's trend is in its samples, and Keras prints one per batch)."""
        self.loss_lines += 1
        if self.loss_lines > 4 * LOSS_KEPT and self.loss_lines % 16:
            return
        for m in _LOSS.finditer(raw[:2000]):
            value = float(m["value"])
            if value == value and abs(value) != float("inf"):
                key = m["key"].lower()
                series = self.losses.get(key)
                if series is None:
                    if len(self.losses) >= 8:
                        continue
                    series = self.losses[key] = LossSeries()
                series.add(value, Evidence(f"{self.origin}:{number}", self.name, raw))

    def feed(self, number: int, raw: str) -> None:
        if self.first is None:
            self.first = Evidence(f"{self.origin}:{number}", self.name, raw)
        if not raw or raw.isspace():
            return
        self.nonblank += 1
        if "oss" in raw or "ntropy" in raw:
            self._loss(number, raw)
        if "/task:" in raw or "tasks to connect" in raw or "stragglers" in raw:
            self.coordination.append(Evidence(f"{self.origin}:{number}", self.name, raw))
            if len(self.coordination) > 2 * MAX_COORDINATION:
                del self.coordination[:MAX_COORDINATION]
        low = raw.lower()
        if self.watched is not None:
            for pattern in self.watch.matched(raw, low):  # type: ignore[union-attr]
                hits = self.watched[pattern]
                if len(hits) < MAX_EVIDENCE:
                    hits.append(Evidence(f"{self.origin}:{number}", self.name, raw))
        if self.stragglers:
            if TASK_LINE.match(unwrap(raw)):
                self._flag(Evidence(f"{self.origin}:{number}", self.name, raw), ("task_line",), self.last_t)
                return
            self.stragglers = False
        is_json = raw[0] == "{" or (raw[0] in " \t" and raw.lstrip().startswith("{"))
        words = None if is_json else notable(raw, low)
        if not (is_json or self.pending is not None or words is not None):
            if "/step" in raw:  # a Keras progress line: its step time only
                match = _KERAS_STEP_TIME.search(raw)
                if match:
                    self.generations[-1].add_step_ms(float(match["value"]) * _STEP_SCALE[match["unit"]])
            return
        evidence = Evidence(f"{self.origin}:{number}", self.name, raw)
        text = unwrap(raw)
        event = parse_line(text, self.name, 0.0) if is_json else None
        if isinstance(event, LogLine):
            event = None
        t = event.t if event is not None and event.t else line_time(text)
        gen = self.generations[-1]
        if t is not None:
            gen.first_t = t if gen.first_t is None else gen.first_t
            gen.last_t = t
            self.last_t = t
        else:
            t = self.last_t  # a line without a stamp came after the last stamped one
        pending = self.pending
        if pending is not None:
            goes_on = not ends_message(text)
            if event is None and goes_on and pending["lines"] < MAX_MESSAGE_LINES:
                if len(pending["msg"]) < MAX_MESSAGE_CHARS:
                    pending["msg"] += "\n" + text
                pending["lines"] += 1
                names = shapes_in(text, words)
                if names:
                    self._flag(evidence, names, t)
                return
            self._flush()
        if event is not None:
            _event(event, Evidence(evidence.where, self.name, evidence_text(event)), self.generations)
            return
        reading = _text_line(text, t, evidence, self.generations[-1])
        names = flags(reading)
        if names:
            self._flag(evidence, names, t)
            self.stragglers = "Example stragglers:" in text
        found = reading.exception
        if found:
            self.pending = {"cls": found.cls, "msg": found.message, "t": t, "evidence": evidence, "lines": 0}

    def finish(self, log: WorkerLog | None = None) -> WorkerObservations:
        self._flush()
        kept = [
            g
            for g in self.generations
            if g.steps or g.errors or g.exits or g.hang_lines or g.start or g.step_ms or g.teardown_exits
        ]
        return WorkerObservations(
            self.name,
            worker_index(self.name),
            kept or [Generation()],
            log,
            self.flagged,
            first=self.first,
            watched=self.watched,
            losses=self.losses,
            coordination=self.coordination,
        )


def observe(log: WorkerLog, watch: Watch | None = None) -> WorkerObservations:
    """Every observation in one worker's log, by generation. A line that
    passes no gate word (``notable``) is skipped: it cannot hold any shape read
    here, and a 100 MB log holds millions of them."""
    observer = Observer(log.name, log.origin, watch)
    for number, raw in zip(log.line_numbers, log.lines):
        observer.feed(number, raw)
    return observer.finish(log)


def observe_files(paths: list, watch: Watch | None = None) -> tuple[list[WorkerObservations], list[str]]:
    """The observations of every worker log the paths hold (as ``read_logs``
    splits them), read in one pass without keeping the lines: memory stays
    bounded whatever the logs' length (see MAX_FLAGGED, MAX_KEPT)."""
    notes: list[str] = []
    observers: dict[tuple[str, str | None], Observer] = {}
    preambles: dict[str, str | None] = {}
    for file, lines in iter_files(paths, notes):
        origin = str(file)
        splitter = Splitter(file.stem)
        for name, number, text in splitter.split(lines):
            observer = observers.get((origin, name))
            if observer is None:
                observer = observers[(origin, name)] = Observer(
                    name if name is not PREAMBLE else file.stem, origin, watch
                )
            observer.feed(number, text)
        preambles[origin] = splitter.preamble_name
    if not any(o.nonblank for o in observers.values()):
        raise empty_logs_error(paths)
    keys, kept = [], []
    for (origin, name), observer in observers.items():
        if name is PREAMBLE:
            name = preambles[origin]
            if name is None:
                continue
        keys.append((origin, name))
        kept.append(observer)
    workers = []
    for observer, shown in zip(kept, unique_names(keys)):
        workers.append(renamed(observer.finish(), shown) if shown != observer.name else observer.finish())
    return settle(workers), notes


def renamed(w: WorkerObservations, name: str) -> WorkerObservations:
    """The observations of a log whose name was settled after it was read
    (a dump's preamble, two files of the same name), every evidence line with it."""

    def ev(e: Evidence | None) -> Evidence | None:
        return None if e is None else Evidence(e.where, name, e.text)

    for g in w.generations:
        g.steps = [dataclasses.replace(s, evidence=ev(s.evidence)) for s in g.steps]
        g.errors = [dataclasses.replace(e, evidence=ev(e.evidence)) for e in g.errors]
        g.exits = [dataclasses.replace(x, evidence=ev(x.evidence)) for x in g.exits]
        g.torn = [dataclasses.replace(x, evidence=ev(x.evidence)) for x in g.torn]
        g.hang_lines = [(t, ev(e)) for t, e in g.hang_lines]
        g.notable = [ev(e) for e in g.notable]
        g.start = ev(g.start)
    w.flagged = [(ev(e), names) for e, names in w.flagged]
    w.coordination = [ev(e) for e in w.coordination]
    if w.watched is not None:
        w.watched = {p: [ev(e) for e in hits] for p, hits in w.watched.items()}
    w.first = ev(w.first)
    for series in w.losses.values():
        series.early = [(v, ev(e)) for v, e in series.early]
        series.late = [(v, ev(e)) for v, e in series.late]
        series.peak = (series.peak[0], ev(series.peak[1])) if series.peak else None
    w.name, w.index = name, worker_index(name)
    return w


MAX_COORDINATION = 200  # coordination-service lines kept per worker (the last ones)
REDEPLOY_AFTERMATH_S = 3.0
STOP_CODE = 137  # the runner's redeploy stops workers without grace: SIGKILL
# How long before its restart line a worker's SIGKILL exit can be the runner's stop: it
# stops every worker, then recreates them, and only then writes the restart lines
# (under load the whole round takes seconds; a kill long before it is a failure's).
REDEPLOY_STOP_S = 30.0


def _forget_redeploy(gen: Generation, restart_t: float) -> None:
    """This framework's runner redeploys workers to apply a configuration (its
    ``restart`` event says ``redeploy: ...``): it stops them without grace, so
    their exits and the errors the stop caused in its last seconds are the
    runner's doing, not the failure's. A user's logs have no such event."""
    since = restart_t - REDEPLOY_AFTERMATH_S
    gen.exits[:] = [e for e in gen.exits if e.t is None or e.t < since]
    gen.errors[:] = [e for e in gen.errors if e.t is None or e.t < since]


def _stop_exit_t(gen: Generation, restart_t: float) -> float | None:
    """When the runner's redeploy stopped this worker, as its log shows it: the
    generation's last exit, if a SIGKILL shortly before the restart line."""
    last = gen.exits[-1] if gen.exits else None
    if last is None or last.code != STOP_CODE or last.t is None or not 0 <= restart_t - last.t <= REDEPLOY_STOP_S:
        return None
    return last.t


def settle(workers: list[WorkerObservations]) -> list[WorkerObservations]:
    """What only the logs of every worker together show: a redeploy (this
    framework's runner; a user's logs have none) stops the workers one after
    another and writes each one's restart line only once it has recreated them
    all. The first SIGKILL of the round (or its first restart line) dates the
    stop for every worker: a peer's `Socket closed` when the first one was
    stopped, and its own stop, may come well over 3 s before its own restart
    line on a loaded machine. Their exits and errors from 3 s before that on
    are the runner's doing and are dropped."""
    rounds: dict[int, list[tuple[Generation, Generation]]] = {}
    for w in workers:
        n = 0
        for old, new in zip(w.generations, w.generations[1:]):
            if new.redeployed:
                rounds.setdefault(n, []).append((old, new))
                n += 1
    for pairs in rounds.values():
        times = [t for _, new in pairs for t in (new.stopped_t, new.first_t) if t is not None]
        if not times:
            continue
        since = min(times) - REDEPLOY_AFTERMATH_S
        for old, _ in pairs:
            old.exits[:] = [e for e in old.exits if e.t is None or e.t < since]
            old.errors[:] = [e for e in old.errors if e.t is None or e.t < since]
    return workers


def observe_all(logs: list[WorkerLog], watch: Watch | None = None) -> list[WorkerObservations]:
    """Each log's observations (``observe``), then what they show together (``settle``)."""
    return settle([observe(log, watch) for log in logs])


def _event(event, evidence: Evidence, generations: list[Generation]) -> None:
    gen = generations[-1]
    stopped_t = None
    if isinstance(event, RestartEvent) and event.reason.startswith("redeploy"):
        stopped_t = _stop_exit_t(gen, event.t)
        _forget_redeploy(gen, event.t)
    restarted = isinstance(event, RestartEvent) or (isinstance(event, StartEvent) and gen.start is not None)
    if restarted and (gen.start or gen.steps or gen.errors or gen.exits or gen.hang_lines):
        redeploy = isinstance(event, RestartEvent) and event.reason.startswith("redeploy")
        generations.append(
            Generation(first_t=event.t, last_t=event.t, redeployed=redeploy, stopped_t=stopped_t if redeploy else None)
        )
        gen = generations[-1]
    if isinstance(event, StartEvent):
        gen.start = evidence
        gen.fingerprint = {"tf_version": event.tf_version, **event.fingerprint}
    elif isinstance(event, StepEvent):
        gen.steps.append(
            StepSeen(event.step, event.t, event.batch_digest, evidence, tuple(event.replica_batch_digests))
        )
    elif isinstance(event, ErrorEvent):
        short = event.error_class.rsplit(".", 1)[-1]
        # the traceback printed beside the event says the same: keep one
        if not any(e.cls == short and e.message[:80] == event.message[:80] for e in gen.errors):
            gen.add_error(ErrorSeen(short, event.message, event.t, evidence))
    elif isinstance(event, ExitEvent):
        gen.add_exit(ExitSeen(event.exit_code, event.oom_killed, evidence, event.t))
    elif isinstance(event, DoneEvent):
        gen.done_t = event.t
    elif isinstance(event, PhaseEvent) and event.phase == "teardown":
        gen.torn_down_t = event.t


_STEP_SCALE = {"ms": 1.0, "s": 1000.0, "us": 0.001}


@dataclass(frozen=True)
class LineReading:
    """What the reader makes of one text line (its time stamp aside)."""

    names: tuple[str, ...]  # its shapes
    hang: bool  # a line a worker prints while it waits for its peers
    error: tuple[str, str] | None  # (class, message) of the error it states without a traceback
    exception: ExceptionLine | None  # a Python exception's first line: its message may go on
    exited: ExitLine | None
    step_ms: float | None  # Keras' "Nms/step"


@functools.lru_cache(maxsize=4096)
def read_line(body: str) -> LineReading:
    """The line's reading, remembered: a long log repeats its lines with new
    time stamps only (``body`` is the line without its leading ISO stamp)."""
    names = shapes_in(body)
    status = status_line(body)
    exception = exception_line(body)
    error = None
    if status and not exception:
        error = status
    elif names and not exception:
        cls = error_class(names)  # a failure shape with no status: the CUDA driver's OOM, NCCL's WARN...
        if cls is not None:
            error = (cls, without_prefix(body))
    step_ms = None
    if "/step" in body:
        match = _KERAS_STEP_TIME.search(body)
        if match:
            step_ms = float(match["value"]) * _STEP_SCALE[match["unit"]]
    return LineReading(names, bool(WAITING.search(body)), error, exception, exit_line(body), step_ms)


def _text_line(text: str, t: float | None, evidence: Evidence, gen: Generation) -> LineReading:
    """Read one log line into ``gen``."""
    reading = read_line(after_stamp(text))
    if reading.hang:
        gen.add_hang(t, evidence)
    if reading.error:
        gen.add_error(ErrorSeen(reading.error[0], reading.error[1], t, evidence))
    if reading.exited:
        exited = reading.exited
        gen.add_exit(ExitSeen(exited[0], exited[1], evidence, t, exited[2]))
    if reading.step_ms is not None:
        gen.add_step_ms(reading.step_ms)
    return reading


def flags(reading: LineReading) -> tuple[str, ...]:
    """What a line is flagged as: its shapes, else what the reader read in it."""
    if reading.names:
        return reading.names
    if reading.error or reading.exception:
        return ("error",)
    if reading.exited:
        return ("exit",)
    return ("waiting",) if reading.hang else ()
