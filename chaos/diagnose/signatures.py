"""Signatures: one measured symptom each, judged against the history of every worker
log (``chaos.diagnose.history.LogHistory``): the timeline of the events the logs state,
read by the signatures of errors, exits, batches and environments, and each log's
observations, read by those of what no event states (waits, stalls and speed, which
count within a log's generations, line shapes and patterns). A signature's judgement is the one result every check of
this framework gives (``chaos.checks.verdict.Verdict``): pass (the symptom is
in the logs), fail (the logs show it is not), or unknown (the logs lack what it
needs: no timestamps for a stall, no exit codes, no fingerprints; the reason
says which), with the events that prove it, each carrying the line it was read
from (a line that is no error, exit or step is a ``LogLine`` event).

Weights say how specific a symptom is: an ``UnavailableError`` of any message
is in half the catalogue, ``Collective instance 112 expected type 1`` in one
scenario. They are fixed here, not per scenario, so that adding a scenario
cannot tilt the ranking of the others.
"""

from __future__ import annotations

import bisect
import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from chaos.checks.verdict import Status, Verdict
from chaos.diagnose.history import LogHistory
from chaos.diagnose.missing import missing_tasks
from chaos.diagnose.observations import MAX_EVIDENCE, Evidence, WorkerObservations
from chaos.diagnose.read_events import NO_TIME, error_cls, timed, when
from chaos.diagnose.servers import only_uninformative_targets
from chaos.diagnose.shapes import shapes_in
from chaos.diagnose.watch import required_literals
from chaos.events import ErrorEvent, Event, ExitEvent, LogLine, StartEvent, StepEvent
from chaos.events_text import short_class
from chaos.fingerprints import fingerprint_of
from chaos.workload.grammar import STATUS_CLASSES

QUIET_BEFORE_ERROR_S = 2.0
TF_STATUS_CLASSES = frozenset(STATUS_CLASSES.values()) | {
    "OpError",
    "UnimplementedError",
    "OutOfRangeError",
    "AlreadyExistsError",
    "UnauthenticatedError",
}


Proof = Event | Evidence  # an event read from a line, or the line itself


def as_event(proof: Proof) -> Event:
    """The event a proof is: itself, or, for a bare line, a ``LogLine`` that carries it."""
    if isinstance(proof, Event):
        return proof
    return LogLine(t=NO_TIME, source=proof.log, text=proof.text, evidence=proof)


def proof_lines(verdict: Verdict) -> tuple[Evidence, ...]:
    """The lines a verdict's events were read from, as the user is shown them."""
    return tuple(e.evidence for e in verdict.evidence if isinstance(e.evidence, Evidence))


def _names(indices: Iterable[int] | None) -> str:
    return "" if indices is None else " on " + ", ".join(f"worker-{i}" for i in indices)


class Signature:
    weight: float = 1.0
    positive = True  # evidence that something happened (no_error is not)

    def label(self) -> str:
        raise NotImplementedError

    def judge(self, logs: LogHistory) -> Verdict:
        raise NotImplementedError

    def credit(self, verdict: Verdict) -> float:
        """The share of the weight a passing verdict earns (a partial match earns less)."""
        return 1.0

    # The three answers, each about this signature (``Verdict.check`` is its label).
    def seen(self, proof: Iterable[Proof] = ()) -> Verdict:
        return Verdict(Status.PASS, "in the logs", tuple(map(as_event, proof)), check=self.label(), role="signature")

    def not_seen(self, why: str = "the logs show it is not there") -> Verdict:
        return Verdict(Status.FAIL, why, check=self.label(), role="signature")

    def cannot_tell(self, why: str) -> Verdict:
        return Verdict(Status.UNKNOWN, f"the logs cannot tell: {why}", check=self.label(), role="signature")


