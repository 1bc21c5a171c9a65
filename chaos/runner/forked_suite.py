"""The scenario suite in a process of its own, for a caller that does other
work in its process while the scenarios run (chaos.pytest_plugin runs the unit
tests beside them).

In one process, what a test changes while it runs (an environment variable, a
module attribute patched to a fake) reaches the scenarios' threads too: a CI run
judged a real scenario on a pytester fake's report, and ran another against a
test's temporary cache folder. A fork taken before the first test keeps the
process as it was then (plugins and conftest fixtures' fakes included), and
nothing a test does later reaches it.

The child runs chaos.runner.suite.Suite and writes one JSON line per event to a
pipe: ``started`` (the scenario's admission, from which the parent's time limit
counts), ``report`` (Report.to_dict) or ``failure`` (a run that broke without a
report), each as it happens. The parent writes ``release`` on a second pipe (and
``dump``: every thread's stack into the log, when a scenario overran); when that pipe closes
(the parent cancelled, or died) the child stops its runs, which tear down before
it exits. The child's own output goes to a log file, named in any error.
"""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

from chaos import SESSION_ENV, interrupts
from chaos.report import Report
from chaos.runner.run import RunOptions
from chaos.runner.suite import WAIT_S, ScenarioOverran, Suite, SuiteEntry

LOG_TAIL_LINES = 20


class SuiteProcessEnded(Exception):
    """The suite's process ended before a scenario reported: a bug or a crash
    (its log says which), never a verdict."""


class ForkedSuite:
    """``Suite``'s interface (start, result, release_exclusive, cancel), run in a forked child."""

    def __init__(
        self, entries: list[SuiteEntry], options: RunOptions, *, jobs: int = 1, hold_exclusive: bool = False
    ) -> None:
        self.entries = entries
        self.options = options
        self.jobs = jobs
        self.hold_exclusive = hold_exclusive
        self.reports: dict[int, Report] = {}
        self.failures: dict[int, str] = {}
        self.started: dict[int, float] = {}
        self._cond = threading.Condition()
        self._ended = False  # the child's pipe closed: nothing more will come
        self._cancelled = False
        self._lost = False  # a scenario never reported: its log is kept (the error names it)
        self._pid: int | None = None
        self._exit_code: int | None = None
        self._control = None
        self.log = Path(tempfile.mkstemp(prefix="tfchaos-suite-", suffix=".log")[1])

    # --- parent ------------------------------------------------------------

    def start(self) -> ForkedSuite:
        from_child, to_parent = os.pipe()
        from_parent, to_child = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child never returns
            os.close(from_child)
            os.close(to_child)
            _child(self, to_parent, from_parent)
        self._pid = pid
        os.close(to_parent)
        os.close(from_parent)
        self._control = os.fdopen(to_child, "w", buffering=1)
        threading.Thread(target=self._read, args=(from_child,), name="suite-process", daemon=True).start()
        return self

    def _read(self, fd: int) -> None:
        with os.fdopen(fd) as lines:
            for line in lines:
                message = json.loads(line)
                with self._cond:
                    index = message["index"]
                    if "started" in message:
                        self.started[index] = time.monotonic()
                    elif "report" in message:
                        self.reports[index] = Report.from_dict(message["report"])
                    else:
                        self.failures[index] = message["failure"]
                    self._cond.notify_all()
        with self._cond:
            self._ended = True
            self._cond.notify_all()

    def release_exclusive(self) -> None:
        self._send("release")

    def _send(self, command: str) -> None:
        try:
            self._control.write(command + "\n")
        except (OSError, ValueError):  # the child is gone (its end is reported by result) or we cancelled
            pass

    def done(self, index: int) -> bool:
        return index in self.reports or index in self.failures

    def result(self, index: int, limit_s: float | None = None) -> Report:
        """Wait for the i-th report, as Suite.result does."""
        name = self.entries[index].scenario.name
        with self._cond:
            while not self.done(index):
                if self._cancelled:
                    raise interrupts.Cancelled
                if self._ended:
                    self._lost = True
                    raise SuiteProcessEnded(self._ended_early(name))
                started = self.started.get(index)
                if limit_s is not None and started is not None and time.monotonic() - started > limit_s:
                    self._send("dump")  # where each of its threads is stuck, into the log kept
                    self._lost = True
                    raise ScenarioOverran(name, limit_s, f"; the stacks of the scenarios' threads are in {self.log}")
                self._cond.wait(WAIT_S)
        if index in self.failures:
            raise SuiteProcessEnded(f"scenario {name}: its run broke: {self.failures[index]} (log: {self.log})")
        return self.reports[index]

    def _ended_early(self, name: str) -> str:
        code = self._wait()
        try:
            tail = "".join(self.log.read_text(errors="replace").splitlines(keepends=True)[-LOG_TAIL_LINES:])
        except OSError:
            tail = ""
        return f"the scenarios' process ended (exit {code}) before scenario {name} reported; its log is {self.log}" + (
            f", ending:\n{tail}" if tail else ""
        )

    def _wait(self) -> int | None:
        if self._exit_code is None and self._pid is not None:
            _, status = os.waitpid(self._pid, 0)
            self._exit_code = os.waitstatus_to_exitcode(status)
        return self._exit_code

    def cancel(self) -> None:
        """Stop every live run and wait until the child has torn them down and exited."""
        with interrupts.deferred():
            with self._cond:
                self._cancelled = True
                self._cond.notify_all()
            if self._control is not None:
                try:
                    self._control.close()  # the child's cue to stop
                except OSError:
                    pass
            code = self._wait()
        if code in (0, 130) and not self.failures and not self._lost:  # finished or stopped as asked
            self.log.unlink(missing_ok=True)


