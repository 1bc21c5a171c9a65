"""Suite speed benchmark (issue 22): the scenario suite, or a few of its files,
for this checkout (the candidate) and for a baseline revision in one
invocation, side by side with the ratio candidate/baseline. Not a test: it
prints figures (docs/notebook/measured.md, docs/notebook/speed.md).

    python benchmarks/suite_speed.py                                   # every scenario, vs origin/main (else HEAD~1)
    python benchmarks/suite_speed.py --baseline HEAD -j 1 scenarios/killed-worker-recovers-from-checkpoint.yaml
    python benchmarks/suite_speed.py --repeat 3 --out speed.json       # B,C,B,C,B,C; every raw figure in speed.json
    python benchmarks/suite_speed.py --sides candidate                 # one side only (no worktree)

Each side runs with its own code: ``python3 -m chaos.cli images build`` and then
``python3 -m chaos.cli run FILES -j J --report-dir DIR``, each with the cwd and
PYTHONPATH of that side's checkout (the baseline: ``git worktree add`` of the
revision into a temporary folder, removed at the end; or a path to an existing
checkout). By default each side builds its code images under its own tag
(``TFCHAOS_IMAGE_VARIANT=speed<pid>-<side>``: tfchaos/worker:tf2.20-speed<pid>-baseline, ...;
the deps images are shared) and those tags are removed at the end, so the
benchmark never swaps the code in the shared tfchaos/worker:tf2.* images under
another run on the machine; ``--shared-tags`` builds into the shared tags
instead (the candidate is built last, so they are left as this checkout's code).
Each side-run gets a fresh ``TFCHAOS_CACHE`` (every entry of the real one
linked in except ``reference/``), so both compute their uninterrupted
reference runs alike; ``--warm-cache`` keeps the real cache.

What it measures, per side-run:

* wall time of the ``chaos run``, and the machine's CPU seconds during it
  (``/proc/stat``: user+nice+system+irq+softirq, / ``SC_CLK_TCK``);
* the image build's wall time (and machine CPU) just before it;
* CPU seconds by who spent them: every ~0.5 s the ``cpuacct.usage`` of every
  container under /sys/fs/cgroup/cpuacct/docker/ (and its ``cpu.shares``),
  each new container's name and labels looked up once (docker SDK). The run's
  own containers are those labelled with its ``io.tfchaos.session``; a
  scenario report is matched to its run by the subnet of its workers'
  addresses. Workers: CPU from the container's start (a standby: from its
  go) to the first training step, and after it; a standby's CPU before its
  go is "imported ahead" (or "never used" when no go came); runs with no
  report are the reference runs. The rest of the machine is "runner + engine":
  the ``chaos run`` process (its rusage), dockerd/containerd/shims/
  fuse-overlayfs (their /proc times, sampled), this benchmark, and what is left;
* worker starts (``start`` events; generation k of worker-i is its k-th),
  mean CPU per start to its first step;
* per phase wall time summed over scenarios (report ``timings``), verdicts,
  scenarios whose verdict differs between the sides;
* reference runs computed (progress lines, new files in the cache) and cached.

Ctrl-C: the running ``chaos run`` is sent one SIGINT and tears its clusters
down; then the worktree, the temporary folders and the per-side image tags are
removed. Containers of a side's session still there after its run are removed
with ``chaos clean --run`` and reported as left behind.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CGROUP_CPUACCT = Path("/sys/fs/cgroup/cpuacct/docker")
CGROUP_CPU = Path("/sys/fs/cgroup/cpu/docker")
STANDBY_SHARES = 2  # chaos.cluster.standby.STANDBY_CPU_SHARES: a standby before its go
INTERVAL_S = 0.5
SESSION_LABEL = "io.tfchaos.session"
OWNER_LABEL = "io.tfchaos.owner"
ROLE_LABEL = "io.tfchaos.role"
RUN_LABEL = "io.tfchaos.run"
IMAGE_LABEL = "io.tfchaos.image"  # a venv volume's and its fill helper's image (chaos.cluster.venv_cache)
VENV_ROLE = "venv"
REFERENCE_LINE = "computing the uninterrupted reference run"
# Engine processes (comm, 15 chars at most) -> whether their waited-for children
# count too: dockerd reaps fuse-overlayfs' launcher and docker-proxy, containerd
# the shims' launchers; a shim's children are the containers' own processes
# (already in their cgroup), so not for the shims.
ENGINE_PROCESSES = {
    "dockerd": True,
    "containerd": True,
    "containerd-shim": False,
    "fuse-overlayfs": False,
    "docker-proxy": False,
}
CHILD_STOP_S = 180  # how long a chaos run gets to tear down after its SIGINT
STATUSES = ("pass", "fail", "unknown", "error")
PHASES = ("bring_up_s", "time_to_symptom_s", "time_to_recover_s", "total_s")
NAME_RE = re.compile(r"^/?tfchaos-(?P<run>[0-9a-f]+)-(?P<task>.+)-g(?P<gen>\d+)$")


# --- pure parts ----------------------------------------------------------------


def busy_ticks(proc_stat: str) -> int:
    """Busy clock ticks of the whole machine from /proc/stat's ``cpu`` line:
    user + nice + system + irq + softirq (guest time is already in user)."""
    for line in proc_stat.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu":
            user, nice, system, _idle, _iowait, irq, softirq = (int(x) for x in fields[1:8])
            return user + nice + system + irq + softirq
    raise ValueError("no aggregate 'cpu' line in /proc/stat")


def busy_seconds(before: str, after: str, clk_tck: int) -> float:
    return (busy_ticks(after) - busy_ticks(before)) / clk_tck


def proc_times(stat: str) -> tuple[int, int, str, str]:
    """(utime+stime, cutime+cstime, comm, starttime) from one /proc/PID/stat line."""
    comm = stat[stat.index("(") + 1 : stat.rindex(")")]
    rest = stat[stat.rindex(")") + 1 :].split()
    # rest[0] is field 3 (state): utime 14, stime 15, cutime 16, cstime 17, starttime 22
    return int(rest[11]) + int(rest[12]), int(rest[13]) + int(rest[14]), comm, rest[19]


def value_at(samples: list[tuple[float, float]], t: float) -> float:
    """Cumulative CPU seconds at time ``t``, linear between samples (clamped at the ends)."""
    if not samples:
        return 0.0
    if t <= samples[0][0]:
        return samples[0][1]
    if t >= samples[-1][0]:
        return samples[-1][1]
    lo, hi = 0, len(samples) - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if samples[mid][0] <= t:
            lo = mid
        else:
            hi = mid
    (t0, v0), (t1, v1) = samples[lo], samples[hi]
    return v0 if t1 == t0 else v0 + (v1 - v0) * (t - t0) / (t1 - t0)


def cpu_between(samples: list[tuple[float, float]], t0: float, t1: float) -> float:
    return max(0.0, value_at(samples, t1) - value_at(samples, t0)) if t1 > t0 else 0.0


def parse_container_name(name: str) -> tuple[str, str, int] | None:
    """``tfchaos-<run>-worker-1-g2`` -> ("<run>", "worker-1", 2); None for others (proxy, helpers)."""
    m = NAME_RE.match(name or "")
    return (m["run"], m["task"], int(m["gen"])) if m else None


def kind_of(event: dict) -> str:
    return event.get("event") or event.get("kind") or ""


def generations(events: list[dict], task: str) -> list[dict]:
    """Per generation of ``task`` (its k-th ``start`` event): when it started, its
    first step after that start (before the next start; None if none), and the
    runner's last ``address`` event for it before that start (a standby's go)."""
    starts = sorted(e["t"] for e in events if kind_of(e) == "start" and e.get("source") == task)
    steps = sorted(e["t"] for e in events if kind_of(e) == "step" and e.get("source") == task)
    addresses = sorted(e["t"] for e in events if kind_of(e) == "address" and e.get("task") == task)
    out = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else float("inf")
        first = next((t for t in steps if start <= t < end), None)
        previous = starts[k - 1] if k else float("-inf")
        go = max((t for t in addresses if previous <= t <= start), default=None)
        out.append({"start_t": start, "first_step_t": first, "address_t": go})
    return out


def go_from_shares(samples: list[tuple[float, float, int]]) -> float | None:
    """When a standby was told to go, from its cpu.shares leaving the standby weight
    (midway between the last sample at that weight and the first one after)."""
    for i, (t, _cpu, shares) in enumerate(samples):
        if shares and shares != STANDBY_SHARES:
            return t if i == 0 else (samples[i - 1][0] + t) / 2
    return None


def attribute_worker(
    samples: list[tuple[float, float]], *, standby: bool, go_t: float | None, first_step_t: float | None, started: bool
) -> dict:
    """Split one worker container's CPU (cumulative samples, seconds) at its go
    (a standby) and its first training step.

    imported_ahead: a standby's CPU before its go (all of it if it never got one);
    to_first_step: from the start (or the go) to the first step (all of the rest
    when no step came); training: after the first step."""
    begin, end = (samples[0][0], samples[-1][0]) if samples else (0.0, 0.0)
    total = cpu_between(samples, begin, end)
    out = {
        "imported_ahead": 0.0,
        "to_first_step": 0.0,
        "training": 0.0,
        "total": total,
        "used": started or not standby,
        "reached_step": first_step_t is not None,
    }
    if standby and (go_t is None or not started):
        out["imported_ahead"] = total
        out["used"] = False
        return out
    go = go_t if standby else begin
    out["imported_ahead"] = cpu_between(samples, begin, go) if standby else 0.0
    stop = first_step_t if first_step_t is not None else end
    out["to_first_step"] = cpu_between(samples, go, stop)
    out["training"] = cpu_between(samples, stop, end)
    return out


def report_addresses(report: dict) -> list[tuple[float, str]]:
    return [
        (e["t"], e["address"])
        for e in report.get("timeline", {}).get("events", [])
        if kind_of(e) == "address" and e.get("address")
    ]


def match_runs(runs: dict[str, dict], reports: dict[str, dict], margin_s: float = 2.0) -> dict[str, str]:
    """Scenario report -> the run id whose containers it describes.

    Each run is a Docker network of its own; networks that exist at the same
    time have different subnets, so an address the runner recorded at time t
    belongs to the run whose subnet holds it and whose containers lived at t.
    ``runs``: run id -> {"subnets": [...], "t0", "t1"}; ``reports``: name -> report."""
    matched: dict[str, str] = {}
    nets = {run: [ipaddress.ip_network(s, strict=False) for s in info.get("subnets", [])] for run, info in runs.items()}
    taken: set[str] = set()
    for name, report in reports.items():
        scores = {}
        for run, info in runs.items():
            if run in taken:
                continue
            n = sum(
                1
                for t, address in report_addresses(report)
                if info["t0"] - margin_s <= t <= info["t1"] + margin_s
                and any(ipaddress.ip_address(address) in net for net in nets[run])
            )
            if n:
                scores[run] = n
        if scores:
            best = max(scores, key=scores.get)
            matched[name] = best
            taken.add(best)
    return matched


CPU_KEYS = (
    "workers_to_first_step",
    "workers_training",
    "imported_ahead_used",
    "imported_ahead_unused",
    "reference_runs",
    "proxy",
    "helper",
    "venv_fill",
    "other_ours",
    "unknown_gone",
    "other_containers",
)


def analyse(containers: list[dict], reports: dict[str, dict]) -> dict:
    """CPU by who and per worker container, from the sampler's containers and
    the side-run's reports. A container: {"id", "name", "labels", "ours",
    "samples": [(t, cpu_s, shares)], "subnets"}."""
    cpu = dict.fromkeys(CPU_KEYS, 0.0)
    ours = [c for c in containers if c.get("ours")]
    for c in containers:
        if not c.get("ours"):
            key = "unknown_gone" if c.get("ours") is None else "other_containers"
            cpu[key] += _total(c)
    runs: dict[str, dict] = {}
    for c in ours:
        run = c["labels"].get(RUN_LABEL, "")
        if not run:
            continue
        info = runs.setdefault(run, {"subnets": set(), "t0": float("inf"), "t1": float("-inf")})
        info["subnets"].update(c.get("subnets", ()))
        if c["samples"]:
            info["t0"] = min(info["t0"], c["samples"][0][0])
            info["t1"] = max(info["t1"], c["samples"][-1][0])
    for info in runs.values():
        info["subnets"] = sorted(info["subnets"])
    matched = match_runs(runs, reports)
    report_of_run = {run: name for name, run in matched.items()}
    workers = []
    starts = 0
    for name in matched:
        events = reports[name].get("timeline", {}).get("events", [])
        starts += sum(1 for e in events if kind_of(e) == "start")
    for c in ours:
        role = c["labels"].get(ROLE_LABEL, "")
        run = c["labels"].get(RUN_LABEL, "")
        if not run:  # no run's: the fill of a worker image's venv volume (once per image id)
            cpu["venv_fill" if (c["name"] or "").startswith("tfchaos-venv-") else "other_ours"] += _total(c)
            continue
        if run not in report_of_run:
            cpu["reference_runs"] += _total(c)
            continue
        parsed = parse_container_name(c["name"])
        if role not in ("worker", "standby") or parsed is None:
            cpu[role if role in ("proxy", "helper") else "other_ours"] += _total(c)
            continue
        _run, task, gen = parsed
        report = reports[report_of_run[run]]
        gens = generations(report.get("timeline", {}).get("events", []), task)
        g = gens[gen] if gen < len(gens) else None
        samples = [(t, v) for t, v, _s in c["samples"]]
        standby = role == "standby"
        go = None
        started = g is not None
        if standby:
            told = go_from_shares(c["samples"])
            go = g["address_t"] if g and g["address_t"] is not None else told
            # A standby replaced by a fresh container (not what was due) never got its go.
            started = started and told is not None
        split = attribute_worker(
            samples,
            standby=standby,
            go_t=go,
            first_step_t=g["first_step_t"] if g and started else None,
            started=started,
        )
        cpu["imported_ahead_used" if split["used"] else "imported_ahead_unused"] += split["imported_ahead"]
        cpu["workers_to_first_step"] += split["to_first_step"]
        cpu["workers_training"] += split["training"]
        workers.append(
            {
                "scenario": report_of_run[run],
                "container": c["name"],
                "role": role,
                **split,
                "start_t": g["start_t"] if g else None,
                "first_step_t": g["first_step_t"] if g else None,
                "go_t": go,
            }
        )
    return {
        "cpu": cpu,
        "starts": starts,
        "workers": workers,
        "runs": {run: {**info, "scenario": report_of_run.get(run)} for run, info in runs.items()},
        "unmatched_reports": sorted(set(reports) - set(matched)),
    }


def _total(c: dict) -> float:
    s = c["samples"]
    return max(0.0, s[-1][1] - s[0][1]) if s else 0.0


def report_figures(reports: dict[str, dict]) -> dict:
    statuses = {name: r.get("status", "error") for name, r in reports.items()}
    counts = {s: sum(1 for v in statuses.values() if v == s) for s in STATUSES}
    phases = {p: sum((r.get("timings") or {}).get(p) or 0.0 for r in reports.values()) for p in PHASES}
    with_reference = sum(
        1 for r in reports.values() if (r.get("timeline", {}).get("info") or {}).get("reference_curve")
    )
    return {"statuses": statuses, "verdicts": counts, "phases": phases, "reports_with_reference": with_reference}


def verdict_differences(candidate: list[dict[str, str]], baseline: list[dict[str, str]]) -> list[str]:
    """Scenarios whose verdicts (over every repeat) differ between the sides."""
    out = []
    names = sorted(set().union(*candidate, *baseline)) if candidate or baseline else []
    for name in names:
        c = sorted(run[name] for run in candidate if name in run)
        b = sorted(run[name] for run in baseline if name in run)
        if c and b and c != b:
            out.append(f"{name}: candidate {_tally(c)}, baseline {_tally(b)}")
    return out


def _tally(values: list[str]) -> str:
    return " ".join(f"{v}x{values.count(v)}" if len(values) > 1 else v for v in dict.fromkeys(values))


# --- table ---------------------------------------------------------------------


ROWS = [
    # (label, key in a side-run's flat figures, format)
    ("suite wall s", "wall_s", "{:.1f}"),
    ("machine CPU s during it", "machine_cpu_s", "{:.1f}"),
    ("image build (+ venv fill) wall s", "build_wall_s", "{:.1f}"),
    ("image build machine CPU s", "build_cpu_s", "{:.1f}"),
    ("CPU s by who:", None, ""),
    ("  workers: start to first step", "workers_to_first_step", "{:.1f}"),
    ("  workers: training", "workers_training", "{:.1f}"),
    ("  standby: imported ahead (used)", "imported_ahead_used", "{:.1f}"),
    ("  standby: imported ahead (never used)", "imported_ahead_unused", "{:.1f}"),
    ("  reference runs (all their containers)", "reference_runs", "{:.1f}"),
    ("  proxy", "proxy", "{:.1f}"),
    ("  helper", "helper", "{:.1f}"),
    ("  venv volume fill (once per image)", "venv_fill", "{:.1f}"),
    ("  other containers of the run", "other_ours", "{:.1f}"),
    ("  containers gone before lookup", "unknown_gone", "{:.1f}"),
    ("  runner + engine (machine - containers)", "runner_engine", "{:.1f}"),
    ("    chaos run process", "runner", "{:.1f}"),
    ("    dockerd, containerd, shims, fuse-overlayfs", "engine", "{:.1f}"),
    ("    this benchmark (sampler)", "sampler", "{:.1f}"),
    ("    rest (other processes, missed exits)", "rest", "{:.1f}"),
    ("  other containers on the machine", "other_containers", "{:.1f}"),
    ("worker starts", "starts", "{:.0f}"),
    ("  worker containers: fresh", "fresh_workers", "{:.0f}"),
    ("  standbys used", "standbys_used", "{:.0f}"),
    ("  standbys never used", "standbys_unused", "{:.0f}"),
    ("CPU s per start to first step", "per_start", "{:.2f}"),
    ("  with its import ahead", "per_start_with_import", "{:.2f}"),
    ("phase wall s summed over scenarios:", None, ""),
    ("  bring up", "bring_up_s", "{:.1f}"),
    ("  time to symptom", "time_to_symptom_s", "{:.1f}"),
    ("  time to recover", "time_to_recover_s", "{:.1f}"),
    ("  total", "total_s", "{:.1f}"),
    ("verdicts: pass", "pass", "{:.0f}"),
    ("  fail", "fail", "{:.0f}"),
    ("  unknown", "unknown", "{:.0f}"),
    ("  error", "error", "{:.0f}"),
    ("reference runs computed", "references_computed", "{:.0f}"),
    ("  cached", "references_cached", "{:.0f}"),
    ("left behind (cleaned)", "left_behind", "{:.0f}"),
    ("chaos run exit code", "exit_code", "{:.0f}"),
]


def flat_figures(run: dict) -> dict[str, float]:
    """One side-run's figures under the table's keys."""
    cpu = run["analysis"]["cpu"]
    containers = sum(cpu.values()) - cpu["other_containers"]
    machine = run["machine_cpu_s"]
    runner_engine = machine - containers - cpu["other_containers"]
    starts = run["analysis"]["starts"]
    out = {
        "wall_s": run["wall_s"],
        "machine_cpu_s": machine,
        "build_wall_s": run["build"]["wall_s"],
        "build_cpu_s": run["build"]["machine_cpu_s"],
        **cpu,
        "runner_engine": runner_engine,
        "runner": run["runner_cpu_s"],
        "engine": run["engine_cpu_s"],
        "sampler": run["sampler_cpu_s"],
        "rest": runner_engine - run["runner_cpu_s"] - run["engine_cpu_s"] - run["sampler_cpu_s"],
        "starts": starts,
        "fresh_workers": sum(1 for w in run["analysis"]["workers"] if w["role"] == "worker"),
        "standbys_used": sum(1 for w in run["analysis"]["workers"] if w["role"] == "standby" and w["used"]),
        "standbys_unused": sum(1 for w in run["analysis"]["workers"] if w["role"] == "standby" and not w["used"]),
        "per_start": cpu["workers_to_first_step"] / starts if starts else float("nan"),
        "per_start_with_import": (cpu["workers_to_first_step"] + cpu["imported_ahead_used"]) / starts
        if starts
        else float("nan"),
        **run["figures"]["phases"],
        **run["figures"]["verdicts"],
        "references_computed": run["references"]["computed"],
        "references_cached": run["references"]["cached"],
        "left_behind": len(run["left_behind"]),
        "exit_code": run["exit_code"],
    }
    return out


def _median(values: list[float]) -> float | None:
    values = [v for v in values if v is not None and v == v]
    return statistics.median(values) if values else None


def format_table(candidate: list[dict[str, float]], baseline: list[dict[str, float]]) -> str:
    """Rows of medians over the repeats: candidate, baseline, candidate/baseline."""
    sides = [("candidate", candidate), ("baseline", baseline)]
    shown = [(name, runs) for name, runs in sides if runs]
    width = max(len(r[0]) for r in ROWS)
    head = f"{'':{width}}" + "".join(f"  {name:>10}" for name, _ in shown)
    if len(shown) == 2:
        head += f"  {'C/B':>6}"
    lines = [head]
    for label, key, fmt in ROWS:
        if key is None:
            lines.append(label)
            continue
        values = [_median([r.get(key) for r in runs]) for _, runs in shown]
        cells = "".join(f"  {fmt.format(v) if v is not None else '-':>10}" for v in values)
        if len(shown) == 2:
            c, b = values
            ratio = f"{c / b:.2f}" if c is not None and b not in (None, 0) else "-"
            cells += f"  {ratio:>6}"
        lines.append(f"{label:{width}}{cells}")
    return "\n".join(lines)


# --- sampling ------------------------------------------------------------------


def read_proc_stat() -> str:
    with open("/proc/stat", encoding="ascii") as fh:
        return fh.read()


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def _epoch(iso: str | None) -> float | None:
    """Docker's ``2026-11-26T06:20:47.123456789Z`` -> seconds since the epoch."""
    if not iso or iso.startswith("0001-"):
        return None
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)?$", iso)
    if not m:
        return None
    base = datetime.fromisoformat(m[1] + ((m[3] or "Z").replace("Z", "+00:00")))
    return base.timestamp() + (float("0" + m[2]) if m[2] else 0.0)