@dataclass(frozen=True)
class ErrorSignature(Signature):
    classes: tuple[str, ...]
    message: str = ".*"
    workers: tuple[int, ...] | None = None

    @property
    def specific(self) -> bool:
        return self.message not in ("", ".*")

    @property
    def weight(self) -> float:  # type: ignore[override]
        """A message pattern, or a class that names its cause (JSONDecodeError),
        is specific; TF's status classes alone (UnavailableError) end many failures."""
        generic = all(short_class(c) in TF_STATUS_CLASSES for c in self.classes)
        return 3.0 if self.specific or not generic else 1.5

    def label(self) -> str:
        text = "|".join(self.classes)
        if self.specific:
            text += f" /{self.message}/"
        return text + _names(self.workers)

    def judge(self, logs: LogHistory) -> Verdict:
        shorts = {short_class(c) for c in self.classes}
        pattern = re.compile(self.message)
        full, partial = [], []
        for error in logs.events(ErrorEvent, on=self.workers):
            if not pattern.search(error.message):
                continue
            cls = error_cls(error)
            if cls in shorts:
                full.append(error)
            elif not cls and self.specific:
                partial.append(error)  # the message, on a log line that names no class
        if full or partial:
            return self.seen((full or partial)[:MAX_EVIDENCE])
        return self.not_seen("no such error in the logs")

    def credit(self, verdict: Verdict) -> float:
        """Half, where every line it matched gave the message but no class."""
        errors = [e for e in verdict.evidence if isinstance(e, ErrorEvent)]
        return 0.5 if errors and not any(error_cls(e) for e in errors) else 1.0


@dataclass(frozen=True)
class ExitSignature(Signature):
    code: int | str = "nonzero"
    oom_killed: bool | None = None
    workers: tuple[int, ...] | None = None

    @property
    def weight(self) -> float:  # type: ignore[override]
        base = 0.5 if self.code == "nonzero" else 2.0 if self.code in (137, 134, 143) else 1.0
        return base + (2.0 if self.oom_killed else 0.0)

    def label(self) -> str:
        text = f"exit code {self.code}" + (" (OOM-killed)" if self.oom_killed else "")
        return text + _names(self.workers)

    def accepts(self, code: int | None, oom: bool) -> bool:
        if self.oom_killed and not oom:
            return False
        if self.oom_killed is False and oom:
            return False
        if code is None:
            return bool(self.oom_killed and oom)
        return code != 0 if self.code == "nonzero" else code == self.code

    def judge(self, logs: LogHistory) -> Verdict:
        if not logs.events(ExitEvent):
            return self.cannot_tell("no log says how a worker exited")
        hits = [e for e in logs.events(ExitEvent, on=self.workers) if self.accepts(e.exit_code, e.oom_killed)]
        return self.seen(hits[:MAX_EVIDENCE]) if hits else self.not_seen("no worker exited so")


@dataclass(frozen=True)
class HangSignature(Signature):
    """Stuck at bring-up: a generation that waited for its peers (its last lines
    say so) and never trained, or trained only ``min_s`` after it began waiting."""

    min_s: float = 15.0
    missing: tuple[int, ...] | None = None  # the tasks the waiting worker names, if the logs name any
    weight = 3.0

    def label(self) -> str:
        text = f"no step for {self.min_s:g}+ s at bring-up, waiting for peers"
        return text + (f" ({', '.join(f'worker-{i}' for i in self.missing)} missing)" if self.missing else "")

    def judge(self, logs: LogHistory) -> Verdict:
        workers = logs.workers
        hits: list[Proof] = []
        named: dict[str, Evidence] = {}
        for w in workers:
            for gen in w.generations:
                # TF 1.x's SessionManager on a non-chief worker (`Waiting for model to be ready`):
                # its session is up (its peers answered), it waits for the chief to initialise the
                # variables, not for its peers to connect.
                if not gen.hang_lines or "model_not_ready" in shapes_in(gen.hang_lines[-1][1].text):
                    continue
                if not gen.steps and not gen.errors:
                    hung = [e for _, e in gen.hang_lines[-2:]]
                else:
                    waited_t = gen.hang_lines[-1][0]
                    first = gen.steps[0] if gen.steps else None
                    first_t = when(first) if first else None
                    if not (
                        first and waited_t is not None and first_t is not None and first_t - waited_t >= self.min_s
                    ):
                        continue
                    hung = [gen.hang_lines[-1][1], first]
                hits.extend(hung)
                named.update(missing_tasks(gen.notable))
        if not hits:
            return self.not_seen("no worker waited for its peers so long")
        if self.missing and named:
            if {f"worker-{i}" for i in self.missing} != set(named):
                return self.not_seen("the waiting worker names other tasks missing: " + ", ".join(sorted(named)))
            hits = list(named.values())[:1] + [h for h in hits if h not in named.values()]  # who is missing, first
        return self.seen(hits[:MAX_EVIDENCE])


