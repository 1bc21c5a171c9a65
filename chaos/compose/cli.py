"""``chaos compose``: the docker-compose cluster to explore by hand: its file,
a live watch of it, one fault injected into it."""

from __future__ import annotations

import argparse

from chaos.errors import ScenarioError


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
    from chaos.compose import files as compose

    if args.inject is not None:
        from chaos.backends.docker.api import connect
        from chaos.compose.inject import run_inject

        return run_inject(connect(), args.inject, args.project, getattr(args, "for"))
    if getattr(args, "for") is not None:
        raise ScenarioError(
            "--for goes with --inject", hint="e.g. chaos compose --inject 'pause_worker: {worker: 1}' --for 20"
        )
    if args.watch:
        from chaos.backends.docker.api import connect
        from chaos.compose.watch import watch

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
    c = subparsers.add_parser("compose", help="print (or --write) docker-compose.yml from the topology")
    c.add_argument("--write", action="store_true", help="write docker-compose.yml and docker/compose/proxies.json")
    c.add_argument(
        "--watch",
        action="store_true",
        help="follow the running docker-compose cluster: each worker's step, loss and steps/s, errors, restarts",
    )
    c.add_argument(
        "--inject",
        metavar="FAULT",
        help="inject one fault into the running compose cluster, written as in a scenario, "
        "e.g. 'latency: {worker: 1, latency_ms: 100}'; healed after --for S or on Ctrl-C",
    )
    c.add_argument(
        "--for", type=_interval, metavar="S", help="with --inject: heal after S seconds (default: on Ctrl-C)"
    )
    c.add_argument("--project", metavar="NAME", help="with --watch/--inject: the docker-compose project (default: any)")
    c.add_argument(
        "--interval", type=_interval, default=2.0, metavar="S", help="with --watch: seconds between lines (default 2)"
    )
    c.set_defaults(func=cmd_compose)
