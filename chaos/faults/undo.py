"""What undoes a fault's inject: the steps it took, undone in reverse, each once.

A fault adds the undo of each step as it acts (``Fault.act``), so an inject
that raised half-way is undone as far as it got, and a fault value stays a
frozen value with no memory of what it did: ``undo = fault.inject(cluster)``,
later ``undo(cluster)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from chaos.backends.base import ClusterControl

Step = Callable[[ClusterControl], None]


class Undo:
    def __init__(self) -> None:
        self._steps: list[Step] = []

    def add(self, step: Step) -> None:
        """Undo ``step`` after the ones added later (LIFO, like a stack of changes)."""
        self._steps.append(step)

    def __call__(self, cluster: ClusterControl) -> None:
        """Undo every step added so far; calling it again does nothing more."""
        while self._steps:
            self._steps.pop()(cluster)

    def __bool__(self) -> bool:
        return bool(self._steps)


def clear_overrides(owner: str, workers: Iterable[int]) -> Step:
    """The undo of ``owner``'s overrides of these workers, cleared in order (harmless where none was set)."""
    workers = list(workers)

    def clear(cluster: ClusterControl) -> None:
        for w in workers:
            cluster.clear_override(w, owner)

    return clear


def override_workers(cluster: ClusterControl, undo: Undo, owner: str, workers: Iterable[int], **changes: Any) -> None:
    """Create each of ``workers`` differently from its next (re)start on
    (``WorkerOverrides.override``, chaos.backends.abilities); the undo clears them all, in that order."""
    workers = list(workers)
    undo.add(clear_overrides(owner, workers))  # first: a half-done loop is cleared too
    for w in workers:
        cluster.override(w, owner, **changes)
