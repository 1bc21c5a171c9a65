"""How `bin/test` (the CI command) runs the whole suite: three phases.

1. **The scenarios beside the rest**: one pytest session with ``--chaos-scenarios``:
   every shipped scenario (chaos.pytest_plugin runs them side by side by load), the
   unit and proxy tests, and the integration modules marked ``chaos_beside_scenarios``
   beside them. The machine is CPU-bound here (docs/speed.md).
2. **Three lanes at once**: the other integration modules in two pytest sessions side
   by side, and beside them the compare of two heartbeat timeouts, which mostly waits
   for them (30 % busy alone) and judges a difference of 20 s between its two runs,
   followed by the scenarios on a 3-node swarm.
   Run in series they left the machine 40-90 % busy (their deliberate waits:
   interrupts, fault windows, image builds' I/O); together they fill it. Each lane is
   a module list; a module judges no time a neighbour's load breaks, removes nothing
   but its own objects and never rebuilds an image another lane uses.
3. **Alone, last**: two suites at once with a ``chaos clean`` beside them (it judges their
   verdicts' seconds, which the lanes' load broke), then ``chaos clean --all``, which removes
   every live run (beside a lane it skips); the rest of their module runs in lane 2.

Every test module under tests/ is in exactly one phase (tests/unit/test_test_plan.py
checks it), so a new module cannot be left out. Run with no arguments by `bin/test`;
`bin/test ARGS` runs one pytest session with ARGS instead.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# -rfE: each session ends with a line per failed or erroring test (its id and the first line of
# its message), which main() prints again last: CI shows a log's tail only.
PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--durations=60", "-rfE"]
# How much of one such line the closing summary keeps.
SUMMARY_LINE_CHARS = 400
INTEGRATION = "tests/integration"
CLEAN_ALL = f"{INTEGRATION}/test_cleanup.py::test_clean_all_leaves_a_users_container_of_an_image_built_on_ours"
HEARTBEAT_COMPARE = f"{INTEGRATION}/test_compare.py::test_a_longer_heartbeat_timeout_shows_as_a_later_symptom"
# Judges the normal verdicts, recovered_within's 60 s among them, of two suites at once: beside the
# lanes a restart took 63 and 68 s to its first step (rehearsal of f08d2af, 2026-12-02), so alone.
TWO_SUITES = f"{INTEGRATION}/test_cleanup.py::test_two_suites_at_once_and_a_clean_beside_them_give_the_normal_verdicts"

SCENARIOS_BESIDE = [
    "tests/unit",
    "tests/proxy",
    "scenarios",
    f"{INTEGRATION}/test_agent.py",
    f"{INTEGRATION}/test_checkpoint_volume.py",
    f"{INTEGRATION}/test_cluster.py",
    f"{INTEGRATION}/test_matrix.py",
]
# Balanced by their wall time in a rehearsal of this plan (the --durations of each lane):
# lane 1 the example job's suite, the audits, the package and the images (~660 s), lane 2
# the interrupts and cleanup, the packet faults and the report page (~550 s).
LANES = [
    [
        f"{INTEGRATION}/test_user_jobs.py",
        f"{INTEGRATION}/test_audit_example.py",
        f"{INTEGRATION}/test_audit.py",
        f"{INTEGRATION}/test_installed_package.py",
        f"{INTEGRATION}/test_images.py",
        f"{INTEGRATION}/test_compose_by_hand.py",
    ],
    [
        f"{INTEGRATION}/test_cleanup.py",
        "--deselect",
        CLEAN_ALL,
        "--deselect",
        TWO_SUITES,
        f"{INTEGRATION}/test_packet_faults.py",
        f"{INTEGRATION}/test_html_report.py",
        f"{INTEGRATION}/test_audit_card_page.py",
        f"{INTEGRATION}/test_compare.py",
        "--deselect",
        HEARTBEAT_COMPARE,
        f"{INTEGRATION}/test_remote_engine.py",
    ],
]
# Wait-bound (two runs of a 45 s pause): a lane of its own beside the two above (215 s in a
# rehearsal, against ~620 s for each of them), then the swarm modules, one after the other
# (the first builds the node image, which no other lane then rebuilds): the nodes' own test,
# then two scenarios on a 3-node swarm, most of whose time is the worker image going into
# the nodes (~65 s quiet). The remote engine (a dind engine in the node image: `chaos images
# build` and four scenarios there, ~8 min) ends lane 2, the shortest: the node image's build
# takes the engine's build lock, so whichever lane comes to it first builds it once.
# Last in it: the example's loop and Keras 3 scenarios (test_user_jobs_loops.py, six runs at -j 3).
HEARTBEAT_LANE = [
    HEARTBEAT_COMPARE,
    f"{INTEGRATION}/test_swarm_nodes.py",
    f"{INTEGRATION}/test_swarm_backend.py",
    f"{INTEGRATION}/test_user_jobs_loops.py",
]
ALONE = [TWO_SUITES, CLEAN_ALL]


def phases() -> list[tuple[str, list[list[str]]]]:
    """(name, the pytest sessions run at once, each an argument list), in order.
    (``--chaos-scenarios`` last: given a path after it, it would take the path as its own.)"""
    return [
        ("scenarios beside the unit tests", [[*SCENARIOS_BESIDE, "--chaos-scenarios"]]),
        ("integration modules, three lanes", [*LANES, HEARTBEAT_LANE]),
        ("alone, last", [ALONE]),
    ]


def placements() -> list[tuple[str, list[str]]]:
    """Every test path a session runs, with the node ids it deselects."""
    out = []
    for _, sessions in phases():
        for args in sessions:
            deselected = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--deselect"]
            out += [
                (a, deselected)
                for i, a in enumerate(args)
                if not a.startswith("-") and (i == 0 or args[i - 1] != "--deselect")
            ]
    return out


def cpu_ticks() -> tuple[int, int] | None:
    """(busy, idle) jiffies of the whole machine since boot, from /proc/stat (None where there is none)."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields[:8]) - idle, idle


