"""Ctrl-C of `chaos run` against an engine that shares no path with this machine
(issue 41): a dind engine (tests/integration/dind.py), the images built there, then
one scenario started and interrupted (SIGINT to its process group) at several
points; printed per point: the run's containers up then, the exit status and how
long the teardown took, and what of the run is left on that engine (its
containers, networks and volumes by the run label). Not a test: it prints figures.

    python benchmarks/remote_interrupts.py
    python benchmarks/remote_interrupts.py --tf 2.21 --at 2 8 20 45
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from dind import dind_engine, local_base, transfer_image  # noqa: E402

from chaos import LABEL_RUN  # noqa: E402
from chaos.images import engine  # noqa: E402
from chaos.images.swarm_node import ensure_node_image  # noqa: E402
from chaos.images.versions import DEFAULT_TF_VERSION  # noqa: E402

SCENARIO = "scenarios/killed-worker-recovers-from-checkpoint.yaml"


def run_objects(client) -> dict[str, list[str]]:
    label = {"label": LABEL_RUN}
    return {
        "containers": [c.name for c in client.containers.list(all=True, filters=label)],
        "networks": [n.name for n in client.networks.list(filters=label)],
        "volumes": [v.name for v in client.volumes.list(filters=label)],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tf", default=DEFAULT_TF_VERSION, help=f"the worker image (default {DEFAULT_TF_VERSION})")
    ap.add_argument("--at", type=float, nargs="+", default=[2, 8, 20, 45], help="seconds after the start to interrupt")
    args = ap.parse_args()
    local = engine.docker_client()
    base = local_base(local)
    with dind_engine(local, ensure_node_image(local)) as remote, tempfile.TemporaryDirectory() as reports:
        transfer_image(local, remote.client, base.tag)
        env = {**os.environ, "DOCKER_HOST": remote.host}
        t0 = time.monotonic()
        build = subprocess.run(
            [sys.executable, "-m", "chaos", "images", "build", "--tf", args.tf],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        print(f"chaos images build --tf {args.tf} there: exit {build.returncode} in {time.monotonic() - t0:.0f} s")
        if build.returncode != 0:
            print(build.stderr[-2000:])
            return 1
        for at in args.at:
            proc = subprocess.Popen(
                [sys.executable, "-m", "chaos", "run", SCENARIO, "--report-dir", f"{reports}/{at}"],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
            time.sleep(at)
            up = len(run_objects(remote.client)["containers"])
            t1 = time.monotonic()
            os.killpg(proc.pid, signal.SIGINT)
            try:
                out, _ = proc.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                out, _ = proc.communicate()
            left = {k: v for k, v in run_objects(remote.client).items() if v}
            last = (out.strip().splitlines() or ["no output"])[-1]
            print(
                f"Ctrl-C at {at:g} s: {up} run containers up; exit {proc.returncode} after {time.monotonic() - t1:.1f} s; "
                f"left: {left or 'nothing'}; said: {last}"
            )
        print(f"containers on that engine at the end: {[c.name for c in remote.client.containers.list(all=True)]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
