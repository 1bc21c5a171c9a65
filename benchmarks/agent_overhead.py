"""What the agent costs a custom loop: the example's tutorial loop (no tfchaos call)
with the agent on and off, side by side, in alternating pairs of 2-worker runs.

    python benchmarks/agent_overhead.py [--pairs 5] [--epochs 6] [--steps 100]

Each run is two containers of the example job's agent-layered image on a network of
their own (labelled, removed after), CHAOS_AGENT=1 or 0 (off, the agent's
sitecustomize does nothing). Step time: from the job's own epoch lines (``docker logs
--timestamps``), epochs 2.. only (the first holds the trace); peak memory: the worker
process's ru_maxrss. Prints each pair and the median ratio on/off. Not a test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import uuid
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chaos.images import ensure_images  # noqa: E402
from chaos.images.engine import docker_client  # noqa: E402
from chaos.images.versions import DEFAULT_TF_VERSION  # noqa: E402
from chaos.images.workload import prepare  # noqa: E402
from chaos.workload.spec import WorkloadSpec  # noqa: E402

EXAMPLE = ROOT / "examples" / "keras-mwms"
LABEL = "io.tfchaos.bench=agent-overhead"
WRAP = (
    "import atexit, resource, runpy, sys; "
    "atexit.register(lambda: print('MAXRSS_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, flush=True)); "
    "sys.argv = ['train_tutorial_loop.py'] + sys.argv[1:]; runpy.run_path('train_tutorial_loop.py', run_name='__main__')"
)


def sh(*args: str, check: bool = True) -> str:
    return subprocess.run(args, check=check, capture_output=True, text=True).stdout


def one_run(image: str, agent: bool, epochs: int, steps: int) -> tuple[float, int]:
    """(seconds per step over epochs 2.., the chief's peak RSS in kB)."""
    tag = uuid.uuid4().hex[:8]
    net = f"agentbench-{tag}"
    names = [f"agentbench-{tag}-w{i}" for i in range(2)]
    sh("docker", "network", "create", "--label", LABEL, net)
    try:
        for i, name in enumerate(names):
            tf_config = json.dumps(
                {"cluster": {"worker": [f"w0-{tag}:2222", f"w1-{tag}:2222"]}, "task": {"type": "worker", "index": i}}
            )
            sh(
                "docker",
                "run",
                "-d",
                "--label",
                LABEL,
                "--name",
                name,
                "--network",
                net,
                "--network-alias",
                f"w{i}-{tag}",
                "--user",
                "0",
                "-e",
                f"TF_CONFIG={tf_config}",
                "-e",
                f"CHAOS_AGENT={1 if agent else 0}",
                "-e",
                f"CHAOS_WORKER_INDEX={i}",
                "-e",
                "PYTHONPATH=/opt/tfchaos-agent",
                image,
                "python",
                "-c",
                WRAP,
                "--epochs",
                str(epochs),
                "--steps-per-epoch",
                str(steps),
                "--checkpoint-dir",
                "/tmp/ckpt",
            )
        codes = sh("docker", "wait", *names).split()
        logs = sh("docker", "logs", "--timestamps", names[0], check=False)
        if codes != ["0", "0"]:
            raise SystemExit(f"a worker failed ({codes}):\n{logs[-3000:]}")
    finally:
        sh("docker", "rm", "-f", "-v", *names, check=False)
        sh("docker", "network", "rm", net, check=False)
    stamps = [datetime.fromisoformat(line.split()[0][:26]) for line in logs.splitlines() if " Epoch: " in line]
    rss = next(int(line.split()[-1]) for line in logs.splitlines() if "MAXRSS_KB" in line)
    return (stamps[-1] - stamps[0]).total_seconds() / ((len(stamps) - 1) * steps), rss


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()
    ensure_images((DEFAULT_TF_VERSION,), proxy=False, progress=None)  # the example builds FROM the default
    client = docker_client()
    spec = WorkloadSpec.model_validate(
        {"build": {"context": str(EXAMPLE)}, "command": ["python"], "checkpoint_dir": "/checkpoints"}
    )
    image = prepare(client, spec)
    ratios, extra_kb = [], []
    print(f"image {image}; {args.pairs} pairs of 2-worker runs, {args.epochs} x {args.steps} steps")
    for pair in range(args.pairs):
        order = (True, False) if pair % 2 == 0 else (False, True)
        got = {agent: one_run(image, agent, args.epochs, args.steps) for agent in order}
        (on_s, on_kb), (off_s, off_kb) = got[True], got[False]
        ratios.append(on_s / off_s)
        extra_kb.append(on_kb - off_kb)
        print(
            f"pair {pair + 1}: step {on_s * 1e3:.2f} ms on / {off_s * 1e3:.2f} ms off = {on_s / off_s:.3f}; "
            f"peak RSS {on_kb / 1024:.0f} / {off_kb / 1024:.0f} MB"
        )
    print(
        f"median step-time ratio on/off: {statistics.median(ratios):.3f} "
        f"(min {min(ratios):.3f}, max {max(ratios):.3f}); "
        f"median extra peak RSS with the agent: {statistics.median(extra_kb) / 1024:.1f} MB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
