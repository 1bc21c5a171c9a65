"""``chaos proxy``: run the Toxiproxy-compatible server in the foreground.

Arguments are checked before anything listens: ``--port`` is 0..65535 (0: any
free port, which the server logs), and ``--config`` must be a JSON file in the
format of ``POST /populate``; a bad one is one error naming the file and what
is wrong in it (its line and column for broken JSON), never a traceback.
"""

from __future__ import annotations

import argparse
import json
import logging

from chaos.errors import InfrastructureError
from chaos.proxy.apierror import ApiError
from chaos.proxy.schema import parse_populate
from chaos.proxy.server import DEFAULT_HOST, DEFAULT_PORT, ProxyServer

MAX_CONFIG_BYTES = 1024 * 1024  # a proxy is about 100 bytes of JSON


def port_number(text: str) -> int:
    """An argparse type: 0..65535 (0 = any free port)."""
    try:
        port = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text[:40]!r} is not a port number; give 1..65535, or 0 for any free port"
        ) from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is out of range; give 1..65535, or 0 for any free port")
    return port


def check_config(path: str) -> int:
    """The number of proxies a ``--config`` file defines; InfrastructureError naming the file otherwise."""
    shown = repr(path)[1:-1]  # a file name can hold control characters too
    hint = 'a JSON list of proxies as POST /populate takes: [{"name": "svc", "listen": "127.0.0.1:0", "upstream": "host:port"}]'
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise InfrastructureError(
            f"cannot read --config {shown}: {exc.strerror or exc}", hint="pass a readable JSON file of proxies"
        ) from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise InfrastructureError(f"--config {shown}: more than {MAX_CONFIG_BYTES // 1024} KiB", hint=hint)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InfrastructureError(
            f"--config {shown}: byte {exc.start} (0x{raw[exc.start]:02x}) is not UTF-8 text", hint="save it as UTF-8"
        ) from None
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InfrastructureError(
            f"--config {shown}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}", hint=hint
        ) from None
    except RecursionError:
        raise InfrastructureError(
            f"--config {shown}: not a list of proxies: JSON nested too deeply", hint=hint
        ) from None
    try:
        return len(parse_populate(body))
    except ApiError as exc:
        where = f" (field {exc.field})" if exc.field and exc.field != "body" and exc.field not in exc.error else ""
        raise InfrastructureError(
            f"--config {shown}: {exc.error.removeprefix('bad request body: ')}{where}", hint=exc.hint or hint
        ) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"API address to listen on (default {DEFAULT_HOST})")
    parser.add_argument(
        "--port",
        type=port_number,
        default=DEFAULT_PORT,
        help=f"API port, 1..65535, or 0 for any free port (default {DEFAULT_PORT})",
    )
    parser.add_argument("--config", metavar="FILE", help="JSON list of proxies to create at start (as POST /populate)")


def run(args: argparse.Namespace) -> int:
    config = getattr(args, "config", None)
    if config is not None:
        check_config(config)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    ProxyServer(args.host, args.port).serve(config)  # InfrastructureError propagates to the caller's handler
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "proxy",
        help="run the Toxiproxy-compatible proxy server",
        description="Serve the Toxiproxy 2.x HTTP API and its proxies.",
    )
    add_arguments(parser)
    parser.set_defaults(func=run)
