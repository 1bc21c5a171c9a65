"""``chaos proxy``: run the Toxiproxy-compatible server in the foreground."""

from __future__ import annotations

import argparse
import logging

from chaos.proxy.server import DEFAULT_HOST, DEFAULT_PORT, ProxyServer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"API address to listen on (default {DEFAULT_HOST})")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"API port (default {DEFAULT_PORT})")
    parser.add_argument("--config", metavar="FILE", help="JSON list of proxies to create at start (as POST /populate)")


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    ProxyServer(args.host, args.port).serve(getattr(args, "config", None))  # InfrastructureError propagates to the caller's handler
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("proxy", help="run the Toxiproxy-compatible proxy server",
                                   description="Serve the Toxiproxy 2.x HTTP API and its proxies.")
    add_arguments(parser)
    parser.set_defaults(func=run)
