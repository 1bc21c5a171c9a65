"""``chaos baseline`` (one fault-free run) and ``chaos clean`` (remove what a
crashed run left, by label)."""

from __future__ import annotations

import argparse

from chaos.backends.docker import api as docker_api
from chaos.backends.spec import ClusterSpec
from chaos.cluster.progress import ProgressPrinter
from chaos.errors import ScenarioError
from chaos.eventlog import EventLog
from chaos.runner.training import run_training
from chaos.topology import MAX_WORKERS
from chaos.worker.settings import WorkerSettings


def cmd_clean(args) -> int:
    """Remove runs whose owning process is gone (a crashed or killed run);
    ``--run ID`` one run, ``--all`` everything of tfchaos (live runs too)."""
    from chaos.backends.docker.runs import clean

    if args.run and args.all:
        raise ScenarioError("give --run ID or --all, not both", hint="`chaos clean` alone removes runs whose owner is gone")
    client = docker_api.connect()
    result = clean(client, run_id=args.run, everything=args.all)
    if args.run and not result.removed:
        print(f"no run {args.run} on this Docker engine")
    for record, removal in result.removed:
        print(f"{record.describe()}: {removal.summary()}")
        for obj, why in removal.left:
            print(f"  could not remove {obj.describe()}: {why}")
    if result.extra is not None and (result.extra.removed or result.extra.left):
        print(f"objects of no run: {result.extra.summary()}")
    for record, liveness in result.kept:
        why = "its owner is running" if liveness.value == "alive" else "its owner runs on another host, or is unknown"
        print(f"kept {record.describe()}: {why} (`chaos clean --run {record.run_id}` removes it anyway)")
    if not result.removed and not result.kept and not args.run:
        print("nothing to clean")
    failed = any(removal.left for _, removal in result.removed) or (result.extra is not None and result.extra.left)
    return 3 if failed else 0


def cmd_baseline(args) -> int:
    from chaos.backends.docker.backend import DockerBackend
    from chaos.images import PROXY_IMAGE, ensure_images, worker_image_tag

    if not 1 <= args.workers <= MAX_WORKERS:
        raise ScenarioError(
            f"--workers {args.workers} is out of range; valid: 1..{MAX_WORKERS}",
            hint="this machine runs up to 4 TF workers comfortably",
        )
    show = ProgressPrinter()
    show.phase("images")
    ensure_images((args.tf,), progress=show.line)
    spec = ClusterSpec(
        images=tuple(worker_image_tag(args.tf) for _ in range(args.workers)),
        proxy_image=PROXY_IMAGE,
        settings=WorkerSettings(epochs=args.epochs, seed=args.seed),
    )
    events = EventLog()
    events.subscribe(show.event)
    show.phase(f"baseline: {args.workers} workers, TF {args.tf}, {args.epochs} epochs")
    result = run_training(spec, DockerBackend(), events=events)
    for worker, digest in sorted(result.digests.items()):
        print(f"  {worker}: final weights digest {digest}")
    print(
        f"bring-up {result.bring_up_s:.1f}s, training {result.training_s:.1f}s, total {result.total_s:.1f}s; "
        + ("identical weights on every worker" if result.identical else "WEIGHTS DIFFER between workers")
    )
    return 0 if result.identical else 1


def _interval(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.2 <= value <= 3600:
        raise argparse.ArgumentTypeError(f"must be seconds from 0.2 to 3600; got {text!r}")
    return value


def cmd_compose(args) -> int:
    from chaos import resources
    from chaos.cluster import compose

    if args.inject is not None:
        from chaos.cluster.compose_inject import run_inject
        from chaos.backends.docker.api import connect

        return run_inject(connect(), args.inject, args.project, getattr(args, "for"))
    if getattr(args, "for") is not None:
        raise ScenarioError("--for goes with --inject", hint="e.g. chaos compose --inject 'pause_worker: {worker: 1}' --for 20")
    if args.watch:
        from chaos.cluster.compose_watch import watch
        from chaos.backends.docker.api import connect

        try:
            return watch(connect(), project=args.project, interval=args.interval)
        except KeyboardInterrupt:
            return 0
    if args.write:
        root = resources.compose_root()
        for path in compose.write(root):
            print(f"wrote {path.relative_to(root)}")
    else:
        print(compose.render_compose(), end="")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "clean", help="remove what crashed runs left (runs whose process is gone; live runs are kept)"
    )
    p.add_argument("--run", metavar="ID", help="remove this run, live or not")
    p.add_argument("--all", action="store_true", help="remove every run and leftover of tfchaos, live runs too")
    p.set_defaults(func=cmd_clean)

    b = subparsers.add_parser("baseline", help="one fault-free training run; prints digests and timings")
    b.add_argument("--workers", type=int, default=2)
    b.add_argument("--tf", default="2.20", metavar="VERSION")
    b.add_argument("--epochs", type=int, default=WorkerSettings.epochs)
    b.add_argument("--seed", type=int, default=WorkerSettings.seed)
    b.set_defaults(func=cmd_baseline)

    c = subparsers.add_parser("compose", help="print (or --write) docker-compose.yml from the topology")
    c.add_argument("--write", action="store_true", help="write docker-compose.yml and docker/compose/proxies.json")
    c.add_argument("--watch", action="store_true",
                   help="follow the running docker-compose cluster: each worker's step, loss and steps/s, errors, restarts")
    c.add_argument("--inject", metavar="FAULT",
                   help="inject one fault into the running compose cluster, written as in a scenario, "
                   "e.g. 'latency: {worker: 1, latency_ms: 100}'; healed after --for S or on Ctrl-C")
    c.add_argument("--for", type=_interval, metavar="S", help="with --inject: heal after S seconds (default: on Ctrl-C)")
    c.add_argument("--project", metavar="NAME", help="with --watch/--inject: the docker-compose project (default: any)")
    c.add_argument("--interval", type=_interval, default=2.0, metavar="S", help="with --watch: seconds between lines (default 2)")
    c.set_defaults(func=cmd_compose)
