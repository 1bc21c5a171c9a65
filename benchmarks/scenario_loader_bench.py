"""Scenario loader benchmark: time and peak memory to load (or reject) the shipped
scenarios and the worst files the loader's limits allow. Not a test: it prints figures.

    python benchmarks/scenario_loader_bench.py [--repeat 3]

Each case is written to a temporary file and loaded with ``load_scenario`` (what
``chaos validate`` uses) in a fresh subprocess, so one case's memory does not hide
another's; the figures are the best of ``--repeat`` runs (time) and the peak
resident memory the subprocess grew by while loading (``ru_maxrss``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chaos.scenario.safe_yaml import MAX_BYTES  # noqa: E402

KILLED = (ROOT / "scenarios" / "killed-worker-recovers-from-checkpoint.yaml").read_text()
HEAD = "name: x\ndescription: d\nexplain: {symptom: s, cause: c, fix: f}\n"


def fill(unit, prefix: str = HEAD, suffix: str = "") -> str:
    """``prefix``, then ``unit(i)`` repeated up to the size limit, then ``suffix``."""
    room = MAX_BYTES - len(prefix) - len(suffix) - 64
    body, i = [], 0
    while room > 0:
        piece = unit(i)
        body.append(piece)
        room -= len(piece)
        i += 1
    return prefix + "".join(body) + suffix


def bomb(levels: int = 9) -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return HEAD + "\n".join(lines) + "\n"


CASES = {
    "shipped scenario (valid)": KILLED,
    "alias bomb, 9 levels (600 B)": bomb(),
    "250 nested flow mappings": HEAD + "x: " + "{a: " * 250 + "1" + "}" * 250 + "\n",
    "100,000 '[' on one line": HEAD + "x: " + "[" * 100_000 + "\n",
    "5000-digit integer": HEAD + "cluster: {training: {seed: " + "9" * 5000 + "}}\n",
    "4,900 unknown keys (10k values)": HEAD + "".join(f"k{i}: 1\n" for i in range(4900)),
    "1,400 bad checks (2 problems each)": HEAD
    + "faults: [{kill_worker: {worker: 1}, at: bring_up}]\nexpect:\n"
    + "".join("- {error: {class: 'A|B', workers: []}}\n" for _ in range(1400)),
    "256 KiB of keys (size limit)": fill(lambda i: f"k{i:06}: 1\n"),
    "256 KiB flow list (value limit)": fill(lambda i: "a,", HEAD + "x: [", "]\n"),
    "256 KiB of bad fault steps": fill(lambda i: "- {kill_worker: {worker: x}, at: y}\n", HEAD + "faults:\n"),
    "256 KiB description (valid)": HEAD.replace("description: d", "description: " + "x" * (MAX_BYTES - 200)),
}

CHILD = r"""
import json, resource, sys, time
from chaos.errors import ScenarioError
from chaos.scenario.loader import load_scenario
path, repeat = sys.argv[1], int(sys.argv[2])
load_scenario  # imports done before measuring
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
best, outcome = None, None
for _ in range(repeat):
    started = time.perf_counter()
    try:
        load_scenario(path)
        outcome = "accepted"
    except ScenarioError as exc:
        outcome = exc.message.splitlines()[-1 if "problems:" in exc.message else 0]
    elapsed = time.perf_counter() - started
    best = elapsed if best is None else min(best, elapsed)
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(json.dumps({"seconds": best, "grown_kb": grown, "outcome": outcome}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'case':36} {'bytes':>8} {'best s':>7} {'+RSS MB':>8}  outcome")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.yaml"
        for name, text in CASES.items():
            if text is KILLED:
                path = Path(tmp) / "killed-worker-recovers-from-checkpoint.yaml"
            else:
                path = Path(tmp) / "x.yaml"
            path.write_text(text)
            result = subprocess.run(
                [sys.executable, "-c", CHILD, str(path), str(args.repeat)],
                capture_output=True,
                text=True,
                cwd=ROOT,
                timeout=600,
                check=True,
            )
            figures = json.loads(result.stdout)
            print(
                f"{name:36} {len(text.encode()):8} {figures['seconds']:7.3f} {figures['grown_kb'] / 1024:8.1f}  "
                f"{figures['outcome'].replace(str(path), path.name)[:100]}"
            )


if __name__ == "__main__":
    main()
