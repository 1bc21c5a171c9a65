"""What the agent costs a custom loop: the example's tutorial loop (no tfchaos call)
with the agent on and off, side by side, in alternating pairs of 2-worker runs.

    python benchmarks/agent_overhead.py [--pairs 5] [--epochs 6] [--steps 100] [--workers 2]
    python benchmarks/agent_overhead.py --single [--pairs 3] [--steps 3000]
    python benchmarks/agent_overhead.py --lines [--pairs 3] [--steps 3000]
    python benchmarks/agent_overhead.py --interleaved [--runs 2] [--block 20] [--epochs 8] [--workers 2]
    python benchmarks/agent_overhead.py --sections [--runs 2] [--epochs 6]

Each run is a container per worker (two by default, each pinned to a core of its own) of the
example job's agent-layered image on a network of their own (labelled, removed after), CHAOS_AGENT=1 or 0 (off, the agent's
sitecustomize does nothing). Step time: from the job's own epoch lines (``docker logs
--timestamps``), epochs 2.. only (the first holds the trace); peak memory: the worker
process's ru_maxrss; CPU: the chief process's user + system seconds for the whole run (TF's
import and tracing alike on and off, so the difference over the steps is the agent's CPU per
step: on a 2-core machine the wall step time of two TF workers varies +-40 % between runs, its
CPU time much less; its share of the step off is printed beside the ratio). Prints each pair
and the medians on/off. Not a test.

``--single``: the agent's own cost per step, with no collective's wait in it: one process in
the same image trains a small Dense model in a tf.function custom loop (about 0.2 ms a step),
agent on and off in alternating runs; the difference of the step times is what the agent adds
to every step of any loop.

``--lines``: the same loop with the agent off, writing nothing, a 150-byte line a step, or
five lines to a write: what one write to a container's stdout costs (chaos/agent/batching.py).

``--interleaved``: the tutorial loop's cluster with the agent on, its observer switched off
and on every ``--block`` steps in every worker at once (they step in lockstep), so on and off
run side by side in one run: between runs of two workers the step time spreads +-40 %, far
more than the agent costs; between neighbouring blocks of one run it does not. The ratio is
the median over pairs of neighbouring blocks (on, then off) after the first epoch. What stays
on in an off block: the wrapper around tf.function's call (a list append and a dict lookup)
and the event writer's thread; ``--single`` counts them.

``--sections``: the tutorial loop's cluster, agent on, the chief's observer timed part by
part (the whole, the loss's read, the event's emit and of it the write, the count from the
traces, the read of ``iterations``, the epoch).
"""

from __future__ import annotations

import argparse
import json
import os
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
# Each worker on a core of its own: two TF processes sharing both cores spread the wall time
# of a pair of runs +-30 % (0.81 - 1.32 on 2026-12-03), far more than the agent costs.
CORES = os.cpu_count() or 1
WRAP = (
    "import atexit, resource, runpy, sys; "
    "u = lambda: resource.getrusage(resource.RUSAGE_SELF); "
    "atexit.register(lambda: print('MAXRSS_KB', u().ru_maxrss, 'CPU_S', u().ru_utime + u().ru_stime, flush=True)); "
    "sys.argv = ['train_tutorial_loop.py'] + sys.argv[1:]; runpy.run_path('train_tutorial_loop.py', run_name='__main__')"
)

# Prepended to WRAP for --interleaved: the custom-loop observer counts and reports only in
# even blocks of BENCH_BLOCK steps; BLOCKS prints each block's seconds at exit, OWN_US the
# observer's own time per step it reported (counting, reading, the event's line and write).
TOGGLE = (
    "import atexit, os, time; from chaos.agent import loop; "
    "K = int(os.environ['BENCH_BLOCK']); state = {'n': 0, 'marks': []}; original = loop.LoopObserver.trained\n"
    "def trained(self, optimizers, result=None, fn=None):\n"
    "    n = state['n']; state['n'] = n + 1; on = (n // K) % 2 == 0\n"
    "    if n % K == 0:\n"
    "        state['marks'].append(time.perf_counter())\n"
    "        if on: self._last_iterations.clear()  # counted again from a read: no stale count\n"
    "    if on:\n"
    "        t0 = time.perf_counter(); original(self, optimizers, result, fn)\n"
    "        state['own'] = state.get('own', 0.0) + time.perf_counter() - t0; state['on'] = state.get('on', 0) + 1\n"
    "loop.LoopObserver.trained = trained\n"
    "atexit.register(lambda: print('BLOCKS', *(f'{b - a:.6f}' for a, b in zip(state['marks'], state['marks'][1:])), flush=True))\n"
    "atexit.register(lambda: print('OWN_US', state.get('own', 0.0) / max(state.get('on', 0), 1) * 1e6, flush=True))\n"
)

