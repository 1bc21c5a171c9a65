"""``python -m chaos.proxy [--host HOST] [--port PORT]`` (the proxy image's entry
point; needs only chaos/__init__.py, chaos/errors.py and this package)."""

from __future__ import annotations

import argparse
import sys

from chaos.errors import ChaosError
from chaos.proxy.cli import add_arguments, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chaos.proxy", description="Toxiproxy-compatible proxy server.")
    add_arguments(parser)
    try:
        return run(parser.parse_args(argv))
    except ChaosError as exc:
        print(exc.render(), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
