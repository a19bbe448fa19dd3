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

__all__ = ["SUBCOMMANDS", "SUBCOMMAND_MODULES", "build_parser", "main"]

#: Modules that contribute subcommands, in the order they appear in ``--help``, with the
#: commands each registers (so that running one imports only its module: the vision and daemon
#: modules bring OpenCV and take a second or two to import).
SUBCOMMANDS: dict[str, tuple[str, ...]] = {
    "robot.cli_solver": ("apply", "validate", "scramble"),
    "robot.cli_solve": ("solve",),
    "robot.cli_trace": ("trace",),
    "robot.cli_firmware": ("firmware-sim", "send"),
    "robot.cli_vision": ("scan", "vision"),
    "robot.cli_daemon": ("demo", "run", "config"),
}
SUBCOMMAND_MODULES: tuple[str, ...] = tuple(SUBCOMMANDS)


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (the first word that is not an option), if any."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given the arguments, with only the module of the command they name (all
    modules for ``--help``, no command or an unknown one)."""
    parser = argparse.ArgumentParser(
        prog="cuberobot",
        description="Run a Rubik's-cube-solving robot: scan, validate, solve, execute.",
    )
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    command = None if argv is None else _command_of(argv)
    modules = [m for m, names in SUBCOMMANDS.items() if command in names] or SUBCOMMAND_MODULES
    for name in modules:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(words)
    args = parser.parse_args(words)
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
