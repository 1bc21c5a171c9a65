"""Stability benchmark: run the whole shipped suite N times and print, per
scenario, the verdict distribution and the spread of its timings. The target
is identical verdicts in every run for every scenario. Not a test: it prints
figures (docs/notebook/measured.md).

    python benchmarks/suite_stability.py --runs 5                 # the shipped suite, 5 passes
    python benchmarks/suite_stability.py --runs 3 -j 2 scenarios/killed-worker-recovers-from-checkpoint.yaml

Each pass is one ``chaos run`` of the suite (through the same suite runner,
with the same overlap, ``-j``), so the figures include the effect of
scenarios running side by side. Images must be built (``chaos images build``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chaos.runner.entries import DEFAULT_JOBS, load_entries  # noqa: E402
from chaos.runner.run import RunOptions  # noqa: E402
from chaos.runner.suite import run_suite  # noqa: E402


def spread(values: list[float]) -> str:
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.1f}"
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenarios", nargs="*", help="scenario files or folders (default: the shipped suite)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("-j", "--jobs", type=int, default=DEFAULT_JOBS)
    parser.add_argument("--report-dir", help="write each pass's reports to DIR/pass-<i>/")
    args = parser.parse_args()

    entries = load_entries(args.scenarios)
    outcomes: dict[str, Counter] = defaultdict(Counter)
    timings: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    reasons: dict[str, set[str]] = defaultdict(set)
    walls = []
    for i in range(1, args.runs + 1):
        report_dir = Path(args.report_dir) / f"pass-{i}" if args.report_dir else None
        t0 = time.monotonic()
        reports = run_suite(entries, RunOptions(report_dir=report_dir), jobs=args.jobs)
        walls.append(time.monotonic() - t0)
        for r in reports:
            verdicts = " ".join(v.status.value[0].upper() for _, v in r.numbered())
            outcomes[r.scenario][f"{r.status.value} [{verdicts}]"] += 1
            t = r.timings
            for name, value in (
                ("symptom", t.time_to_symptom_s),
                ("recover", t.time_to_recover_s),
                ("total", t.total_s),
            ):
                if value is not None:
                    timings[r.scenario][name].append(value)
            for label, v in r.numbered():
                if not v.passed:
                    reasons[r.scenario].add(f"{label} {v.status.value}: {v.reason}")
            if r.error:
                reasons[r.scenario].add(f"run error: {r.error}")
        print(
            f"pass {i}/{args.runs}: {walls[-1]:.0f} s, "
            f"{sum(r.status.value == 'pass' for r in reports)}/{len(reports)} passed",
            flush=True,
        )

    print()
    width = max(len(e.scenario.name) for e in entries)
    print(
        f"{'scenario':{width}}  {'verdicts over ' + str(args.runs) + ' runs':40}  "
        f"{'symptom s':>18}  {'recover s':>18}  {'total s':>18}"
    )
    stable = 0
    for e in entries:
        name = e.scenario.name
        dist = ", ".join(f"{n}x {o}" for o, n in outcomes[name].most_common())
        stable += len(outcomes[name]) == 1
        t = timings[name]
        print(
            f"{name:{width}}  {dist:40}  {spread(t['symptom']):>18}  {spread(t['recover']):>18}  {spread(t['total']):>18}"
        )
        for reason in sorted(reasons[name]):
            print(f"{'':{width}}    {reason[:200]}")
    print()
    print(
        f"suite wall time per pass: {spread(walls)} s (-j {args.jobs}); "
        f"{stable}/{len(entries)} scenarios gave the same verdicts in every run"
    )
    return 0 if stable == len(entries) else 1


if __name__ == "__main__":
    raise SystemExit(main())
