"""``chaos baseline``: one fault-free training run; prints digests and timings."""

from __future__ import annotations

from chaos.backends.spec import Deployment
from chaos.errors import ScenarioError
from chaos.eventlog import EventLog
from chaos.images.versions import DEFAULT_TF_VERSION
from chaos.live.progress import ProgressPrinter
from chaos.runner.training import run_training
from chaos.topology import BACKEND_MAX_WORKERS
from chaos.worker.settings import WorkerSettings


def cmd_baseline(args) -> int:
    from chaos.backends.docker.backend import DockerBackend
    from chaos.images import PROXY_IMAGE, ensure_images, worker_image_tag

    if not 1 <= args.workers <= BACKEND_MAX_WORKERS["docker"]:
        raise ScenarioError(
            f"--workers {args.workers} is out of range; valid: 1..{BACKEND_MAX_WORKERS['docker']}",
            hint=f"one Docker host runs up to {BACKEND_MAX_WORKERS['docker']} TF workers comfortably",
        )
    show = ProgressPrinter()
    show.phase("images")
    ensure_images((args.tf,), progress=show.line)
    spec = Deployment(
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


def register(subparsers) -> None:
    b = subparsers.add_parser("baseline", help="one fault-free training run; prints digests and timings")
    b.add_argument("--workers", type=int, default=2)
    b.add_argument("--tf", default=DEFAULT_TF_VERSION, metavar="VERSION")
    b.add_argument("--epochs", type=int, default=WorkerSettings.epochs)
    b.add_argument("--seed", type=int, default=WorkerSettings.seed)
    b.set_defaults(func=cmd_baseline)
