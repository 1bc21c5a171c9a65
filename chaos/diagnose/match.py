"""Ranking the catalogue against the observations of a job's logs.

For each entry, every signature is judged into a ``Verdict``: pass (matched),
fail (not matched) or unknown (the logs cannot tell). Signatures the logs cannot judge are left out of that entry's total
(plain logs have no fingerprints; that is no evidence against a skew), and so
is a matched ``no_error``: silence is no evidence for a failure, but errors
are evidence against a silent one.

    earned   = sum of weight x credit of the matched signatures
    judged   = sum of the weights of the signatures the logs could judge
    coverage = earned / judged
    score    = earned x coverage - unexplained - kills absent

so an entry gains with each specific symptom it explains, and loses with each
one it expected and the logs show was not there. ``unexplained`` counts the
kill-type exits (137, 134, OOM kill) the logs show that the entry's
signatures do not expect: a SIGKILL is evidence against "a paused worker"
(a worker killed while it hung at bring-up does not count: that kill is the
operator's cure, not a symptom). ``kills absent`` is the same the other way
round: the distinct kill-type exits an entry expects where the logs show how
those workers exited and none was killed that way: every worker exiting 1 is
evidence against "a straggler then killed", however slow its steps were
(a busy machine slows steps too).

An entry is a candidate only if its positive signatures (all but no_error)
earned 1.5 or more. Entries ranked at equal scores (to 1e-6) are tied: their symptoms,
as these logs show them, are the same, and the output says so.

A family ranks by its strongest evidence: when an entry from the field
outscores the measured scenario of its own family, the scenario is listed
first (it has the evidence measured here) but ranked at the field entry's
score, so a weak scenario match does not push its family below another one.

The answer is *confident* only if the entries tied first are all of one
family; tied first across families, the logs cannot tell which failure it is,
and ``chaos diagnose`` says "no confident match" (with the candidates and the
lines worth a look) rather than guess.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from chaos.checks.verdict import Status, Verdict
from chaos.diagnose.catalogue import KnownFailure
from chaos.diagnose.history import LogHistory
from chaos.diagnose.observations import Evidence, WorkerObservations
from chaos.diagnose.signatures import ExitSignature, Signature

MIN_STRONG = 1.5
TIE = 1e-6
KILL_CODES = (137, 134)


@dataclass(frozen=True)
class SignatureResult:
    signature: Signature
    verdict: Verdict

    @property
    def earned(self) -> float:
        """The weight a passing verdict earns (its signature's credit of it); 0 otherwise."""
        return self.signature.weight * self.signature.credit(self.verdict) if self.verdict.passed else 0.0


@dataclass(frozen=True)
class Match:
    entry: KnownFailure
    results: tuple[SignatureResult, ...]
    score: float
    coverage: float
    unexplained: tuple[Evidence, ...]
    capped_from: float | None = None  # a field entry ranked below its family's scenario: its own score
    lifted_to: float | None = None  # a scenario ranked at the score of a field entry of its own family
    kills_absent: tuple[Signature, ...] = ()  # the kill-type exits it expects that the logs show did not happen

    @property
    def ranked_at(self) -> float:
        """The score the ranking orders by: the own score, or the family's field evidence (``lifted_to``)."""
        return self.lifted_to if self.lifted_to is not None else self.score

    @property
    def matched(self) -> list[SignatureResult]:
        return [r for r in self.results if r.verdict.status is Status.PASS]

    @property
    def missed(self) -> list[SignatureResult]:
        return [r for r in self.results if r.verdict.status is Status.FAIL]

    @property
    def untold(self) -> list[SignatureResult]:
        return [r for r in self.results if r.verdict.status is Status.UNKNOWN]

    @property
    def candidate(self) -> bool:
        return sum(r.earned for r in self.matched if r.signature.positive) >= MIN_STRONG


def _kill_exits(workers: list[WorkerObservations]) -> list:
    """Kill-type exits of a worker that was training: killing a worker that
    hangs at bring-up is the operator's cure, not a symptom."""
    return [
        e
        for w in workers
        for g in w.generations
        if g.steps or not g.hang_lines
        for e in g.exits
        if e.exit_code in KILL_CODES or e.oom_killed
    ]


def _exits_known(signature: ExitSignature, workers: list[WorkerObservations]) -> bool:
    """Whether the logs say how every worker the exit signature names exited
    (a log whose name gives no index may be any of them)."""
    wanted = None if signature.workers is None else set(signature.workers)
    targets = [w for w in workers if wanted is None or w.index is None or w.index in wanted]
    return bool(targets) and all(w.exits for w in targets)


def judge_entry(entry: KnownFailure, logs: LogHistory) -> Match:
    results = tuple(SignatureResult(s, s.judge(logs)) for s in entry.signatures)
    workers = logs.workers
    counted = [r for r in results if r.signature.positive or r.verdict.status is Status.FAIL]
    earned = sum(r.earned for r in counted)
    judged = sum(r.signature.weight for r in counted if r.verdict.status is not Status.UNKNOWN)
    coverage = earned / judged if judged else 0.0
    exits = [s for s in entry.signatures if isinstance(s, ExitSignature)]
    unexplained = tuple(
        e.evidence for e in _kill_exits(workers) if not any(s.accepts(e.exit_code, e.oom_killed) for s in exits)
    )
    distinct = len({(e.exit_code, e.oom_killed) for e in _kill_exits(workers) if e.evidence in unexplained})
    # and the other way round: the kill it expects, where the logs show how those workers exited and none was killed
    absent = tuple(
        r.signature
        for r in results
        if isinstance(r.signature, ExitSignature)
        and r.verdict.status is Status.FAIL
        and (r.signature.code in KILL_CODES or r.signature.oom_killed)
        and _exits_known(r.signature, workers)
    )
    missing = len({(s.code, bool(s.oom_killed)) for s in absent})
    return Match(entry, results, earned * coverage - distinct - missing, coverage, unexplained, kills_absent=absent)


FIELD_BELOW = 0.01  # how far below its family's best scenario a field entry is ranked


def rank(entries: list[KnownFailure], workers: list[WorkerObservations]) -> list[Match]:
    """The candidates, most likely first (ties in catalogue order). An entry
    from the field never ranks above a candidate scenario of its own family:
    the scenario says the same family with evidence measured here, so the
    field entry is ranked just below the scenario (``capped_from`` keeps its
    own score). Where the field entry scored more, the family's best scenario
    is ranked at the field entry's score (``lifted_to``): a family ranks by its
    strongest evidence, its measured scenario first."""
    logs = LogHistory(workers)
    matches = [judge_entry(e, logs) for e in entries if e.diagnosable]
    candidates = [m for m in matches if m.candidate and m.score > 0]
    best_scenario: dict[str, float] = {}
    best_field: dict[str, float] = {}
    for m in candidates:
        best = best_field if m.entry.from_field else best_scenario
        best[m.entry.family] = max(best.get(m.entry.family, 0.0), m.score)
    adjusted = []
    for m in candidates:
        family = m.entry.family
        ceiling = best_scenario.get(family)
        if ceiling is None:
            adjusted.append(m)
            continue
        ceiling = max(ceiling, best_field.get(family, 0.0))
        if m.entry.from_field and m.score > ceiling - FIELD_BELOW:
            m = replace(m, score=ceiling - FIELD_BELOW, capped_from=m.score)
        elif (
            not m.entry.from_field
            and best_field.get(family, 0.0) > m.score
            and abs(m.score - best_scenario[family]) <= TIE
        ):
            m = replace(m, lifted_to=best_field[family])
        adjusted.append(m)
    return sorted(adjusted, key=lambda m: (-round(m.ranked_at / TIE), -m.coverage))


def tied_first(ranked: list[Match]) -> list[Match]:
    """Every match ranked at the best one's score."""
    if not ranked:
        return []
    return [m for m in ranked if abs(m.ranked_at - ranked[0].ranked_at) <= TIE]


def confident(ranked: list[Match]) -> bool:
    """A match, and the entries tied first all of one family: tied across
    families, the logs cannot tell which failure it is."""
    return bool(ranked) and len({m.entry.family for m in tied_first(ranked)}) == 1


def suspicious(workers: list[WorkerObservations], limit: int = 12) -> list[Evidence]:
    """Lines worth a look when nothing in the catalogue matches: errors, exits,
    the lines a worker waits at, and the lines of known failure shapes."""
    out: list[Evidence] = []
    for w in workers:
        for gen in w.generations:
            out.extend(e.evidence for e in gen.errors)
            out.extend(e.evidence for e in gen.exits if e.exit_code not in (None, 0) or e.oom_killed or e.reason)
            out.extend(e for _, e in gen.hang_lines[-2:] if not gen.steps)
        out.extend(e for e, names in w.flagged if names not in (("error",), ("exit",), ("waiting",), ("task_line",)))
    seen, unique = set(), []
    for e in out:
        if e.where not in seen:
            seen.add(e.where)
            unique.append(e)
    return unique[:limit]
