"""Compare the environment fingerprints workers report in their start events.

TF does not check that workers match: 2.20 beside 2.18 trains on silently, an
``LD_LIBRARY_PATH`` that loads another CUDA on one node is invisible. Every
worker reports ``fingerprint`` (``chaos.worker.fingerprint``: Python, platform,
every installed package, the environment variables that change TF); this
module names which worker differs from which, in what.
"""

from __future__ import annotations

from dataclasses import dataclass

from chaos.events import StartEvent

ABSENT = "<absent>"
# What an engineer asks first: which TF, which Python, which environment.
FIRST = ("tf_version", "pkg:tensorflow", "pkg:tf-keras", "pkg:keras", "python", "env:")


def _rank(key: str) -> int:
    return next((i for i, prefix in enumerate(FIRST) if key.startswith(prefix)), len(FIRST))


@dataclass(frozen=True)
class Skew:
    """Worker ``worker`` differs from ``baseline`` in ``diffs`` (key -> (its value, baseline's))."""

    worker: int
    baseline: int
    diffs: dict[str, tuple[str, str]]

    def describe(self, limit: int = 6) -> str:
        items = ordered(self.diffs)
        shown = "; ".join(f"{key}: {mine} vs {theirs}" for key, (mine, theirs) in items[:limit])
        more = f"; and {len(items) - limit} more" if len(items) > limit else ""
        return f"worker-{self.worker} differs from worker-{self.baseline} in {shown}{more}"


def ordered(diffs: dict[str, tuple[str, str]]) -> list[tuple[str, tuple[str, str]]]:
    """The differences, what an engineer asks first (FIRST) first."""
    return sorted(diffs.items(), key=lambda kv: (_rank(kv[0]), kv[0]))


def diff(mine: dict[str, str], theirs: dict[str, str]) -> dict[str, tuple[str, str]]:
    keys = set(mine) | set(theirs)
    return {k: (mine.get(k, ABSENT), theirs.get(k, ABSENT)) for k in sorted(keys) if mine.get(k) != theirs.get(k)}


def fingerprint_of(start: StartEvent) -> dict[str, str]:
    # The TF version is in the packages too; kept explicit for older workers.
    return {"tf_version": start.tf_version, **start.fingerprint}


def skews(starts: dict[int, StartEvent], baseline: int | None = None) -> list[Skew]:
    """Every worker whose fingerprint differs from the baseline's (default: the lowest index)."""
    if not starts:
        return []
    base = min(starts) if baseline is None else baseline
    reference = fingerprint_of(starts[base])
    out = []
    for worker, start in sorted(starts.items()):
        if worker == base:
            continue
        d = diff(fingerprint_of(start), reference)
        if d:
            out.append(Skew(worker, base, d))
    return out