# --- child -----------------------------------------------------------------


def _child(suite: ForkedSuite, to_parent: int, from_parent: int) -> None:
    code = 1
    try:
        log = os.open(suite.log, os.O_WRONLY | os.O_APPEND)
        os.dup2(log, 1)  # not the parent's (pytest's capture files)
        os.dup2(log, 2)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        sys.stdout = open(1, "w", buffering=1, closefd=False)  # pytest had replaced both
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        interrupts.install()  # SIGTERM tears down as Ctrl-C does
        # A session of its own: the integration tests beside the scenarios remove what
        # their session left (tests/integration/run_scope.py), never a live scenario's.
        # (None set: the child's first run makes one, never the parent's.)
        if os.environ.get(SESSION_ENV):
            os.environ[SESSION_ENV] += "-suite"
        code = _serve(suite, os.fdopen(to_parent, "w", buffering=1), from_parent)
    except BaseException:
        traceback.print_exc()
    finally:
        os._exit(code)  # never the parent's atexit handlers, pytest's or anyone's


def _serve(forked: ForkedSuite, out, from_parent: int) -> int:
    lock = threading.Lock()

    def send(**message) -> None:
        with lock:
            out.write(json.dumps(message) + "\n")

    suite = Suite(
        forked.entries,
        forked.options,
        jobs=forked.jobs,
        hold_exclusive=forked.hold_exclusive,
        on_admit=lambda i: send(index=i, started=True),
    )
    threading.Thread(target=_listen, args=(from_parent, suite), name="suite-control", daemon=True).start()
    suite.start()
    unsent = set(range(len(forked.entries)))
    try:
        # Sent from here, never from the run's thread (on_report), which a CI run showed
        # can still be about to send the last report when this loop is done and the
        # process exits. Sent as each run ends, not in the entries' order: the parent's
        # time limit counts from a scenario's start, and a CI run judged two scenarios
        # that had ended overran, their reports held back behind an exclusive one
        # (those run last) ahead of them in the list.
        while unsent:
            for index in suite.wait_done(unsent):
                unsent.discard(index)
                try:
                    report = suite.result(index)
                except KeyboardInterrupt:
                    raise
                except BaseException as exc:  # a bug in the run, kept for the parent to raise
                    traceback.print_exception(exc)
                    send(index=index, failure=f"{type(exc).__name__}: {exc}")
                else:
                    send(index=index, report=report.to_dict())
    except KeyboardInterrupt:  # the parent closed the control pipe, Ctrl-C or SIGTERM
        suite.cancel()
        return 130
    return 0


def _listen(fd: int, suite: Suite) -> None:
    with os.fdopen(fd) as commands:
        for command in commands:
            if command.strip() == "release":
                suite.release_exclusive()
            elif command.strip() == "dump":
                faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
    os.kill(os.getpid(), signal.SIGTERM)  # the parent cancelled or died: stop (main thread) and tear down
