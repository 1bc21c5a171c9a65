"""Where CI's CPU goes: samples, while `bin/test` (or anything) runs, every container's CPU
(its cgroup's cpuacct.usage, cgroup v1 as this machine has) and the host's engine processes,
then prints CPU-s by what made them: each container grouped by its name with the run's hash
cut off (a scenario's workers, proxies, helpers, image builds), the host's dockerd,
containerd, shims and fuse-overlayfs, and the machine in all.

The CI machine is CPU-bound (tests/plan.py prints each phase's busy share), so only less
work shortens it: this says which work.

    python benchmarks/ci_cpu.py --out /tmp/ci-cpu.json &     # stops on SIGINT/SIGTERM
    CI=true bash .ci/run; kill -INT %1
    python benchmarks/ci_cpu.py --report /tmp/ci-cpu.json
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import subprocess
import time
from pathlib import Path

CGROUP = Path("/sys/fs/cgroup/cpuacct/docker")
HOST_COMMS = ("dockerd", "containerd", "containerd-shim", "containerd-shim-runc-v2", "fuse-overlayfs", "runc")
TICK = 100  # USER_HZ


def machine_cpu_s() -> float:
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / TICK


def host_process_cpu() -> dict[int, tuple[str, float]]:
    """pid -> (comm, CPU-s) of the engine's own host processes."""
    out = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        comm = text[text.index("(") + 1 : text.rindex(")")]
        if comm in HOST_COMMS or comm.startswith("containerd-shim"):
            rest = text[text.rindex(")") + 2 :].split()
            out[int(stat.parent.name)] = (comm, (int(rest[11]) + int(rest[12])) / TICK)
    return out


def owner_of(label: str, commands: dict[str, str]) -> str:
    """The command line of the pytest session (or chaos run) whose process made a container:
    the owner label is ``host:PID:start``; the session is the nearest ancestor running pytest."""
    parts = label.split(":")
    if len(parts) < 2 or not parts[1].isdigit():
        return label or "?"
    pid = parts[1]
    if pid in commands:
        return commands[pid]
    found = f"pid {pid} (gone)"
    cur = pid
    for _ in range(8):
        try:
            cmd = Path(f"/proc/{cur}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = Path(f"/proc/{cur}/stat").read_text()
        except OSError:
            break
        if "pytest" in cmd:
            # The owner's own pid too: a forked suite child (the scenarios) shares its parent's command.
            found = (
                f"[{pid}{'' if cur == pid else ' < ' + cur}] "
                + " ".join(a for a in cmd.split() if not a.startswith("-"))[-140:]
            )
            break
        cur = stat[stat.rindex(")") + 2 :].split()[1]
    commands[pid] = found
    return found


def group_of(name: str) -> str:
    """A container's name without its run's hash and index: what made it."""
    name = re.sub(r"-[0-9a-f]{6,}(?=-|$)", "", name)
    return re.sub(r"-\d+$", "", name)


def sample(out: Path, every: float) -> None:
    names: dict[str, str] = {}
    owners: dict[str, str] = {}  # container -> the session that made it (its owner label's process)
    commands: dict[str, str] = {}
    containers: dict[str, float] = {}
    host: dict[int, tuple[str, float]] = {}
    # What the engine's processes and the containers already running had used before: not this run's.
    before = {pid: cpu for pid, (_, cpu) in host_process_cpu().items()}
    already = (
        {d.parent.name: int(d.read_text()) / 1e9 for d in CGROUP.glob("*/cpuacct.usage")} if CGROUP.is_dir() else {}
    )
    start = machine_cpu_s()
    # Every container's CPU, also of those removed between two samples (cgroup v1 charges a child's
    # usage to its parent): the exact total the per-container figures fall short of.
    parent = CGROUP / "cpuacct.usage"
    parent_start = int(parent.read_text()) / 1e9 if parent.exists() else None
    t0 = time.time()
    stop = []
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))

    def write() -> None:
        by_group: dict[str, float] = {}
        for cid, cpu in containers.items():
            g = group_of(names.get(cid, cid[:12]))
            by_group[g] = by_group.get(g, 0.0) + cpu
        by_comm: dict[str, float] = {}
        for comm, cpu in host.values():
            key = "containerd-shim" if comm.startswith("containerd-shim") else comm
            by_comm[key] = by_comm.get(key, 0.0) + cpu
        by_owner: dict[str, float] = {}
        for cid, cpu in containers.items():
            o = owners.get(cid, "?")
            by_owner[o] = by_owner.get(o, 0.0) + cpu
        doc = {
            "by_owner": dict(sorted(by_owner.items(), key=lambda kv: -kv[1])),
            "wall_s": time.time() - t0,
            "machine_cpu_s": machine_cpu_s() - start,
            "containers_cpu_s": sum(containers.values()),
            "all_containers_cpu_s": (int(parent.read_text()) / 1e9 - parent_start)
            if parent_start is not None
            else None,
            "by_group": dict(sorted(by_group.items(), key=lambda kv: -kv[1])),
            "host": by_comm,
        }
        out.write_text(json.dumps(doc, indent=1))

    n = 0
    while not stop:
        for d in CGROUP.glob("*/cpuacct.usage") if CGROUP.is_dir() else []:
            cid = d.parent.name
            try:
                used = int(d.read_text()) / 1e9 - already.get(cid, 0.0)
                containers[cid] = max(containers.get(cid, 0.0), used)
            except (OSError, ValueError):
                continue
            if cid not in names:
                done = subprocess.run(
                    ["docker", "inspect", "-f", '{{.Name}} {{index .Config.Labels "io.tfchaos.owner"}}', cid],
                    capture_output=True,
                    text=True,
                    timeout=30,
                )
                name, _, owner = done.stdout.strip().lstrip("/").partition(" ")
                names[cid] = name or cid[:12]
                owners[cid] = owner_of(owner, commands)
        for pid, (comm, cpu) in host_process_cpu().items():
            host[pid] = (comm, max(cpu - before.get(pid, 0.0), host.get(pid, (comm, 0.0))[1]))
        n += 1
        if n % 10 == 0:
            write()
        time.sleep(every)
    write()


def report(path: Path, top: int) -> None:
    doc = json.loads(path.read_text())
    print(
        f"wall {doc['wall_s']:.0f} s, machine {doc['machine_cpu_s']:.0f} CPU-s, containers {doc['containers_cpu_s']:.0f}"
    )
    print("host: " + ", ".join(f"{k} {v:.0f}" for k, v in sorted(doc["host"].items(), key=lambda kv: -kv[1])))
    for o, cpu in doc.get("by_owner", {}).items():
        print(f"{cpu:9.1f}  by {o}")
    for g, cpu in list(doc["by_group"].items())[:top]:
        print(f"{cpu:9.1f}  {g}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, help="sample until SIGINT/SIGTERM, writing this JSON every 10 samples")
    ap.add_argument(
        "--every", type=float, default=2.0, help="seconds between samples (a container living less is missed)"
    )
    ap.add_argument("--report", type=Path, help="print a sampled JSON")
    ap.add_argument("--top", type=int, default=60)
    args = ap.parse_args()
    if args.report:
        report(args.report, args.top)
    elif args.out:
        sample(args.out, args.every)
    else:
        ap.error("give --out or --report")


if __name__ == "__main__":
    main()