# Prepended to WRAP for --sections: the chief's observer's time a step in each of its parts
# (each part timed on its own: the timers add about 1 us a call).
SECTIONS = (
    "import atexit, time; from chaos.agent import loop, runtime, step_shape\n"
    "acc, calls = {}, [0]\n"
    "def timed(owner, name, key):\n"
    "    original = getattr(owner, name)\n"
    "    def part(*a, **k):\n"
    "        t0 = time.perf_counter(); r = original(*a, **k); acc[key] = acc.get(key, 0.0) + time.perf_counter() - t0; return r\n"
    "    setattr(owner, name, part)\n"
    "for owner, name, key in ((loop.LoopObserver, 'trained', 'observer'), (loop, 'loss_of', 'loss read'),\n"
    "        (runtime.AgentEmitter, 'emit', 'emit'), (runtime.AgentEmitter, '_write', 'of it the write'),\n"
    "        (step_shape, 'fixed_advance', 'count from traces'), (loop.LoopObserver, '_read_advance', 'iterations read'),\n"
    "        (loop.LoopObserver, 'epoch', 'epoch')):\n"
    "    timed(owner, name, key)\n"
    "counted = loop.LoopObserver.trained\n"
    "def trained(self, *a, **k):\n"
    "    calls[0] += 1; return counted(self, *a, **k)\n"
    "loop.LoopObserver.trained = trained\n"
    "atexit.register(lambda: print('SECTIONS', ';'.join(f'{k}={v / max(calls[0], 1) * 1e6:.1f}' for k, v in acc.items()), flush=True))\n"
)


# One process, no strategy: 50 steps to trace, then --steps timed.
SINGLE = """
import os, sys, time
import tensorflow as tf
model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10)])
opt = tf.keras.optimizers.SGD(0.01)
x, y = tf.random.normal((64, 32)), tf.random.uniform((64,), maxval=10, dtype=tf.int32)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
@tf.function
def step():
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss
for _ in range(50):
    step()
n = int(sys.argv[1])
k = int(os.environ.get("BENCH_LINES", "0"))  # --lines: a 150-byte line a step, k to a write
line = '{"epoch":0,"event":"step","local_loss":0.5,"loss":0.5,"loss_reported":true,"source":"worker-0","step":1,"t":1.0}' + " " * 30 + "\\n"
t0 = time.perf_counter()
if k:
    held = []
    for _ in range(n):
        step()
        held.append(line)
        if len(held) >= k:
            os.write(1, "".join(held).encode())
            held.clear()
else:
    for _ in range(n):
        step()
print("STEP_S", (time.perf_counter() - t0) / n, file=sys.stderr, flush=True)
"""


def agent_env(agent: bool, index: int) -> list[str]:
    """``docker run`` options for worker ``index`` of the agent-layered image, the agent on or off."""
    return [
        "-e",
        f"CHAOS_AGENT={1 if agent else 0}",
        "-e",
        f"CHAOS_WORKER_INDEX={index}",
        "-e",
        "PYTHONPATH=/opt/tfchaos-agent",
    ]


def sh(*args: str, check: bool = True) -> str:
    return subprocess.run(args, check=check, capture_output=True, text=True).stdout


def one_run(
    image: str, agent: bool, epochs: int, steps: int, workers: int = 2, block: int = 0, prelude: str = ""
) -> tuple[float, int, float, list[float], str]:
    """(seconds per step over epochs 2.., the chief's peak RSS in kB, its CPU seconds, with
    ``block`` the seconds of each block of the interleaved run, and the chief's log); ``prelude``
    runs before the job (TOGGLE, SECTIONS)."""
    tag = uuid.uuid4().hex[:8]
    net = f"agentbench-{tag}"
    names = [f"agentbench-{tag}-w{i}" for i in range(workers)]
    sh("docker", "network", "create", "--label", LABEL, net)
    try:
        for i, name in enumerate(names):
            tf_config = json.dumps(
                {
                    "cluster": {"worker": [f"w{j}-{tag}:2222" for j in range(workers)]},
                    "task": {"type": "worker", "index": i},
                }
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
                "--cpuset-cpus",
                str(i % CORES),
                "--user",
                "0",
                "-e",
                f"TF_CONFIG={tf_config}",
                *agent_env(agent, i),
                *(["-e", f"BENCH_BLOCK={block}"] if block else []),
                image,
                "python",
                "-c",
                prelude + WRAP,
                "--epochs",
                str(epochs),
                "--steps-per-epoch",
                str(steps),
                "--checkpoint-dir",
                "/tmp/ckpt",
            )
        codes = sh("docker", "wait", *names).split()
        logs = sh("docker", "logs", "--timestamps", names[0], check=False)
        if codes != ["0"] * workers:
            raise SystemExit(f"a worker failed ({codes}):\n{logs[-3000:]}")
    finally:
        sh("docker", "rm", "-f", "-v", *names, check=False)
        sh("docker", "network", "rm", net, check=False)
    stamps = [datetime.fromisoformat(line.split()[0][:26]) for line in logs.splitlines() if " Epoch: " in line]
    fields = next(line.split() for line in logs.splitlines() if "MAXRSS_KB" in line)
    rss, cpu = int(fields[fields.index("MAXRSS_KB") + 1]), float(fields[fields.index("CPU_S") + 1])
    blocks = [float(x) for line in logs.splitlines() if " BLOCKS" in line for x in line.split("BLOCKS", 1)[1].split()]
    own = [float(line.split("OWN_US", 1)[1]) for line in logs.splitlines() if " OWN_US" in line]
    return (stamps[-1] - stamps[0]).total_seconds() / ((len(stamps) - 1) * steps), rss, cpu, blocks + own[:1], logs