@dataclass(frozen=True)
class StallSignature(Signature):
    """The job went quiet: no step from any worker for ``min_s``, or for
    ``QUIET_BEFORE_ERROR_S`` before the first error. TF reports a frozen or cut-off
    peer only when a timeout fires (measured 6.9-10 s), a reset, a refused port or a
    killed peer mostly within a second (0.01-0.86 s), so the quiet before the first error
    is what tells them apart; after the error, every failure is quiet until the
    restart. Exits and restarts break the count."""

    min_s: float
    weight = 2.0

    def label(self) -> str:
        quiet = min(self.min_s, QUIET_BEFORE_ERROR_S)
        return f"no step from any worker for {self.min_s:g}+ s, or {quiet:g}+ s before the first error"

    def judge(self, logs: LogHistory) -> Verdict:
        workers = logs.workers
        timeline: list[tuple[float, int, Proof]] = []  # (t, kind: 0 break, 1 step, 2 error)
        for w in workers:
            for i, gen in enumerate(w.generations):
                if i and gen.first_t is not None:
                    timeline.append((gen.first_t, 0, gen.start or w.first))
                timeline += [(t, 1, s) for t, s in timed(gen.steps)]
                timeline += [(t, 2, e) for t, e in timed(gen.errors)]
                timeline += [(t, 0, x) for t, x in timed(gen.exits)]
        if sum(1 for _, kind, _ in timeline if kind == 1) < 2:
            return self.cannot_tell("fewer than two steps with a time")
        last_step: tuple[float, Proof] | None = None
        erred = False
        for t, kind, evidence in sorted(timeline, key=lambda item: (item[0], item[1])):
            if kind == 0:
                last_step = None
            elif kind == 1:
                if last_step and not erred and t - last_step[0] >= self.min_s:
                    return self.seen((last_step[1], evidence))
                last_step, erred = (t, evidence), False
            else:
                if last_step and not erred and t - last_step[0] >= min(self.min_s, QUIET_BEFORE_ERROR_S):
                    return self.seen((last_step[1], evidence))
                erred = True
        return self.not_seen("the steps never paused so long")


@dataclass(frozen=True)
class BringUpStallSignature(Signature):
    """What a ``stall`` check of a fault injected at bring-up measures (no step in
    the fault window, which begins before the first step), as the logs show it:
    no step from any worker for ``min_s`` after a bring-up's wait for its peers
    ended (the generation's last wait line), whether the workers then trained
    late (stuck waiting: a SYN dropped) or connected, failed at the first
    collective and trained only after a restart (a timeout at bring-up). Healthy
    bring-ups measured 4.0-6.6 s from the last wait line to the first step
    (docs/findings.md); a `stall` signature counts from a step, so it never
    sees this one. Logs with no step lines cannot tell."""

    min_s: float
    weight = 3.0  # a hang at bring-up's: the bring-up itself stalls

    def label(self) -> str:
        return f"no step from any worker for {self.min_s:g}+ s after the wait for peers at bring-up"

    def judge(self, logs: LogHistory) -> Verdict:
        workers = logs.workers
        steps = sorted(((t, s) for w in workers for t, s in timed(w.steps)), key=lambda p: p[0])
        if not steps:
            return self.cannot_tell("no step with a time")
        times = [t for t, _ in steps]
        end = max(g.last_t for w in workers for g in w.generations if g.last_t is not None)
        for w in workers:
            for gen in w.generations:
                if not gen.hang_lines or gen.hang_lines[-1][0] is None:
                    continue
                waited_t, waited = gen.hang_lines[-1]
                after = bisect.bisect_right(times, waited_t)
                until, proof = (steps[after][0], (waited, steps[after][1])) if after < len(steps) else (end, (waited,))
                if until - waited_t >= self.min_s:
                    return self.seen(proof)
        return self.not_seen("the first steps came soon after the wait for peers")


