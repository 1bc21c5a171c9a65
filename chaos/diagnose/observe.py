"""One worker's log read line by line (``Observer``) into its observations
(``chaos.diagnose.observations``): errors, exits, steps, start fingerprints,
hang lines, each with the line that says it (the evidence shown to the user).

Three kinds of text are understood:

* JSON event lines of this framework's harness or agent (``chaos.events``),
  into the worker's generations (``chaos.diagnose.generations``);
* Python exceptions: ``tensorflow.python.framework.errors_impl.UnavailableError:
  <message>`` (after a traceback or logged on its own), the message going on
  over the following lines until a new record starts;
* TF's C++ log lines and kubectl's text: gRPC statuses (``UNAVAILABLE: Socket
  closed`` is an ``UnavailableError``), exit codes, OOM kills, the lines a
  worker stops at while it waits for its peers, Keras' ``ms/step``.

What a line says is read by the one log grammar (``chaos.workload.grammar``) and
``chaos.diagnose.line_reading``; the catalogue's own patterns by ``chaos.diagnose.watch``.
"""

from __future__ import annotations

import dataclasses
import re

from chaos.diagnose.generations import Generation, add_event, settle
from chaos.diagnose.line_reading import LineReading, flags, keras_step_ms, notable, read_line
from chaos.diagnose.logs import PREAMBLE, Splitter, WorkerLog, empty_logs_error, iter_files, unique_names, worker_index
from chaos.diagnose.observations import LOSS_KEPT, MAX_EVIDENCE, Evidence, LossSeries, WorkerObservations
from chaos.diagnose.read_events import error_read, exit_read
from chaos.diagnose.shapes import shapes_in
from chaos.diagnose.watch import Watch
from chaos.events import LogLine, parse_line
from chaos.events_text import evidence_text
from chaos.stragglers import task_name
from chaos.workload.grammar import MAX_MESSAGE_LINES, after_stamp, ends_message, line_time, unwrap

MAX_MESSAGE_CHARS = 20_000
# What a worker's observations keep, whatever the log's length (and per generation: generations.MAX_KEPT).
MAX_FLAGGED = 2000  # flagged lines per worker (after MAX_SAME_SHAPE of each kind)
MAX_SAME_SHAPE = 3  # flagged lines kept per (shapes, text without digits): a long log repeats its errors
MAX_COORDINATION = 200  # coordination-service lines kept per worker (the last ones)
# "loss = 3.54", "cross_entropy = 3936.8", "- loss: 0.1038", "train loss:1.1", "Total loss is 721.2"
_LOSS = re.compile(
    r"(?<![A-Za-z_])(?P<key>(?:[A-Za-z]+_)?(?:loss|cross_entropy|xent))\b[\"']?\s*(?:[:=]|\bis\b)\s*"
    r"(?P<value>[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\d.])",
    re.IGNORECASE,
)
_NO_DIGITS = str.maketrans("", "", "0123456789.:")


def _repeat_key(names: tuple[str, ...], text: str) -> tuple:
    return names, text[:200].translate(_NO_DIGITS)


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
            self.generations[-1].add_error(
                error_read(pending["error_class"], pending["msg"], pending["t"], pending["evidence"])
            )
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
        if "/task:" in raw or "tasks to connect" in raw or "stragglers" in raw or "Remote daemon" in raw:
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
            # a line that is only a task name: the coordination service's list (chaos.stragglers reads it too)
            if task_name(unwrap(raw)) is not None:
                self._flag(Evidence(f"{self.origin}:{number}", self.name, raw), ("task_line",), self.last_t)
                return
            self.stragglers = False
        is_json = raw[0] == "{" or (raw[0] in " \t" and raw.lstrip().startswith("{"))
        words = None if is_json else notable(raw, low)
        if not (is_json or self.pending is not None or words is not None):
            if "/step" in raw:  # a Keras progress line: its step time only
                step_ms = keras_step_ms(raw)
                if step_ms is not None:
                    self.generations[-1].add_step_ms(step_ms)
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
            add_event(event, Evidence(evidence.where, self.name, evidence_text(event)), self.generations)
            return
        reading = _text_line(text, t, evidence, self.generations[-1])
        names = flags(reading)
        if names:
            self._flag(evidence, names, t)
            self.stragglers = "Example stragglers:" in text
        found = reading.exception
        if found:
            self.pending = {
                "error_class": found.qualified,
                "msg": found.message,
                "t": t,
                "evidence": evidence,
                "lines": 0,
            }

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
    (a dump's preamble, two files of the same name), every evidence line with it,
    and every event its lines stated (their source is the log's name)."""

    def ev(e: Evidence | None) -> Evidence | None:
        return None if e is None else Evidence(e.where, name, e.text)

    def moved(events: list) -> list:
        return [
            dataclasses.replace(e, evidence=ev(e.evidence), source=name if e.source == w.name else e.source)
            for e in events
        ]

    for g in w.generations:
        g.steps, g.errors, g.exits, g.torn = moved(g.steps), moved(g.errors), moved(g.exits), moved(g.torn)
        g.hang_lines = [(t, ev(e)) for t, e in g.hang_lines]
        g.notable = [ev(e) for e in g.notable]
        g.start = ev(g.start)
        g.started = moved([g.started])[0] if g.started is not None else None
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


def observe_all(logs: list[WorkerLog], watch: Watch | None = None) -> list[WorkerObservations]:
    """Each log's observations (``observe``), then what they show together (``settle``)."""
    return settle([observe(log, watch) for log in logs])


def _text_line(text: str, t: float | None, evidence: Evidence, gen: Generation) -> LineReading:
    """Read one log line into ``gen``."""
    reading = read_line(after_stamp(text))
    if reading.hang:
        gen.add_hang(t, evidence)
    if reading.error:
        gen.add_error(error_read(reading.error[0], reading.error[1], t, evidence))
    if reading.exited:
        exited = reading.exited
        gen.add_exit(exit_read(exited[0], exited[1], exited[2], t, evidence))
    if reading.step_ms is not None:
        gen.add_step_ms(reading.step_ms)
    return reading
