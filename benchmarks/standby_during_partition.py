"""Reproduce the partition's CI flake of stops 32 and 51: the next containers of the workers
(standbys, chaos.backends.docker.standby) are made while worker-1 is partitioned, as a slow
standby maker on a loaded machine made them. Not a test: it runs the scenario and prints its
verdicts (docs/findings.md, "A container made on the run's network during a partition").

    python benchmarks/standby_during_partition.py                 # one run
    python benchmarks/standby_during_partition.py -j 2 --runs 2   # two side by side

A standby that held an address while waiting took the partitioned worker's freed one (and
its MAC), answered the proxy's packets for it with resets, and worker-0 failed with
``Socket closed`` at +1.7 s instead of on the heartbeats (expect[1] failed). Standbys now
wait off the network: expect[1] passes. Images must be built (``chaos images build``).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chaos.backends.docker import cluster as docker_cluster  # noqa: E402
from chaos.events import InjectEvent  # noqa: E402

SCENARIO = ROOT / "scenarios" / "partitioned-worker-fails-then-recovers.yaml"
AFTER_INJECT_S = 0.5  # into the 20 s partition: well before the heartbeat timeout (10 s)


def standbys_made_during_the_fault() -> None:
    """The next generation's standbys wait for the inject, then 0.5 s more, before they are made."""
    make = docker_cluster.DockerCluster._make_standby_containers

    def late(self, due):
        if any(generation >= 1 for generation, _ in due.values()):
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not any(isinstance(e, InjectEvent) for e in self.events.snapshot()):
                time.sleep(0.1)
            time.sleep(AFTER_INJECT_S)
        return make(self, due)

    docker_cluster.DockerCluster._make_standby_containers = late


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="copies of the scenario (default 1)")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="run up to N at once (default 1)")
    args = parser.parse_args()
    standbys_made_during_the_fault()
    from chaos.cli import main as chaos

    folder = Path(tempfile.mkdtemp(prefix="standby-partition-"))
    try:
        text = SCENARIO.read_text()
        for k in range(args.runs):
            name = f"partition-{k}"
            (folder / f"{name}.yaml").write_text(text.replace(f"name: {SCENARIO.stem}", f"name: {name}", 1))
        return chaos(["run", "-j", str(args.jobs), str(folder)])
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
