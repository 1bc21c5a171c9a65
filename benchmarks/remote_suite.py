"""`bin/up` against an engine that shares no path with this machine (issue 41's by-hand
check): a fresh clone of this checkout, installed into a fresh virtualenv, runs
``DOCKER_HOST=<a dind engine> bin/up`` (install, every image built on that engine,
the default scenario suite), as a CI job with GitLab's ``docker:dind`` service would.
Not a test: it prints each phase's time, the suite's counts and what the run left on
that engine, and exits with bin/up's code.

    python benchmarks/remote_suite.py            # the whole default suite (14.5 min quiet, 31 beside other work)
    python benchmarks/remote_suite.py -- -k kill # bin/up's own arguments after --

The engine (tests/integration/dind.py) starts empty but for the base image, moved
there as a registry pull would bring it (there is no registry here). Everything it
holds goes with it at the end; this machine's engine gets only that engine's
container, volume and network, removed whatever happens. The virtualenv keeps the
clone's editable install away from this checkout's.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from dind import dind_engine, local_base, transfer_image  # noqa: E402

from chaos import LABEL_PROJECT, LABEL_RUN, PROJECT  # noqa: E402
from chaos.backends.docker import venv_cache  # noqa: E402
from chaos.backends.docker.engine_objects import list_objects  # noqa: E402
from chaos.images.swarm_node import ensure_node_image  # noqa: E402

PHASE = re.compile(r"^== (.*)$")


def run_streamed(cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> tuple[int, list[tuple[str, float]]]:
    """Runs ``cmd``, its output to this terminal and ``log``; (exit code, [(phase, seconds)])
    with bin/up's ``== ...`` lines as the phase marks."""
    phases: list[tuple[str, float]] = []
    started = mark = time.monotonic()
    name = "start"
    with (
        log.open("w") as out,
        subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc,
    ):
        for line in proc.stdout:
            now = time.monotonic()
            out.write(line)
            print(f"[{now - started:7.1f}s] {line}", end="", flush=True)
            found = PHASE.match(line)
            if found:
                phases.append((name, now - mark))
                name, mark = found.group(1), now
        code = proc.wait()
    phases.append((name, time.monotonic() - mark))
    return code, phases[1:]


def leftovers(client) -> list[str]:
    """The project's objects left on the engine (by their own labels, not their image's), but for
    the caches kept by design: built images and their venv copies."""
    left = []
    for o in list_objects(client, keys=(LABEL_PROJECT,), kinds=("container", "network", "volume", "image")):
        if LABEL_PROJECT not in o.labels:
            continue  # a label its image gave it
        if o.kind == "volume" and o.labels.get(venv_cache.LABEL_ROLE) == venv_cache.ROLE:
            continue
        if o.kind == "image" and LABEL_RUN not in o.labels:
            continue  # built images stay; those a run made for itself carry its run id (run_scope.is_ours)
        left.append(f"{o.kind} {o.name}")
    return left


def junit_counts(path: Path) -> str:
    if not path.exists():
        return "no junit.xml"
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    total = {k: sum(int(s.get(k) or 0) for s in suites) for k in ("tests", "failures", "errors", "skipped")}
    return " ".join(f"{k} {v}" for k, v in total.items())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("up_args", nargs="*", help="bin/up's arguments (after --)")
    args = parser.parse_args()
    import docker

    here = docker.from_env()
    base = local_base(here)
    node_image = ensure_node_image(here, progress=lambda msg: print(f"[images] {msg}", flush=True))
    with tempfile.TemporaryDirectory(prefix="tfchaos-remote-suite-") as tmp, dind_engine(here, node_image) as remote:
        work = Path(tmp)
        seconds, size = transfer_image(here, remote.client, base.tag)
        print(f"[remote] {remote.host}: base {base.tag} moved, {size / 1e6:.0f} MB in {seconds:.1f} s", flush=True)
        clone = work / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True)
        t0 = time.monotonic()
        subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True)
        venv_s = time.monotonic() - t0
        env = {
            **os.environ,
            "DOCKER_HOST": remote.host,
            "PATH": f"{work / 'venv' / 'bin'}:{os.environ['PATH']}",
            "VIRTUAL_ENV": str(work / "venv"),
        }
        env.pop("PYTHONPATH", None)
        t0 = time.monotonic()
        code, phases = run_streamed(["bash", "bin/up", *args.up_args], clone, env, work / "up.log")
        total = time.monotonic() - t0
        left = leftovers(remote.client)
        print(f"\n== DOCKER_HOST={remote.host} bin/up of {head.stdout.strip()}: exit {code} in {total / 60:.1f} min")
        print(f"   venv {venv_s:.0f} s; " + "; ".join(f"{name}: {s:.0f} s" for name, s in phases))
        print(f"   {junit_counts(clone / 'reports' / 'junit.xml')}")
        images = sorted(t for i in remote.client.images.list() for t in i.tags if t.startswith(PROJECT))
        print(f"   images on that engine: {', '.join(images)}")
        print(f"   left on that engine (not counting caches): {left or 'nothing'}")
        return code if not left else (code or 1)


if __name__ == "__main__":
    sys.exit(main())