@dataclass(frozen=True)
class SlowdownSignature(Signature):
    """Steps became ``factor`` times slower than at the start of the same run:
    ``share`` of ``window`` steps in a row, each. A throttled CPU or a slow link
    slows every step (measured: 15 of 15); a busy machine slows some (at most
    10 of 15 in the runs measured for docs/diagnose.md)."""

    factor: float = 2.0
    window: int = 15  # a sustained slowdown, not a few slow steps while another job takes a core
    slack_ms: float = 10.0  # steps of a few ms double when another process takes a core
    share: float = 0.8
    weight = 2.0

    def label(self) -> str:
        return f"steps {self.factor:g}x slower than at the start"

    def judge(self, logs: LogHistory) -> Verdict:
        workers = logs.workers
        judged = False
        for w in workers:
            # Within one generation: the load on a shared machine changes between a run's
            # generations (a restarted one ran 2.3x slower, no fault, in one measured run), not within seconds.
            for gen in w.generations:
                steps = timed(gen.steps)
                times = [b - a for (a, _), (b, _) in zip(steps, steps[1:])]
                base = statistics.median(times[1 : 1 + self.window]) if len(times) > self.window else None
                start = 1 + self.window  # the first step traces the function
                if base is not None and len(times) - start >= self.window:
                    judged = True
                    slow = [t >= self.factor * base and t - base >= self.slack_ms / 1000 for t in times]
                    for i in range(start, len(times) - self.window + 1):
                        if sum(slow[i : i + self.window]) >= self.share * self.window:
                            return self.seen((steps[i][1], steps[i + self.window][1]))
                elif len(gen.step_ms) >= 3:  # Keras' per-epoch "Nms/step"
                    judged = True
                    if max(gen.step_ms[1:]) >= self.factor * max(gen.step_ms[0], 1e-3):
                        return self.seen()
        if not judged:
            return self.cannot_tell("too few timed steps to compare with the start")
        return self.not_seen("the steps kept their speed")


@dataclass(frozen=True)
class SkewSignature(Signature):
    """Workers started with different environments, in each of ``keys``."""

    keys: tuple[str, ...]
    weight = 3.0

    def label(self) -> str:
        return "workers' environments differ in " + ", ".join(self.keys)

    def judge(self, logs: LogHistory) -> Verdict:
        firsts = [started[0] for started in logs.per_log(StartEvent)]  # each log's first start
        if len(firsts) < 2:
            return self.cannot_tell("fewer than two workers print their environment")
        for key in self.keys:
            if len({fingerprint_of(s).get(key, "<absent>") for s in firsts}) < 2:
                return self.not_seen(f"every worker has the same {key}")
        return self.seen(firsts[:MAX_EVIDENCE])


@dataclass(frozen=True)
class IdenticalBatchesSignature(Signature):
    """Every worker consumed the same batch on ``min_steps`` steps or more."""

    min_steps: int = 5
    weight = 3.0

    def label(self) -> str:
        return f"every worker read the same batch on {self.min_steps}+ steps"

    def judge(self, logs: LogHistory) -> Verdict:
        digests = []  # per lane: step -> (digest, evidence); a lane is a worker, or each of its replicas
        for logged in logs.per_log(StepEvent):
            steps = [s for s in logged if s.batch_digest]
            replicas = max((len(s.replica_batch_digests) for s in steps), default=0)
            if replicas > 1:
                for r in range(replicas):
                    digests.append(
                        {s.step: (s.replica_batch_digests[r], s) for s in steps if len(s.replica_batch_digests) > r}
                    )
            elif steps:
                digests.append({s.step: (s.batch_digest, s) for s in steps})
        if len(digests) < 2:
            return self.cannot_tell("fewer than two workers or replicas print their batch digests")
        same = [
            step for step in digests[0] if all(step in d and d[step][0] == digests[0][step][0] for d in digests[1:])
        ]
        if len(same) < self.min_steps:
            return self.not_seen(f"the workers read the same batch on {len(same)} steps")
        return self.seen([d[same[0]][1] for d in digests][:MAX_EVIDENCE])