class Sampler(threading.Thread):
    """Every INTERVAL_S: cpuacct.usage and cpu.shares of every container, the
    engine processes' CPU times. Containers first seen after the start and
    labelled with ``session`` (or owned by ``child_pid``) are the run's own."""

    def __init__(self, session: str, image_ids: set[str] = frozenset(), interval: float = INTERVAL_S):
        super().__init__(name="suite-speed-sampler", daemon=True)
        import docker

        self.client = docker.from_env(timeout=20)
        self.session = session
        self.image_ids = set(image_ids)  # the side's worker images: their venv fill helpers are the side's
        self.child_pid: int | None = None
        self.interval = interval
        self.stop_event = threading.Event()
        self.containers: dict[str, dict] = {}
        self.engine: dict[tuple[int, str], dict] = {}  # (pid, starttime) -> {"comm", "first", "last"}
        self.not_engine: set[int] = set()
        self.preexisting: set[str] = set()
        self.errors: list[str] = []
        self.first = True

    def run(self) -> None:
        while True:
            try:
                self.sample()
            except Exception as exc:  # noqa: BLE001 - a sampling hiccup must not end the benchmark
                self.errors.append(repr(exc))
            if self.stop_event.wait(self.interval):
                break
        try:
            self.sample()  # the last word
        except Exception as exc:  # noqa: BLE001
            self.errors.append(repr(exc))

    def stop(self) -> None:
        self.stop_event.set()
        self.join(timeout=30)

    def sample(self) -> None:
        t = time.time()
        try:
            ids = [d for d in os.listdir(CGROUP_CPUACCT) if len(d) == 64]
        except OSError:
            ids = []
        readings = []
        for cid in ids:
            usage = _read(CGROUP_CPUACCT / cid / "cpuacct.usage")
            if usage is None:
                continue  # gone between the listing and the read
            shares = _read(CGROUP_CPU / cid / "cpu.shares")
            readings.append((cid, int(usage) / 1e9, int(shares) if shares and shares.strip().isdigit() else 0))
        for cid, cpu, shares in readings:
            record = self.containers.get(cid)
            if record is None:
                record = self.containers[cid] = self.lookup(cid, t, cpu, preexisting=self.first)
            record["samples"].append((t, cpu, shares))
        self.sample_engine()
        self.first = False

    def lookup(self, cid: str, t: float, cpu: float, *, preexisting: bool) -> dict:
        record = {"id": cid, "name": "?", "labels": {}, "ours": False, "subnets": [], "samples": []}
        try:
            c = self.client.containers.get(cid)
        except Exception:  # noqa: BLE001 - gone already (a short helper): its CPU is counted, its owner unknown
            record["ours"] = None if not preexisting else False
            return record
        labels = c.labels or {}
        owner_pid = (labels.get(OWNER_LABEL) or "::").split(":")[-2]
        ours = not preexisting and (
            labels.get(SESSION_LABEL) == self.session
            or (self.child_pid is not None and owner_pid == str(self.child_pid))
            or (RUN_LABEL not in labels and labels.get(IMAGE_LABEL) in self.image_ids)
        )
        networks = (c.attrs.get("NetworkSettings") or {}).get("Networks") or {}
        subnets = []
        for net in networks.values():
            if net.get("IPAddress") and net.get("IPPrefixLen"):
                subnets.append(str(ipaddress.ip_network(f"{net['IPAddress']}/{net['IPPrefixLen']}", strict=False)))
        record.update(name=c.name, labels=labels, ours=ours, subnets=subnets, image=c.attrs.get("Image"))
        started = _epoch((c.attrs.get("State") or {}).get("StartedAt"))
        if not preexisting and started is not None and started < t:
            record["samples"].append((started, 0.0, 0))  # its CPU before the first sighting began at its start
        return record

    def sample_engine(self) -> None:
        live = set()
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            pid = int(entry)
            live.add(pid)
            if pid in self.not_engine:
                continue
            stat = _read(Path("/proc") / entry / "stat")
            if stat is None:
                continue
            try:
                own, children, comm, start = proc_times(stat)
            except (ValueError, IndexError):
                continue
            if comm not in ENGINE_PROCESSES:
                self.not_engine.add(pid)
                continue
            ticks = own + (children if ENGINE_PROCESSES[comm] else 0)
            key = (pid, start)
            if key not in self.engine:
                # Running before the sampler: count from now; started since: from 0.
                self.engine[key] = {"comm": comm, "first": ticks if self.first else 0, "last": ticks}
            self.engine[key]["last"] = ticks
        self.not_engine &= live

    def engine_cpu_s(self) -> float:
        tck = os.sysconf("SC_CLK_TCK")
        return sum(p["last"] - p["first"] for p in self.engine.values()) / tck


