"""Audit agreement benchmark (issue 25): the same battery run twice on the same
job, one after the other, and every measured figure of the two cards side by
side with whether they agree within 20 %. Not a test: it prints figures.

    python benchmarks/audit_agreement.py                          # the example's fit job, full battery
    python benchmarks/audit_agreement.py --job harness --battery quick
    python benchmarks/audit_agreement.py --workload my-job.yaml --out DIR
    python benchmarks/audit_agreement.py --repeat 3                # each card's figures: medians of 3 runs

Each run is ``python3 -m chaos audit --workload W --battery B -j J
--report-dir OUT/run-N``; the two card.json files are then compared
(chaos.audit.agreement, as ``chaos audit --agree-with`` does). Printed per run: wall time, the load average before and after (a
loaded machine stretches timings), the overall and per-area grades, the
criteria each card judged differently; then the agreement table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chaos.audit.agreement import compare, table  # noqa: E402

EXAMPLE = ROOT / "examples" / "keras-mwms"
FIT = ["python", "train_fit.py", "--epochs", "5", "--steps-per-epoch", "60", "--verbose", "0"]


def example_workload(folder: Path) -> Path:
    path = folder / "example-fit.yaml"
    path.write_text(
        json.dumps(
            {  # JSON is YAML
                "build": {"context": str(EXAMPLE), "dockerfile": "Dockerfile"},
                "command": FIT,
                "checkpoint_dir": "/checkpoints",
            }
        )
    )
    return path


def run_once(workload: Path | None, battery: str, jobs: int, out: Path, repeat: int = 1) -> dict:
    argv = [
        sys.executable,
        "-m",
        "chaos",
        "audit",
        "--battery",
        battery,
        "-j",
        str(jobs),
        "--repeat",
        str(repeat),
        "--report-dir",
        str(out),
    ]
    if workload is not None:
        argv += ["--workload", str(workload)]
    load_before = os.getloadavg()[0]
    began = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    wall = time.monotonic() - began
    if proc.returncode not in (0, 1):
        print(proc.stdout[-3000:], proc.stderr[-3000:], sep="\n")
        raise SystemExit(f"audit exited {proc.returncode}: {' '.join(argv)}")
    return {
        "wall_s": wall,
        "load": (load_before, os.getloadavg()[0]),
        "card": json.loads((out / "card.json").read_text()),
        "out": out,
    }


def grades(card: dict) -> str:
    return ", ".join(f"{g['area']} {g['letter']} ({g['met']}/{g['judged']})" for g in card.get("grades", []))


def differing(a: dict, b: dict) -> list[str]:
    sa = {f["id"]: f["status"] for f in a.get("findings", [])}
    sb = {f["id"]: f["status"] for f in b.get("findings", [])}
    return [f"{k}: {sa.get(k)} / {sb.get(k)}" for k in sorted(set(sa) | set(sb)) if sa.get(k) != sb.get(k)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--job",
        choices=("example", "harness"),
        default="example",
        help="the example's fit job (default) or the built-in harness",
    )
    parser.add_argument("--workload", type=Path, help="a workload file instead (overrides --job)")
    parser.add_argument("--battery", default="full", choices=("full", "quick"))
    parser.add_argument("-j", "--jobs", type=int, default=1, help="chaos audit -j (default 1, as chaos audit's)")
    parser.add_argument("--repeat", type=int, default=1, help="chaos audit --repeat: runs of each fault per card")
    parser.add_argument("--out", type=Path, help="keep both runs' cards and reports here")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="audit-agreement-"))
    out.mkdir(parents=True, exist_ok=True)
    workload = args.workload or (example_workload(out) if args.job == "example" else None)
    first = run_once(workload, args.battery, args.jobs, out / "run-1", args.repeat)
    second = run_once(workload, args.battery, args.jobs, out / "run-2", args.repeat)
    for n, run in enumerate((first, second), 1):
        print(
            f"run {n}: {run['wall_s']:.0f} s wall, load {run['load'][0]:.1f} -> {run['load'][1]:.1f}; "
            f"{grades(run['card'])}; card {run['out'] / 'card.html'}"
        )
    changed = differing(first["card"], second["card"])
    print("criteria judged differently: " + ("; ".join(changed) if changed else "none"))
    print(table(compare(second["card"], first["card"])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