@dataclass(frozen=True)
class NoErrorSignature(Signature):
    """Silence is no evidence for a failure, but errors are evidence against a
    silent one: it counts (in ``judged``) only when it is not matched."""

    weight = 0.5
    positive = False

    def label(self) -> str:
        return "no error and no failed exit"

    def judge(self, logs: LogHistory) -> Verdict:
        failed = any(error_cls(e) for e in logs.events(ErrorEvent)) or any(
            e.exit_code not in (None, 0) or e.oom_killed for e in logs.events(ExitEvent)
        )
        return self.not_seen("a worker erred or failed its exit") if failed else self.seen()


@dataclass(frozen=True)
class PatternSignature(Signature):
    """A log line pattern the scenario file states under ``signatures:``."""

    pattern: str
    why: str = ""
    weight = 2.0

    def label(self) -> str:
        return f"a line matching /{self.pattern}/" + (f" ({self.why})" if self.why else "")

    def judge(self, logs: LogHistory) -> Verdict:
        workers = logs.workers
        search = re.compile(self.pattern).search
        needed = required_literals(self.pattern)
        hits: list[Evidence] = []
        for w in workers:  # every line: a scenario's pattern may name any line, not only those the reader keeps
            if w.watched is not None and self.pattern in w.watched:  # searched while the log was read
                hits += w.watched[self.pattern][: MAX_EVIDENCE - len(hits)]
                if len(hits) >= MAX_EVIDENCE:
                    return self._found(hits, workers)
                continue
            for i, text in enumerate(w.texts):
                if needed is not None and not needed.found_in(text.lower() if needed.fold else text):
                    continue  # a cheap substring test first: most lines hold none of them
                if search(text):
                    hits.append(w.evidence(i))
                    if len(hits) >= MAX_EVIDENCE:
                        return self._found(hits, workers)
        return self._found(hits, workers) if hits else self.not_seen("no line matches")

    def _found(self, hits: list[Evidence], workers: list[WorkerObservations]) -> Verdict:
        # A TF that names every server localhost says nothing of TF_CONFIG (chaos.diagnose.servers).
        if only_uninformative_targets(hits, workers):
            return self.cannot_tell("this TF names every server localhost")
        return self.seen(hits)


# --- signatures of the entries known from the field (chaos.diagnose.field) ---------
# Users post excerpts: a line that is not there is no evidence against a
# failure, so these judge "cannot tell", never "not seen", when they find nothing.
EXCERPT = "no such line, and a log posted in the field may be an excerpt"


@dataclass(frozen=True)
class ShapeSignature(Signature):
    """A line of one of the shapes the reader tags (``chaos.diagnose.shapes``)."""

    shapes: tuple[str, ...]
    weight: float = 3.0
    why: str = ""

    def label(self) -> str:
        return self.why or "a line like " + " | ".join(self.shapes)

    def judge(self, logs: LogHistory) -> Verdict:
        workers = logs.workers
        hits = [e for w in workers for e in w.shaped(self.shapes)]
        return self.seen(hits[:MAX_EVIDENCE]) if hits else self.cannot_tell(EXCERPT)


@dataclass(frozen=True)
class FieldExitSignature(ExitSignature):
    """An exit the failure explains (so it is not counted against it), worth no
    score of its own: the lines that say why it exited carry the evidence."""

    @property
    def weight(self) -> float:  # type: ignore[override]
        return 0.0

    def judge(self, logs: LogHistory) -> Verdict:
        judged = super().judge(logs)
        return judged if judged.passed else self.cannot_tell(EXCERPT)