def busy_share(before: tuple[int, int] | None, after: tuple[int, int] | None) -> str:
    """How busy the machine was between two readings: whether a phase was CPU-bound (then only less
    work shortens it) or waiting (then more overlap would), the question every CI-time change asks."""
    if before is None or after is None:
        return "machine busy: unknown"
    busy, idle = after[0] - before[0], after[1] - before[1]
    return f"machine busy {100 * busy / max(1, busy + idle):.0f} %"


def io_stall_us() -> int | None:
    """Microseconds since boot in which every runnable task waited on I/O ("full" in
    /proc/pressure/io; None without PSI). A machine-wide I/O stall stops every run's workers at
    once (heartbeat timeouts on all tasks, restarts that never start): a phase should show none."""
    try:
        full = next(line for line in Path("/proc/pressure/io").read_text().splitlines() if line.startswith("full"))
        return int(full.rsplit("total=", 1)[1])
    except (OSError, StopIteration, ValueError, IndexError):
        return None


def io_stall_share(before: int | None, after: int | None) -> str:
    if before is None or after is None:
        return "I/O stall: unknown"
    return f"I/O stall {(after - before) / 1e6:.0f} s"


def _interrupt(signum, frame):
    raise KeyboardInterrupt


class Sessions:
    """pytest sessions run at once: the first prints as it goes, the others into a
    file each, printed when all are done (a CI log stays readable). Ctrl-C or SIGTERM
    reaches every session, each tears its runs down, and this waits for them."""

    def __init__(self, arg_lists: list[list[str]]) -> None:
        self.arg_lists = arg_lists
        self.procs: list[subprocess.Popen] = []
        self.outputs: list[Path | None] = []
        # Each session's lines naming a failed or erroring test (pytest -rfE), for main()'s summary.
        self.failures: list[list[str]] = [[] for _ in arg_lists]
        self._echo: threading.Thread | None = None

    def run(self) -> list[int]:
        for i, args in enumerate(self.arg_lists):
            if i == 0:
                out = subprocess.PIPE
                self.outputs.append(None)
            else:
                path = Path(tempfile.mkstemp(prefix=f"tfchaos-lane{i + 1}-", suffix=".log")[1])
                self.outputs.append(path)
                out = path.open("wb")
            # A session of its own: a terminal's Ctrl-C reaches only this process, which
            # passes it on once (a second one would cut a session's teardown short).
            self.procs.append(
                subprocess.Popen(
                    [*PYTEST, *args],
                    cwd=ROOT,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    # pytest keeps a failure's message in its short summary only in CI (else it cuts
                    # the line to an 80-column terminal's width, and a long test id leaves no message).
                    env={**os.environ, "CI": os.environ.get("CI") or "true"},
                )
            )
            if i == 0:
                self._echo = threading.Thread(target=self._echo_first, daemon=True)
                self._echo.start()
            else:
                out.close()
        try:
            codes = [p.wait() for p in self.procs]
        except KeyboardInterrupt:
            for p in self.procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGINT)
            codes = [p.wait() for p in self.procs]
            self._print_buffered()
            raise
        self._print_buffered()
        return codes

    def _echo_first(self) -> None:
        """The first session's output, printed as it comes, its failure lines kept."""
        for raw in self.procs[0].stdout:
            line = raw.decode(errors="replace")
            sys.stdout.write(line)
            sys.stdout.flush()
            self.failures[0] += failure_lines(line)

    def _print_buffered(self) -> None:
        if self._echo is not None:
            self._echo.join()
        for i, path in enumerate(self.outputs):
            if path is None:
                continue
            text = path.read_text(errors="replace")
            sys.stdout.write(f"\n======== lane {i + 1}: pytest {' '.join(self.arg_lists[i])} ========\n")
            sys.stdout.write(text)
            sys.stdout.flush()
            self.failures[i] = failure_lines(text)
            path.unlink(missing_ok=True)


