"""When the agent writes its step events: several to one ``write``, not one each.

Each ``write`` to a container's stdout costs the machine over 100 us (the log
pipeline behind the pipe wakes for it: measured in a one-process TF loop, a line
a write +133 us a step, the same lines five to a write +46 us;
``benchmarks/agent_overhead.py --lines``), more than the rest the agent does in a step. So
a step event waits, at most WINDOW_S, and goes out with the ones after it, each
still its own line with its own time ``t`` (the timeline is ordered by ``t``).

A step event is written at once when the runner acts on it: the first step past
a step the scenario's faults wait for (``at`` or ``until``: the runner passes
them in WATCH_ENV), the first step of a new epoch (an epoch trigger), a step
number lower than the last written (a restore: the count runs again); and every
other kind of event is written at once, with the steps before it. So a fault
fires and heals on the step it names as before; what waits is the rest, and a
worker killed meanwhile loses at most WINDOW_S of step events (its checkpoints,
restores, errors and done are never held).
"""

from __future__ import annotations

import bisect
import os
import threading
import time

WATCH_ENV = "CHAOS_AGENT_WATCH"  # "100,130": steps the runner acts on
WINDOW_S = 0.05  # a step event waits at most this long (a 10 ms step: one write per 5 steps)


def watch_text(steps) -> str:
    """WATCH_ENV's value for ``steps`` (the runner's side)."""
    return ",".join(str(s) for s in sorted(set(steps)))


def watched_steps(environ=None) -> tuple[int, ...]:
    """The steps WATCH_ENV names, sorted; none for an unset or unreadable value (then only the window holds)."""
    text = (os.environ if environ is None else environ).get(WATCH_ENV, "")
    try:
        return tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        return ()


class StepBatching:
    """Decides, under its owner's lock, whether a step event is written now; writes the held
    ones from a thread of its own when their window ends (``write``, the owner's, with the lock held)."""

    def __init__(self, write, lock, steps=None, window_s: float = WINDOW_S, clock=time.monotonic) -> None:
        self._write_held = write
        self._steps = tuple(sorted(steps)) if steps is not None else watched_steps()
        self._window_s = window_s
        self._clock = clock
        self._last_write = -float("inf")
        self._written: tuple[int, int] | None = None  # (step, epoch) of the last step event written
        self._last: tuple[int, int] | None = None  # of the last step event seen
        self._held = False
        self._wake = threading.Condition(lock)
        self._thread: threading.Thread | None = None

    def now(self, step: int, epoch: int) -> bool:
        """Whether a step event (its ``step`` and ``epoch``) goes out now; if not, it is held.
        Every other event goes out at once (the owner does not ask)."""
        last, self._last = self._last, (step, epoch)
        if self._due(step, epoch, last):
            return True
        if not self._held:
            self._held = True
            self._start()
            self._wake.notify()
        return False

    def _due(self, step: int, epoch, last) -> bool:
        if self._clock() - self._last_write >= self._window_s or self._written is None:
            return True
        if last is not None and step < last[0]:  # counted again from a restore
            return True
        if epoch != self._written[1]:
            return True
        i = bisect.bisect_right(self._steps, self._written[0])  # a watched step in (written, step]
        return i < len(self._steps) and self._steps[i] <= step

    def wrote(self) -> None:
        """The owner wrote what it held (with the caller's lock held)."""
        self._last_write = self._clock()
        self._held = False
        if self._last is not None:
            self._written = self._last

    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="tfchaos-agent-events", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        with self._wake:
            while True:
                if not self._held:
                    self._wake.wait()
                    continue
                left = self._last_write + self._window_s - self._clock()
                if left > 0:
                    self._wake.wait(left)
                    continue
                try:
                    self._write_held()
                except Exception:  # noqa: BLE001 - a closed stdout: the job's business, never its crash
                    self._held = False