# --- sides ---------------------------------------------------------------------


@dataclass
class Side:
    label: str  # "candidate" or "baseline"
    path: Path
    rev: str  # what it is: a commit, or "working tree"
    worktree: bool = False  # made by us: removed at the end
    variant: str | None = None  # TFCHAOS_IMAGE_VARIANT of its code images


@dataclass
class State:
    """What the benchmark must undo, whatever happens."""

    tmp: Path
    sides: list[Side] = field(default_factory=list)
    child: subprocess.Popen | None = None
    sessions: list[tuple[Side, dict, str]] = field(default_factory=list)  # (side, env, session) of each side-run
    # Ids of the per-side worker images ever built (a run may rebuild one): their venv volumes go at the end.
    image_ids: set[str] = field(default_factory=set)


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def default_baseline() -> str:
    for rev in ("origin/main", "HEAD~1"):
        if (
            subprocess.run(
                ["git", "rev-parse", "--verify", "-q", f"{rev}^{{commit}}"], cwd=ROOT, capture_output=True
            ).returncode
            == 0
        ):
            return rev
    raise SystemExit("no baseline: neither origin/main nor HEAD~1 exists; give --baseline REV")


def make_baseline(spec: str, state: State) -> Side:
    path = Path(spec).expanduser()
    if path.is_dir():
        if not (path / "chaos" / "cli.py").is_file():
            raise SystemExit(f"--baseline {spec}: not a tfchaos checkout (no chaos/cli.py)")
        try:
            rev = git("rev-parse", "HEAD", cwd=path)
        except subprocess.CalledProcessError:
            rev = "?"
        return Side("baseline", path.resolve(), f"{rev[:12]} (checkout {path})")
    try:
        commit = git("rev-parse", "--verify", f"{spec}^{{commit}}")
    except subprocess.CalledProcessError:
        raise SystemExit(f"--baseline {spec}: neither a revision of {ROOT} nor a folder") from None
    where = state.tmp / "baseline"
    side = Side("baseline", where, f"{commit[:12]} ({spec})", worktree=True)
    state.sides.append(side)  # before the add: a half-made worktree is removed too
    git("worktree", "add", "--detach", str(where), commit)
    return side


