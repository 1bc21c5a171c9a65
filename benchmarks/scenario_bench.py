"""Scenario benchmark: end-to-end time per phase, time from fault to symptom
against its floor (the configured heartbeat or collective timeout), and whether
repeated runs give the same verdicts. Not a test: it prints figures.

    python benchmarks/scenario_bench.py                       # killed worker, 10 runs
    python benchmarks/scenario_bench.py --runs 3 scenarios/paused-worker-times-out-then-recovers.yaml

Images must be built (`chaos images build`); the uninterrupted reference is
computed once and cached, so it is not part of the per-run figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chaos.images import PROXY_IMAGE, ensure_images, worker_image_tag  # noqa: E402
from chaos.report import write_json  # noqa: E402
from chaos.runner.run import run_scenario  # noqa: E402
from chaos.scenario.loader import load_scenario  # noqa: E402

DEFAULT = ROOT / "scenarios" / "killed-worker-recovers-from-checkpoint.yaml"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", nargs="?", default=str(DEFAULT))
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--report-dir", help="write each run's JSON report here (run-<i>.json)")
    args = parser.parse_args()

    scenario = load_scenario(args.scenario)
    versions = scenario.tf_versions()
    ensure_images(tuple(versions))
    images = {v: worker_image_tag(v) for v in versions}
    training = scenario.cluster.training
    floor = training.collective_timeout_s or training.heartbeat_timeout_s
    # Warm the cached reference so runs are comparable.
    run_scenario(scenario, args.scenario, images=images, proxy_image=PROXY_IMAGE)

    rows = []
    print(
        f"{scenario.name}: {args.runs} runs; heartbeat timeout {training.heartbeat_timeout_s:g}s, "
        f"collective timeout {training.collective_timeout_s:g}s"
    )
    print(
        f"{'run':>3}  {'wall s':>7}  {'bring-up':>8}  {'1st sign':>7}  {'asserted':>8}  {'recover':>7}  {'total':>6}  verdicts"
    )
    for i in range(1, args.runs + 1):
        t0 = time.monotonic()
        report = run_scenario(scenario, args.scenario, images=images, proxy_image=PROXY_IMAGE)
        wall = time.monotonic() - t0
        t = report.timings
        verdicts = " ".join(v.status.value[0].upper() for _, v in report.numbered())
        rows.append((wall, t, report.status.value, verdicts, asserted_symptom_s(report)))

        def f(x):
            return f"{x:.1f}" if x is not None else "-"

        print(
            f"{i:>3}  {wall:7.1f}  {f(t.bring_up_s):>8}  {f(t.time_to_symptom_s):>7}  {f(rows[-1][4]):>8}  "
            f"{f(t.time_to_recover_s):>7}  {f(t.total_s):>6}  {report.status.value} [{verdicts}]",
            flush=True,
        )
        for label, v in report.numbered():
            if not v.passed:
                print(f"       {label} {v.status.value}: {v.reason}", flush=True)
        if args.report_dir:
            write_json(report, Path(args.report_dir) / f"run-{i}.json")

    walls = [r[0] for r in rows]
    symptoms = [r[1].time_to_symptom_s for r in rows if r[1].time_to_symptom_s is not None]
    asserted = [r[4] for r in rows if r[4] is not None]
    print()
    print(
        f"end to end (cluster up to torn down): median {statistics.median(walls):.1f}s, "
        f"max {max(walls):.1f}s (target <= 45 s)"
    )
    if symptoms:
        print(
            f"fault -> first sign (any error or exit, the faulted worker's own included): "
            f"median {statistics.median(symptoms):.2f}s, max {max(symptoms):.2f}s"
        )
    if asserted:
        print(
            f"fault -> asserted symptom (expect[0]'s evidence): median {statistics.median(asserted):.2f}s, "
            f"min {min(asserted):.2f}s, max {max(asserted):.2f}s; floor for a silent peer: {floor:g}s "
            f"({'collective' if training.collective_timeout_s else 'heartbeat'} timeout); "
            f"a peer with a collective in flight sees a kill at once"
        )
    outcomes = {(r[2], r[3]) for r in rows}
    print(
        f"same verdicts in every run: {'yes' if len(outcomes) == 1 else 'NO'} "
        f"({len(rows)} runs, {len(outcomes)} distinct outcome(s))"
    )
    return 0 if len(outcomes) == 1 else 1


def asserted_symptom_s(report) -> float | None:
    """Seconds from the inject to the first worker event the first symptom check gave as proof."""
    verdict = next((v for _, v in report.numbered() if v.role == "expect" and v.passed), None)
    if verdict is None:
        return None
    inject = next((e for e in verdict.evidence if e.kind == "inject"), None)
    proof = [e.t for e in verdict.evidence if e.source != "runner"]
    return min(proof) - inject.t if inject and proof else None


if __name__ == "__main__":
    raise SystemExit(main())
