"""``chaos images build`` and ``chaos images status``."""

from __future__ import annotations

import sys
import time

from chaos.images.builder import ensure_images
from chaos.images.plans import DEFAULT_TF_VERSIONS
from chaos.images.status import image_status


def _human(size: int) -> str:
    if not size:
        return "-"
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit in ("B", "KB", "MB") else f"{size:.2f} GB"
        size /= 1000
    return str(size)


def _versions(args) -> tuple[str, ...]:
    out: list[str] = []
    for item in args.tf or DEFAULT_TF_VERSIONS:
        out += [v for v in item.split(",") if v.strip()]
    return tuple(v.strip() for v in out)


def _progress_printer():
    t0 = time.monotonic()

    def show(msg: str) -> None:
        print(f"[{time.monotonic() - t0:6.1f}s] {msg}", flush=True)

    return show


def cmd_build(args) -> int:
    progress = _progress_printer()
    tags = (
        {}
        if args.only == "helper"
        else ensure_images(
            _versions(args), base_image=args.base_image, only=args.only, force=args.force, progress=progress
        )
    )
    if args.only in (None, "helper"):
        from chaos.images.netns_helper import ensure_helper_image  # the packet faults' helper (chaos.netns)

        tags["netns-helper"] = ensure_helper_image(force=args.force, progress=progress)
    for name, tag in tags.items():
        print(f"{name:16} {tag}")
    return 0


def cmd_status(args) -> int:
    rows = image_status(_versions(args), base_image=args.base_image, helper=True)
    header = ("IMAGE", "TAG", "STATE", "BUILT AT", "SIZE", "NOTE")
    table = [header] + [(r.name, r.tag, r.state, r.built_at or "-", _human(r.size), r.note) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    return 0 if all(r.state == "exists" for r in rows) else 1


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "images",
        help="build and inspect the Docker images (offline)",
        description="Build the base, worker and proxy images offline; "
        "an image is rebuilt only when the hash of its inputs changes.",
    )
    sub = p.add_subparsers(dest="images_command", metavar="SUBCOMMAND")

    def common(sp):
        sp.add_argument(
            "--tf",
            action="append",
            metavar="VERSION",
            help=f"TensorFlow version(s), repeatable or comma-separated (default: {', '.join(DEFAULT_TF_VERSIONS)})",
        )
        sp.add_argument(
            "--base-image",
            metavar="IMAGE",
            help="stock Python 3.11 image to build on (default python:3.11-slim-bookworm; "
            "if it cannot be found or pulled, a Debian base is bootstrapped)",
        )

    b = sub.add_parser("build", help="build missing or stale images")
    common(b)
    b.add_argument(
        "--only",
        choices=["worker", "proxy", "base", "helper"],
        help="build only this kind of image (helper: the packet faults' network helper)",
    )
    b.add_argument("--force", action="store_true", help="rebuild even if the inputs did not change")
    b.set_defaults(func=cmd_build)

    s = sub.add_parser("status", help="show which images exist, are stale or are missing (exit 1 unless all exist)")
    common(s)
    s.set_defaults(func=cmd_status)

    p.set_defaults(func=lambda _args: (p.print_help(sys.stderr), 2)[1])