def failure_lines(text: str) -> list[str]:
    """pytest -rfE's lines of a session's output: ``FAILED id - message`` and ``ERROR id - message``."""
    return [line[:SUMMARY_LINE_CHARS] for line in text.splitlines() if line.startswith(("FAILED ", "ERROR "))]


def main() -> int:
    signal.signal(signal.SIGTERM, _interrupt)  # CI cancelling the job: as Ctrl-C
    failed: list[str] = []
    what_failed: list[str] = []
    started = time.monotonic()
    for name, sessions in phases():
        print(
            f"\n######## bin/test: {name} ({len(sessions)} session{'s' if len(sessions) > 1 else ''}) ########",
            flush=True,
        )
        t0, ticks0, stall0 = time.monotonic(), cpu_ticks(), io_stall_us()
        sessions_run = Sessions(sessions)
        try:
            codes = sessions_run.run()
        except KeyboardInterrupt:
            print("bin/test: interrupted; each session tore its runs down", file=sys.stderr)
            return 130
        print(
            f"######## bin/test: {name}: exit {codes}, {time.monotonic() - t0:.0f} s, "
            f"{busy_share(ticks0, cpu_ticks())}, {io_stall_share(stall0, io_stall_us())} ########",
            flush=True,
        )
        failed += [f"{name} (session {i + 1}: exit {c})" for i, c in enumerate(codes) if c != 0]
        what_failed += [
            f"  {name}, session {i + 1}: {line}" for i, lines in enumerate(sessions_run.failures) for line in lines
        ]
    total = time.monotonic() - started
    if failed:
        # Last, where a CI log's tail shows it: which tests failed, in every session.
        print("bin/test: what failed:\n" + ("\n".join(what_failed) or "  (no test named: see the sessions above)"))
        print(f"bin/test: FAILED in {total / 60:.1f} min: " + "; ".join(failed), flush=True)
        return 1
    print(f"bin/test: passed in {total / 60:.1f} min", flush=True)
    return 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