def interleaved(image: str, runs: int, epochs: int, steps: int, workers: int, block: int) -> int:
    print(
        f"image {image}; {runs} interleaved {workers}-worker runs, {epochs} x {steps} steps, "
        f"the observer on and off every {block} steps"
    )
    ratios, on_ms, off_ms, own_us = [], [], [], []
    for run in range(runs):
        *blocks, own = one_run(image, True, epochs, steps, workers, block, TOGGLE)[3]
        own_us.append(own)
        first = -(-steps // block) + (-(-steps // block) % 2)  # the first on block after epoch 1
        pairs = [(blocks[i], blocks[i + 1]) for i in range(first, len(blocks) - 1, 2)]
        run_ratios = [on / off for on, off in pairs]
        ratios += run_ratios
        on_ms += [on * 1e3 / block for on, _ in pairs]
        off_ms += [off * 1e3 / block for _, off in pairs]
        print(
            f"run {run + 1}: {len(pairs)} pairs of blocks; ratio on/off median {statistics.median(run_ratios):.3f} "
            f"(min {min(run_ratios):.3f}, max {max(run_ratios):.3f}); step {statistics.median(on_ms[-len(pairs) :]):.2f} ms on "
            f"/ {statistics.median(off_ms[-len(pairs) :]):.2f} ms off; the chief's observer {own:.0f} us a step"
        )
    quartiles = statistics.quantiles(ratios, n=4)
    print(
        f"median step-time ratio on/off over {len(ratios)} neighbouring pairs: {statistics.median(ratios):.3f} "
        f"(quartiles {quartiles[0]:.3f} - {quartiles[2]:.3f}); step {statistics.median(on_ms):.2f} ms on / "
        f"{statistics.median(off_ms):.2f} ms off; the chief's observer's own time {statistics.median(own_us):.0f} us "
        f"a step, {statistics.median(own_us) / 1e3 / statistics.median(off_ms) * 100:.1f} % of the step off"
    )
    return 0


def sections(image: str, runs: int, epochs: int, steps: int, workers: int) -> int:
    """The chief's observer's time a step, part by part, in the tutorial loop's cluster."""
    print(f"image {image}; {runs} {workers}-worker runs, {epochs} x {steps} steps, the observer's parts timed")
    for run in range(runs):
        seconds, *_, logs = one_run(image, True, epochs, steps, workers, prelude=SECTIONS)
        line = next(line for line in logs.splitlines() if " SECTIONS " in line).split(" SECTIONS ", 1)[1]
        parts = ", ".join(f"{k} {float(v):.0f} us" for k, v in (p.split("=") for p in line.split(";")))
        print(f"run {run + 1}: step {seconds * 1e3:.2f} ms; a step's {parts}")
    return 0


def single_run(image: str, agent: bool, steps: int, lines: int = 0) -> float:
    """Seconds per step of SINGLE in one container, the agent on or off (``lines``: see --lines)."""
    name = f"agentbench-{uuid.uuid4().hex[:8]}"
    try:
        out = subprocess.run(
            ["docker", "run", "--label", LABEL, "--name", name, "--user", "0", *agent_env(agent, 0)]
            + ["-e", f"BENCH_LINES={lines}", image]
            + ["python", "-c", SINGLE, str(steps)],
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        sh("docker", "rm", "-f", "-v", name, check=False)
    return float(next(line.split()[1] for line in out.stderr.splitlines() if line.startswith("STEP_S")))


def single(image: str, pairs: int, steps: int) -> int:
    extra = []
    print(f"image {image}; {pairs} pairs of one-process runs, {steps} steps of a small Dense model")
    for pair in range(pairs):
        order = (True, False) if pair % 2 == 0 else (False, True)
        got = {agent: single_run(image, agent, steps) for agent in order}
        extra.append(got[True] - got[False])
        print(
            f"pair {pair + 1}: step {got[True] * 1e6:.0f} us on / {got[False] * 1e6:.0f} us off ({extra[-1] * 1e6:+.0f} us)"
        )
    print(
        f"median extra per step with the agent: {statistics.median(extra) * 1e6:+.0f} us (min {min(extra) * 1e6:+.0f}, max {max(extra) * 1e6:+.0f})"
    )
    return 0


def lines(image: str, pairs: int, steps: int) -> int:
    """What a write to the container's stdout costs: SINGLE's loop with the agent off, writing
    nothing, a line a step, or five lines to a write (what the agent's batching does)."""
    print(f"image {image}; {pairs} rounds of one-process runs, agent off, {steps} steps")
    extra: dict[int, list[float]] = {1: [], 5: []}
    for round_ in range(pairs):
        got = {k: single_run(image, False, steps, lines=k) for k in (0, 1, 5)}
        for k in extra:
            extra[k].append(got[k] - got[0])
        print(
            f"round {round_ + 1}: step {got[0] * 1e6:.0f} us writing nothing, "
            f"{got[1] * 1e6:.0f} us a line a write, {got[5] * 1e6:.0f} us five lines a write"
        )
    print(
        f"median extra per step: a line a write {statistics.median(extra[1]) * 1e6:+.0f} us, "
        f"five lines a write {statistics.median(extra[5]) * 1e6:+.0f} us"
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--steps", type=int, default=None, help="steps per epoch (100), or --single's steps (3000)")
    parser.add_argument("--single", action="store_true", help="the agent's own cost per step, in one process")
    parser.add_argument("--lines", action="store_true", help="what a write to the container's stdout costs a step")
    parser.add_argument("--workers", type=int, default=2, help="workers of the tutorial loop's cluster (2)")
    parser.add_argument("--interleaved", action="store_true", help="on and off in blocks of steps of one run")
    parser.add_argument("--sections", action="store_true", help="the observer's time a step, part by part")
    parser.add_argument("--runs", type=int, default=2, help="--interleaved's runs (2)")
    parser.add_argument("--block", type=int, default=20, help="--interleaved's block of steps (20)")
    args = parser.parse_args()
    ensure_images((DEFAULT_TF_VERSION,), proxy=False, progress=None)  # the example builds FROM the default
    client = docker_client()
    spec = WorkloadSpec.model_validate(
        {"build": {"context": str(EXAMPLE)}, "command": ["python"], "checkpoint_dir": "/checkpoints"}
    )
    image = prepare(client, spec)
    if args.single:
        return single(image, args.pairs, args.steps or 3000)
    if args.lines:
        return lines(image, args.pairs, args.steps or 3000)
    args.steps = args.steps or 100
    if args.sections:
        return sections(image, args.runs, max(args.epochs, 2), args.steps, args.workers)
    if args.interleaved:
        return interleaved(image, args.runs, max(args.epochs, 2), args.steps, args.workers, args.block)
    ratios, extra_kb, extra_cpu_ms, off_ms = [], [], [], []
    print(f"image {image}; {args.pairs} pairs of {args.workers}-worker runs, {args.epochs} x {args.steps} steps")
    for pair in range(args.pairs):
        order = (True, False) if pair % 2 == 0 else (False, True)
        got = {agent: one_run(image, agent, args.epochs, args.steps, args.workers)[:4] for agent in order}
        (on_s, on_kb, on_cpu, _), (off_s, off_kb, off_cpu, _) = got[True], got[False]
        ratios.append(on_s / off_s)
        off_ms.append(off_s * 1e3)
        extra_kb.append(on_kb - off_kb)
        extra_cpu_ms.append((on_cpu - off_cpu) * 1e3 / (args.epochs * args.steps))
        print(
            f"pair {pair + 1}: step {on_s * 1e3:.2f} ms on / {off_s * 1e3:.2f} ms off = {on_s / off_s:.3f}; "
            f"chief CPU {on_cpu:.1f} / {off_cpu:.1f} s ({extra_cpu_ms[-1]:+.2f} ms per step); "
            f"peak RSS {on_kb / 1024:.0f} / {off_kb / 1024:.0f} MB"
        )
    print(
        f"median step-time ratio on/off: {statistics.median(ratios):.3f} "
        f"(min {min(ratios):.3f}, max {max(ratios):.3f}); "
        f"median extra peak RSS with the agent: {statistics.median(extra_kb) / 1024:.1f} MB; "
        f"median extra chief CPU per step: {statistics.median(extra_cpu_ms):+.2f} ms "
        f"(min {min(extra_cpu_ms):+.2f}, max {max(extra_cpu_ms):+.2f}), "
        f"{statistics.median(extra_cpu_ms) / statistics.median(off_ms) * 100:.1f} % of the median step off "
        f"({statistics.median(off_ms):.2f} ms)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
