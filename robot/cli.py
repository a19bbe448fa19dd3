"""The ``cuberobot`` command line.

Each group of subcommands lives in its own module (``robot/cli_<group>.py``) exposing
``register(subparsers)``; this module only assembles them and maps exceptions to exit codes.

Exit codes (a contract for scripts): 0 success, 1 the request was understood but failed
(an impossible cube, a move that did not execute, ...), 2 malformed input or usage.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

__all__ = ["SUBCOMMAND_MODULES", "build_parser", "main"]

#: Modules that contribute subcommands, in the order they appear in ``--help``.
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "robot.cli_solver",
    "robot.cli_solve",
    "robot.cli_trace",
    "robot.cli_firmware",
    "robot.cli_vision",
    "robot.cli_daemon",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cuberobot",
        description="Run a Rubik's-cube-solving robot: scan, validate, solve, execute.",
    )
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in SUBCOMMAND_MODULES:
        module = importlib.import_module(name)
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    handler = args.handler
    try:
        code: int = handler(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
