"""``chaos swarm up|down|status``: a multi-node Docker Swarm on this machine
(chaos.backends.swarm.nodes), for the Swarm backend's tests and by hand."""

from __future__ import annotations

import sys
import time

from chaos.backends.swarm.plan import DEFAULT_NAME, DEFAULT_NODES, MAX_NODES, MIN_NODES, describe_access


def _progress():
    t0 = time.monotonic()

    def show(msg: str) -> None:
        print(f"[{time.monotonic() - t0:6.1f}s] {msg}", flush=True)

    return show


def default_images() -> list[str]:
    from chaos.images import PROXY_IMAGE, worker_image_tag
    from chaos.images.netns_helper import HELPER_IMAGE  # the packet faults' helper, run on the worker's node
    from chaos.images.versions import DEFAULT_TF_VERSION

    return [worker_image_tag(DEFAULT_TF_VERSION), PROXY_IMAGE, HELPER_IMAGE]


def cmd_up(args) -> int:
    from chaos.backends.swarm.nodes import LocalSwarm, make_plan
    from chaos.images import engine

    plan = make_plan(args.name, args.nodes)  # bad input is refused before the engine is asked
    images = [] if args.no_images else (args.image or default_images())
    client = engine.docker_client()
    swarm = LocalSwarm(client, plan, _progress()).up(images, store=not args.no_store)
    for line in describe_access(plan, store=swarm.store) + swarm.timings.lines():
        print(line)
    return 0


def cmd_down(args) -> int:
    from chaos.backends.swarm.nodes import down
    from chaos.backends.swarm.plan import check_name
    from chaos.images import engine

    check_name(args.name)
    removal = down(engine.docker_client(), args.name)
    if removal is None:
        print(f"no swarm {args.name} on this Docker engine")
        return 0
    print(f"swarm {args.name}: {removal.summary()}")
    for obj, why in removal.left:
        print(f"  could not remove {obj.describe()}: {why}")
    return 3 if removal.left else 0


def cmd_status(args) -> int:
    from chaos.backends.swarm.nodes import make_plan, status, swarm_names
    from chaos.backends.swarm.plan import check_name
    from chaos.images import engine

    check_name(args.name)
    client = engine.docker_client()
    nodes = status(client, args.name)
    if not nodes:
        others = [n for n in swarm_names(client) if n != args.name]
        print(
            f"no swarm {args.name} on this Docker engine"
            + (f" (others: {', '.join(others)}; --name NAME)" if others else " (`chaos swarm up` makes one)")
        )
        return 1
    for line in describe_access(make_plan(args.name, len(nodes)))[:2]:
        print(line)
    for n in nodes:
        print(f"  {n.container}: {n.state}; swarm: {n.swarm}; images: {', '.join(n.images) or 'none'}")
    return 0 if all(n.state == "running" and n.swarm.startswith("ready") for n in nodes) else 1


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "swarm",
        help="a multi-node Docker Swarm on this machine (node containers with their own engines)",
        description="Start N containers each running its own Docker engine, join them into one swarm with "
        "an attachable overlay network, and load the project's images into every node. "
        "See docs/backends.md.",
    )
    sub = p.add_subparsers(dest="swarm_command", metavar="SUBCOMMAND")

    def named(sp):
        sp.add_argument("--name", default=DEFAULT_NAME, help=f"which swarm (default {DEFAULT_NAME})")

    up = sub.add_parser("up", help="bring a swarm up and print how to reach it")
    named(up)
    up.add_argument(
        "--nodes",
        default=DEFAULT_NODES,
        metavar="N",
        help=f"how many nodes, {MIN_NODES} to {MAX_NODES} (default {DEFAULT_NODES})",
    )
    up.add_argument(
        "--image",
        action="append",
        metavar="TAG",
        help="an image of this engine to load into every node, repeatable "
        "(default: the default TF version's worker, the proxy and the packet faults' network helper)",
    )
    up.add_argument("--no-images", action="store_true", help="load no image into the nodes")
    up.add_argument(
        "--no-store",
        action="store_true",
        help="no shared checkpoint store (by default an sshfs export is mounted on every node)",
    )
    up.set_defaults(func=cmd_up)

    down = sub.add_parser("down", help="remove a swarm: its nodes, their volumes and network")
    named(down)
    down.set_defaults(func=cmd_down)

    st = sub.add_parser(
        "status",
        help="show a swarm's nodes, the swarm's view of them and their images "
        "(exit 1 unless every node runs and is ready)",
    )
    named(st)
    st.set_defaults(func=cmd_status)

    p.set_defaults(func=lambda _args: (p.print_help(sys.stderr), 2)[1])
