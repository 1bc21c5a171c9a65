"""``chaos clean``: remove what crashed runs left on the Docker engine, by label (with
DOCKER_HOST at a swarm manager, a swarm run's services too)."""

from __future__ import annotations

from chaos.backends.docker import api as docker_api
from chaos.backends.swarm.plan import LABEL_SWARM
from chaos.errors import ScenarioError


def cmd_clean(args) -> int:
    """Remove runs whose owning process is gone (a crashed or killed run);
    ``--run ID`` one run, ``--all`` everything of tfchaos (live runs too)."""
    from chaos.backends.docker.runs import clean

    if args.run and args.all:
        raise ScenarioError(
            "give --run ID or --all, not both", hint="`chaos clean` alone removes runs whose owner is gone"
        )
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
        swarm = next((o.labels[LABEL_SWARM] for o in record.objects if o.labels.get(LABEL_SWARM)), None)
        if swarm and record.owner is None:  # made by `chaos swarm up`: it lives until `chaos swarm down`
            print(
                f"kept {record.describe()}: a swarm made by `chaos swarm up` "
                f"(`chaos swarm down --name {swarm}` removes it)"
            )
            continue
        print(f"kept {record.describe()}: {why} (`chaos clean --run {record.run_id}` removes it anyway)")
    if not result.removed and not result.kept and not args.run:
        print("nothing to clean")
    failed = any(removal.left for _, removal in result.removed) or (result.extra is not None and result.extra.left)
    return 3 if failed else 0


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "clean", help="remove what crashed runs left (runs whose process is gone; live runs are kept)"
    )
    p.add_argument("--run", metavar="ID", help="remove this run, live or not")
    p.add_argument("--all", action="store_true", help="remove every run and leftover of tfchaos, live runs too")
    p.set_defaults(func=cmd_clean)
