"""What a remote engine costs (issue 41): the same build steps on this machine's
engine and on an engine that shares no path with it (a dind engine in a container,
tests/integration/dind.py, reached over TCP), side by side. Not a test: it prints figures.

    python benchmarks/remote_engine.py               # TF 2.20's deps image
    python benchmarks/remote_engine.py --tf 2.18

Measured on each engine, in order:
- send: the TF wheelhouse and the build scripts into read-only volumes over the API
  (chaos.images.send; before issue 41 the local engine bind-mounted them: 0 s);
- deps build: chaos.images.commit_build.build_deps (the send, pip installing the
  wheels, ``docker commit``), the image left untagged and removed after;
- and for the remote engine only, the images that are not built there but moved:
  the base (``docker save`` here, ``docker load`` there, as a registry pull would
  bring it) and, as the other way to give an engine the worker image, the built deps image.
The build lock of chaos.images.engine is held throughout (no build of the same
machine runs beside it). Nothing tagged is touched on this machine's engine.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from dind import dind_engine, local_base, transfer_image  # noqa: E402

from chaos.images import commit_build, engine, send, wheelhouse  # noqa: E402
from chaos.images.plans import build_container_labels, deps_inputs, deps_lock_dir, worker_plans  # noqa: E402
from chaos.images.swarm_node import ensure_node_image  # noqa: E402
from chaos.images.versions import parse_tf_version  # noqa: E402


def timed(fn):
    t0 = time.monotonic()
    out = fn()
    return time.monotonic() - t0, out


def measure(client, plan, base, wheel_dir: str, lock_dir: str) -> dict[str, float]:
    """The send alone, then the whole deps build (untagged, removed)."""
    wheels_at, build_at = "/tmp/wheels", "/tmp/build"

    def send_only():
        with send.read_only_volumes(
            client,
            base.tag,
            {wheels_at: wheel_dir, build_at: lock_dir},
            labels=build_container_labels(),
            prefix="tfchaos-bench-send",
        ):
            pass

    send_s, _ = timed(send_only)
    build_s, image_id = timed(lambda: commit_build.build_deps(client, plan, base.tag, wheel_dir, lock_dir, engine.noop))
    size = int(client.images.get(image_id).attrs.get("Size") or 0)
    client.api.remove_image(image_id, noprune=False)
    return {"send": send_s, "build": build_s, "size_mb": size / 1e6}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tf", default="2.20", help="TF version of the deps image (default 2.20)")
    args = ap.parse_args()
    local = engine.docker_client()
    base = local_base(local)
    spec = parse_tf_version(args.tf, engine.architecture(local))
    deps, _ = worker_plans(spec)
    wheel_dir, lock, files = wheelhouse.ensure_wheelhouse(
        deps.wheelhouse_name, deps.lock, deps.unlocked, arch=deps.arch
    )
    deps.lock = lock
    deps.inputs = deps_inputs(deps, base, lock, wheelhouse.wheel_manifest(wheel_dir, files))
    lock_dir = deps_lock_dir(deps, wheel_dir)
    wheels_mb = send.folder_bytes(wheel_dir) / 1e6
    node_image = ensure_node_image(local)
    rows: list[tuple[str, str, str]] = []
    with engine.build_lock():
        here = measure(local, deps, base, wheel_dir, lock_dir)
        with dind_engine(local, node_image) as remote:
            base_s, base_bytes = transfer_image(local, remote.client, base.tag)
            there = measure(remote.client, deps, base, wheel_dir, lock_dir)
            deps_tag = f"tfchaos/worker-deps:{spec.key}"
            moved = transfer_image(local, remote.client, deps_tag) if engine.get_image(local, deps_tag) else None
            driver = remote.client.info().get("Driver", "?")
    local_driver = local.info().get("Driver", "?")
    rows.append(("wheelhouse + scripts sent (volumes)", f"{here['send']:.1f} s", f"{there['send']:.1f} s"))
    rows.append((f"{deps.name} build (commit method)", f"{here['build']:.1f} s", f"{there['build']:.1f} s"))
    rows.append(("  image size", f"{here['size_mb']:.0f} MB", f"{there['size_mb']:.0f} MB"))
    rows.append((f"base {base.tag} moved (save/load)", "-", f"{base_s:.1f} s ({base_bytes / 1e6:.0f} MB)"))
    if moved is not None:
        rows.append((f"{deps_tag} moved instead of built", "-", f"{moved[0]:.1f} s ({moved[1] / 1e6:.0f} MB)"))
    print(f"TF {spec.version} ({spec.arch}), wheelhouse {len(files)} wheels, {wheels_mb:.0f} MB")
    print(f"{'step':44} {'local (' + local_driver + ')':>22} {'remote dind (' + driver + ')':>26}")
    for name, a, b in rows:
        print(f"{name:44} {a:>22} {b:>26}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
