"""The ``chaos`` command. Each subcommand lives beside the code it drives and
registers itself here through a ``register(subparsers)`` function that sets
``func`` on its parser; this module only dispatches and turns errors into
messages and exit codes (never a traceback for bad input).
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import threading

from chaos import interrupts
from chaos.errors import ChaosError

# Modules that contribute subcommands, in the order ``chaos --help`` shows them.
SUBCOMMAND_MODULES = [
    "chaos.scenario.cli",
    "chaos.proxy.cli",
    "chaos.images.cli",
    "chaos.backends.docker.cli",
    "chaos.backends.swarm.cli",
    "chaos.runner.baseline",
    "chaos.compose.cli",
    "chaos.runner.cli",
    "chaos.compare.cli",
    "chaos.matrix.cli",
    "chaos.diagnose.cli",
    "chaos.audit.cli",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="chaos",
        description="Chaos testing for distributed TensorFlow training.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # a part not built yet; the others still work
                continue
            raise
        module.register(sub)
    return parser


NOT_STARTED = "interrupted before the command started: nothing was created"


def main(argv: list[str] | None = None, *, embedded: bool = False) -> int:
    """Run one command; returns its exit code (130 when interrupted, after teardown).

    ``embedded``: the caller is a host process (a test session, a notebook) that
    called this in-process: an interrupt is re-raised after teardown, so Ctrl-C or
    SIGTERM stops the host too instead of ending only this command. Either way the
    host's SIGTERM handler is restored on return.
    """
    started = False
    previous_sigterm = signal.getsignal(signal.SIGTERM)
    try:
        # Imports every subcommand's module (scipy, aiohttp, docker, ...): the
        # first seconds of every command. Nothing exists yet to tear down, so
        # Ctrl-C there ends the process with one line (exit 130).
        with interrupts.exiting(NOT_STARTED):
            parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        interrupts.install()  # SIGTERM (CI cancelling a job) tears down like Ctrl-C does
        started = True
        return int(args.func(args) or 0)
    except ChaosError as exc:
        print(exc.render(), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        if started:
            print("interrupted; everything this run created was torn down", file=sys.stderr)
        else:
            print(NOT_STARTED, file=sys.stderr)
        if embedded:
            raise
        return 130
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, previous_sigterm)


if __name__ == "__main__":
    raise SystemExit(main())