def remove_worktree(side: Side) -> None:
    if not side.worktree:
        return
    result = subprocess.run(
        ["git", "worktree", "remove", "--force", str(side.path)], cwd=ROOT, capture_output=True, text=True
    )
    if result.returncode != 0 and side.path.exists():
        shutil.rmtree(side.path, ignore_errors=True)
    subprocess.run(["git", "worktree", "prune"], cwd=ROOT, capture_output=True)


def real_cache() -> Path:
    return Path(os.environ.get("TFCHAOS_CACHE") or "~/.cache/tfchaos").expanduser()


def fresh_cache(where: Path) -> Path:
    """A cache folder with every entry of the real one linked in (wheels, the
    images lock) except the reference runs."""
    where.mkdir(parents=True)
    real = real_cache()
    (real / "venv").mkdir(parents=True, exist_ok=True)  # venv volume locks and markers: shared, like the volumes
    if real.is_dir():
        for entry in real.iterdir():
            if entry.name != "reference":
                (where / entry.name).symlink_to(entry)
    return where


def side_env(side: Side, session: str, cache: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TFCHAOS_IMAGE_VARIANT", "TFCHAOS_SESSION")}
    env["PYTHONPATH"] = os.pathsep.join([str(side.path)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    env["TFCHAOS_SESSION"] = session
    env["PYTHONUNBUFFERED"] = "1"
    if side.variant:
        env["TFCHAOS_IMAGE_VARIANT"] = side.variant
    if cache is not None:
        env["TFCHAOS_CACHE"] = str(cache)
    return env


def run_child(
    argv: list[str], side: Side, env: dict, state: State, log: Path, quiet: bool, on_start=None
) -> tuple[int, list[str]]:
    """Run one chaos command in its own session (a terminal's Ctrl-C reaches only
    us; we send the child one SIGINT and wait for its teardown)."""
    lines: list[str] = []
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"$ {' '.join(argv)}  (cwd {side.path})\n")
        proc = subprocess.Popen(
            argv,
            cwd=side.path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
            bufsize=1,
            start_new_session=True,
        )
        state.child = proc
        if on_start:
            on_start(proc.pid)
        try:
            for line in proc.stdout:
                lines.append(line.rstrip("\n"))
                out.write(line)
                if not quiet:
                    print(f"[{side.label}] {line}", end="", flush=True)
            proc.wait()
        finally:
            stop_child(state)
    return proc.returncode, lines


def stop_child(state: State) -> None:
    proc = state.child
    if proc is None:
        return
    if proc.poll() is None:
        print(
            f"\nsuite_speed: stopping the chaos run (pid {proc.pid}): it tears its clusters down ...",
            file=sys.stderr,
            flush=True,
        )
        for sig, wait in ((signal.SIGINT, CHILD_STOP_S), (signal.SIGTERM, 60), (signal.SIGKILL, 10)):
            try:
                proc.send_signal(sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
    if proc.stdout:
        proc.stdout.close()
    state.child = None


def leftovers(session: str) -> dict[str, list[str]]:
    """Run ids with objects of this session still on the engine."""
    import docker

    client = docker.from_env(timeout=30)
    label = f"{SESSION_LABEL}={session}"
    runs: dict[str, list[str]] = {}
    for kind, objects in (
        ("container", client.containers.list(all=True, filters={"label": label})),
        ("volume", client.volumes.list(filters={"label": label})),
        ("network", client.networks.list(filters={"label": label})),
    ):
        for obj in objects:
            labels = (obj.attrs.get("Config") or {}).get("Labels") if kind == "container" else obj.attrs.get("Labels")
            run = (labels or {}).get(RUN_LABEL, "?")
            runs.setdefault(run, []).append(f"{kind} {obj.name}")
    return runs


def clean_leftovers(side: Side, env: dict, session: str) -> list[str]:
    found = leftovers(session)
    for run in found:
        if run != "?":
            subprocess.run(
                [sys.executable, "-m", "chaos.cli", "clean", "--run", run],
                cwd=side.path,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
    return [f"{run}: {what}" for run, objects in found.items() for what in objects]


def load_reports(report_dir: Path) -> dict[str, dict]:
    reports = {}
    for path in sorted(report_dir.glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and "scenario" in data and "timeline" in data:
            reports[data["scenario"]] = data
    return reports


def scenario_files(side: Side, given: list[str]) -> tuple[list[str], list[str]]:
    """The files this side runs (paths inside its checkout where they exist there)
    and the given ones it has no copy of."""
    if not given:
        return sorted(str(p) for p in (side.path / "scenarios").glob("*.yaml")), []
    files, missing = [], []
    for item in given:
        path = Path(item).resolve()
        try:
            rel = path.relative_to(ROOT)
        except ValueError:
            files.append(str(path))  # outside the checkout: the same file for both
            continue
        mine = side.path / rel
        (files if mine.exists() else missing).append(str(mine) if mine.exists() else str(rel))
    return files, missing


def run_side(side: Side, args, repeat: int, state: State) -> dict:
    label = f"{side.label}-{repeat}"
    work = state.tmp / label
    work.mkdir()
    report_dir = (Path(args.report_dir).resolve() / label) if args.report_dir else work / "reports"
    log = work / "output.log"
    session = f"suite-speed-{uuid.uuid4().hex[:10]}"
    cache = None if args.warm_cache else fresh_cache(work / "cache")
    env = side_env(side, session, cache)
    state.sessions.append((side, env, session))
    files, missing = scenario_files(side, args.scenarios)
    tck = os.sysconf("SC_CLK_TCK")
    print(f"\n== {label}: {side.rev} at {side.path}: {len(files)} scenario file(s), -j {args.jobs}", flush=True)

    t0, s0 = time.time(), read_proc_stat()
    build_rc, build_lines = run_child(
        [sys.executable, "-m", "chaos.cli", "images", "build", *(f"--tf={v}" for v in args.tf or ())],
        side,
        env,
        state,
        log,
        args.quiet,
    )
    # Where the venv cache lives on that side: the Docker backend's room, or cluster/ before it.
    venv_module = next(
        (
            m
            for m in ("chaos.backends.docker", "chaos.cluster")
            if (side.path / m.replace(".", "/") / "venv_cache.py").exists()
        ),
        None,
    )
    if build_rc == 0 and venv_module:
        # A side whose runner copies each image's venv to a volume pays that once per
        # image, like the build: here, not inside the measured run.
        api = "api as docker_api" if venv_module == "chaos.backends.docker" else "docker_api"
        fill = (
            f"from {venv_module} import {api}, venv_cache; c = docker_api.connect(); "
            f"[venv_cache.venv_volume(c, i) for i in {sorted(side_image_ids(side, env))!r} if venv_cache.wanted(c)]"
        )
        build_rc, more = run_child([sys.executable, "-c", fill], side, env, state, log, args.quiet)
        build_lines += more
    build = {
        "wall_s": time.time() - t0,
        "machine_cpu_s": busy_seconds(s0, read_proc_stat(), tck),
        "exit_code": build_rc,
        "tail": build_lines[-5:],
    }
    print(f"== {label}: images built in {build['wall_s']:.1f} s (exit {build_rc})", flush=True)
    if build_rc != 0:
        raise SystemExit(f"{label}: chaos images build exited {build_rc}; its output is above")

    image_ids = side_image_ids(side, env)
    if side.variant:
        state.image_ids |= image_ids
    reference_dir = (cache or real_cache()) / "reference"
    before = {p: p.stat().st_mtime for p in reference_dir.glob("*.json")} if reference_dir.is_dir() else {}
    sampler = Sampler(session, image_ids)
    sampler.start()
    self0 = resource.getrusage(resource.RUSAGE_SELF)
    kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0, s0 = time.time(), read_proc_stat()
    try:
        rc, lines = run_child(
            [sys.executable, "-m", "chaos.cli", "run", *files, "-j", str(args.jobs), "--report-dir", str(report_dir)],
            side,
            env,
            state,
            log,
            args.quiet,
            on_start=lambda pid: setattr(sampler, "child_pid", pid),
        )
    finally:
        t1, s1 = time.time(), read_proc_stat()
        kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        sampler.stop()
        self1 = resource.getrusage(resource.RUSAGE_SELF)
        if side.variant:  # an image the run rebuilt (its code changed meanwhile) has a venv volume too
            state.image_ids |= {c.get("image") for c in sampler.containers.values() if c.get("ours")} - {None}
            state.image_ids |= side_image_ids(side, env)
        try:
            left = clean_leftovers(side, env, session)  # also after a Ctrl-C
        except Exception as exc:  # noqa: BLE001 - checked again at the end
            left = [f"? (could not list: {exc})"]
    after = {p: p.stat().st_mtime for p in reference_dir.glob("*.json")} if reference_dir.is_dir() else {}
    new_files = sum(1 for p, m in after.items() if p not in before or m > before[p])
    reports = load_reports(report_dir)
    figures = report_figures(reports)
    computed = sum(1 for line in lines if REFERENCE_LINE in line)
    containers = list(sampler.containers.values())
    analysis = analyse(containers, reports)
    run = {
        "side": side.label,
        "repeat": repeat,
        "rev": side.rev,
        "path": str(side.path),
        "session": session,
        "files": files,
        "missing_files": missing,
        "jobs": args.jobs,
        "exit_code": rc,
        "started": t0,
        "wall_s": t1 - t0,
        "machine_cpu_s": busy_seconds(s0, s1, tck),
        "runner_cpu_s": (kids1.ru_utime + kids1.ru_stime) - (kids0.ru_utime + kids0.ru_stime),
        "engine_cpu_s": sampler.engine_cpu_s(),
        "sampler_cpu_s": (self1.ru_utime + self1.ru_stime) - (self0.ru_utime + self0.ru_stime),
        "build": build,
        "references": {
            "computed": computed,
            "new_cache_files": new_files,
            "cached": max(0, figures["reports_with_reference"] - computed),
            "cache": "warm (shared)" if args.warm_cache else "fresh",
        },
        "figures": figures,
        "analysis": analysis,
        "left_behind": left,
        "sampler_errors": sampler.errors[:20],
        "engine_processes": sorted({p["comm"] for p in sampler.engine.values()}),
        "containers": [
            {
                **{k: c[k] for k in ("id", "name", "ours", "subnets")},
                "labels": {k: v for k, v in c["labels"].items() if k.startswith("io.tfchaos.")},
                "samples": [(round(t - t0, 3), round(v, 4), s) for t, v, s in c["samples"]],
            }
            for c in containers
            if c.get("ours") is not False or _total(c) > 0.05
        ],
        "summary_lines": lines[-(len(files) * 3 + 10) :],
    }
    flat = flat_figures(run)
    print(
        f"== {label}: {run['wall_s']:.1f} s wall, {run['machine_cpu_s']:.1f} CPU s, exit {rc}; "
        + ", ".join(f"{k} {v}" for k, v in figures["verdicts"].items() if v)
        + (f"; LEFT BEHIND (cleaned): {len(left)}" if left else ""),
        flush=True,
    )
    run["flat"] = flat
    return run


def side_image_ids(side: Side, env: dict) -> set[str]:
    """Ids of the worker images this side's code runs (its variant tags, or the shared ones)."""
    import docker

    client = docker.from_env(timeout=60)
    suffix = f"-{side.variant}" if side.variant else ""
    ids = set()
    for image in client.images.list(name="tfchaos/worker"):
        if any(re.fullmatch(rf"tfchaos/worker:tf[0-9.]+{re.escape(suffix)}", tag) for tag in image.tags):
            ids.add(image.id)
    return ids


def remove_variant_images(sides: list[Side], image_ids: set[str]) -> list[str]:
    """The per-side code images, and the venv volumes made for them (chaos.cluster.venv_cache)."""
    import docker

    client = docker.from_env(timeout=120)
    tags: dict[str, str] = {}
    for side in sides:
        if not side.variant:
            continue
        for image in client.images.list(filters={"label": "io.tfchaos.project=tfchaos"}):
            for tag in image.tags:
                if tag.endswith(f"-{side.variant}"):
                    tags[tag] = image.id
    removed = []
    for volume in client.volumes.list(filters={"label": f"{ROLE_LABEL}={VENV_ROLE}"}):
        if (volume.attrs.get("Labels") or {}).get(IMAGE_LABEL) in image_ids | set(tags.values()):
            try:
                volume.remove(force=True)
                removed.append(f"volume {volume.name}")
                for suffix in (".lock", ".complete"):
                    (real_cache() / "venv" / f"{volume.name}{suffix}").unlink(missing_ok=True)
            except Exception as exc:  # noqa: BLE001 - say it, go on
                print(f"suite_speed: could not remove volume {volume.name}: {exc}", file=sys.stderr)
    for tag in tags:
        try:
            client.images.remove(tag)
            removed.append(tag)
        except Exception as exc:  # noqa: BLE001 - say it, go on
            print(f"suite_speed: could not remove {tag}: {exc}", file=sys.stderr)
    return removed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenarios", nargs="*", help="scenario files (default: every scenarios/*.yaml of each side)")
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="a revision (default origin/main if it exists, else HEAD~1) or the path of an existing checkout",
    )
    parser.add_argument("-j", "--jobs", type=int, default=3, help="passed to chaos run (default 3)")
    parser.add_argument("--repeat", type=int, default=1, metavar="K", help="side-runs per side, alternated B,C,B,C,...")
    parser.add_argument("--sides", choices=("candidate", "baseline", "both"), default="both")
    parser.add_argument("--out", metavar="FILE.json", help="write every raw figure here")
    parser.add_argument("--report-dir", metavar="DIR", help="keep each side-run's reports in DIR/<side>-<i>/")
    parser.add_argument(
        "--warm-cache",
        action="store_true",
        help="use the real TFCHAOS_CACHE (cached reference runs count) instead of a fresh one per side-run",
    )
    parser.add_argument(
        "--shared-tags",
        action="store_true",
        help="build each side into the shared tfchaos/worker:tf2.* tags (swaps the code under any "
        "other run on this engine; the candidate builds last) instead of a tag per side",
    )
    parser.add_argument(
        "--tf",
        action="append",
        metavar="VERSION",
        help="build only these TF versions' worker images before each side-run (repeatable; default: "
        "every version `chaos images build` builds); a scenario needing another builds it in its run",
    )
    parser.add_argument("--keep-images", action="store_true", help="keep the per-side image tags at the end")
    parser.add_argument("--quiet", action="store_true", help="do not echo the chaos commands' output")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    state = State(Path(tempfile.mkdtemp(prefix="tfchaos-suite-speed-")))

    def on_term(signum, frame):
        raise KeyboardInterrupt

    # Also when started with SIGINT ignored (a background job): a handler of
    # ours is reset to the default in the children, so their Ctrl-C works.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, on_term)
    runs: list[dict] = []
    interrupted = False
    try:
        candidate = Side("candidate", ROOT, _describe_checkout())
        sides = []
        if args.sides in ("baseline", "both"):
            sides.append(make_baseline(args.baseline or default_baseline(), state))
        if args.sides in ("candidate", "both"):
            sides.append(candidate)
        for side in sides:
            if not args.shared_tags:
                side.variant = f"speed{os.getpid()}-{side.label}"
            if side not in state.sides:
                state.sides.append(side)
        for repeat in range(1, args.repeat + 1):
            for side in sides:  # baseline first: with --shared-tags the candidate's images are the ones left
                runs.append(run_side(side, args, repeat, state))
    except KeyboardInterrupt:
        interrupted = True
        print("\nsuite_speed: interrupted; cleaning up", file=sys.stderr, flush=True)
    finally:

        def busy(*_):
            print("suite_speed: still cleaning up ...", file=sys.stderr, flush=True)

        signal.signal(signal.SIGINT, busy)
        signal.signal(signal.SIGTERM, busy)
        stop_child(state)
        for side, env, session in state.sessions:
            try:
                clean_leftovers(side, env, session)
            except Exception as exc:  # noqa: BLE001 - say it, go on cleaning
                print(f"suite_speed: could not check session {session} for leftovers: {exc}", file=sys.stderr)
        for side in state.sides:
            remove_worktree(side)
        removed = [] if args.keep_images else remove_variant_images(state.sides, state.image_ids)
        shutil.rmtree(state.tmp, ignore_errors=True)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    if not runs:
        return 130 if interrupted else 1
    by_side = {label: [r for r in runs if r["side"] == label] for label in ("candidate", "baseline")}
    diffs = verdict_differences(
        [r["figures"]["statuses"] for r in by_side["candidate"]],
        [r["figures"]["statuses"] for r in by_side["baseline"]],
    )
    only = _only_on_one_side(by_side)
    print()
    print(
        f"candidate: {runs_rev(by_side['candidate'])}   baseline: {runs_rev(by_side['baseline'])}   "
        f"-j {args.jobs}, {args.repeat} repeat(s), medians" + ("; INTERRUPTED: partial" if interrupted else "")
    )
    print(format_table([r["flat"] for r in by_side["candidate"]], [r["flat"] for r in by_side["baseline"]]))
    print("verdicts that differ between the sides: " + ("; ".join(diffs) if diffs else "none"))
    for line in only:
        print(line)
    unmatched = sorted({n for r in runs for n in r["analysis"]["unmatched_reports"]})
    if unmatched:
        print(f"reports not matched to their containers (their CPU is under reference runs): {', '.join(unmatched)}")
    if removed:
        print(f"removed the per-side image tags and their venv volumes: {', '.join(removed)}")
    if args.out:
        Path(args.out).write_text(
            json.dumps(
                {
                    "args": vars(args),
                    "interval_s": INTERVAL_S,
                    "clk_tck": os.sysconf("SC_CLK_TCK"),
                    "runs": runs,
                    "verdict_differences": diffs,
                    "only_on_one_side": only,
                    "removed_images": removed,
                    "interrupted": interrupted,
                },
                indent=1,
                default=str,
            )
        )
        print(f"raw figures: {args.out}")
    return 130 if interrupted else 0


def _describe_checkout() -> str:
    try:
        head = git("rev-parse", "--short=12", "HEAD")
        dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except subprocess.CalledProcessError:
        return "working tree"
    return f"{head}{' + uncommitted changes' if dirty else ''}"


def runs_rev(runs: list[dict]) -> str:
    return runs[0]["rev"] if runs else "-"


def _only_on_one_side(by_side: dict[str, list[dict]]) -> list[str]:
    names = {
        label: set().union(*(r["figures"]["statuses"] for r in runs)) if runs else set()
        for label, runs in by_side.items()
    }
    out = []
    if by_side["candidate"] and by_side["baseline"]:
        for a, b in (("candidate", "baseline"), ("baseline", "candidate")):
            extra = sorted(names[a] - names[b])
            if extra:
                out.append(f"only on the {a} side: {', '.join(extra)}")
    for r in by_side["candidate"] + by_side["baseline"]:
        if r["missing_files"]:
            out.append(f"{r['side']} has no copy of: {', '.join(r['missing_files'])}")
            break
    return out


if __name__ == "__main__":
    raise SystemExit(main())
