"""The catalogue's scenario patterns (``PatternSignature``), looked for while a
log is read (``Watch``): a long log is not kept, so a pattern that may name any
line is searched line by line, and only in lines that hold the literal text the
pattern needs (``required_literals``, read from the parsed pattern)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

try:  # Python >= 3.11 names them so (sre_parse warns there)
    from re import _constants as sre_constants  # type: ignore[attr-defined]
    from re import _parser as sre_parse
except ImportError:  # pragma: no cover
    import sre_constants
    import sre_parse  # type: ignore[no-redef]


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
