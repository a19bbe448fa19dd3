"""The ``cuberobot`` command line.

One module per group of commands, each exposing ``register(subparsers)``:

=====================  =============================================================
module                 commands
=====================  =============================================================
:mod:`.cube`           ``apply``, ``validate``, ``scramble`` — the cube model itself
:mod:`.solve`          ``solve`` — one state, a scramble or a batch through an engine
:mod:`.tables`         ``tables build`` — the solver's tables, built ahead of time
:mod:`.trace`          ``trace`` — the blindfold memo (cycles) of a state
:mod:`.firmware`       ``firmware-sim``, ``send`` — the simulated firmware and the link
:mod:`.home`           ``home`` — home the motors: over the link, or through the daemon
:mod:`.control`        ``resume``, ``abort``, ``estop`` — ask the running daemon (estop:
                       or the firmware link directly)
:mod:`.scan`           ``scan``, ``vision`` — reading a cube from images, calibration
:mod:`.demo`           ``demo`` — one job on the simulated robot, with a progress bar
:mod:`.daemon`         ``run``, ``config`` — the robot daemon and its profile
=====================  =============================================================

Modules are named after the command they hold or, for a group, after what its commands work
on: ``cube`` (apply, validate, scramble act on a cube state) is not ``solve`` (the one command
that searches for a solution); these were ``cli_solver`` and ``cli_solve``. ``daemon`` holds the
commands that start and configure the daemon, which itself lives in :mod:`robot.daemon`.

Shared pieces: :mod:`.args` (argument types several commands use), :mod:`.daemon_client`
(commands to a running daemon over MQTT) and :mod:`.exits`
(the exit-code contract, the one exception → exit code and message map, SIGPIPE and Ctrl-C).

Running a command imports only its own module (:data:`SUBCOMMANDS` says which), so
``cuberobot solve`` never pays for OpenCV, the firmware link or the daemon; keep the imports
of this module and of :mod:`.exits` and :mod:`.args` to the standard library.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import sys
from collections.abc import Callable, Iterator, Sequence
from importlib import metadata

from robot.cli.exits import error_document, run_command

__all__ = ["SUBCOMMANDS", "SUBCOMMAND_MODULES", "build_parser", "main", "subparsers", "version"]

#: Modules that contribute subcommands, in the order they appear in ``--help``, with the
#: commands each registers (so that running one imports only its module: the vision and daemon
#: modules bring OpenCV and take a second or two to import).
SUBCOMMANDS: dict[str, tuple[str, ...]] = {
    "robot.cli.cube": ("apply", "validate", "scramble"),
    "robot.cli.solve": ("solve",),
    "robot.cli.tables": ("tables",),
    "robot.cli.trace": ("trace",),
    "robot.cli.firmware": ("firmware-sim", "send"),
    "robot.cli.home": ("home",),
    "robot.cli.control": ("resume", "abort", "estop"),
    "robot.cli.scan": ("scan", "vision"),
    "robot.cli.demo": ("demo",),
    "robot.cli.daemon": ("run", "config"),
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


def version() -> str:
    """The installed distribution's version (``0+unknown`` when run from an uninstalled tree)."""
    try:
        return metadata.version("cuberobot")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def subparsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """Every parser below ``parser`` (commands and their actions, such as ``config check``)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                yield child
                yield from subparsers(child)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given the arguments, with only the module of the command they name (all
    modules for ``--help``, no command or an unknown one).

    ``-v``/``--verbose`` is accepted before and after the command (``cuberobot -v solve ...``,
    ``cuberobot solve -v ...``); the two counts add up."""
    parser = argparse.ArgumentParser(
        prog="cuberobot",
        description="Run a Rubik's-cube-solving robot: scan, validate, solve, execute.",
    )
    parser.add_argument("--version", action="version", version=f"cuberobot {version()}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help=_VERBOSE_HELP)
    parser.add_argument("--log-level", type=_level, default=None, metavar="LEVEL", help=_LEVEL_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    command = None if argv is None else _command_of(argv)
    modules = [m for m, names in SUBCOMMANDS.items() if command in names] or SUBCOMMAND_MODULES
    if command is None and argv is not None and "--version" in argv:
        modules = []  # argparse prints the version and exits before it needs a command
    for name in modules:
        importlib.import_module(name).register(sub)
    for child in subparsers(parser):
        child.add_argument(
            "-v", "--verbose", dest="verbose_after", action="count", default=0, help=_VERBOSE_HELP
        )
        child.add_argument(
            "--log-level",
            dest="log_level_after",
            type=_level,
            default=None,
            metavar="LEVEL",
            help=_LEVEL_HELP,
        )
    return parser


_VERBOSE_HELP = "more logging on stderr (-vv for debug)"
_LEVEL_HELP = "logging level on stderr: debug, info, warning (default), error"
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "error": logging.ERROR, "critical": logging.CRITICAL}  # fmt: skip


def _level(text: str) -> int:
    try:
        return _LEVELS[text.lower()]
    except KeyError:
        raise argparse.ArgumentTypeError(
            f"log level must be one of {', '.join(_LEVELS)}, not {text!r}"
        ) from None


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default: the process's), run the command, return its exit code. A
    command run with ``--format json`` that fails prints :func:`~robot.cli.exits.error_document`
    on stdout before the error is reported on stderr."""
    words = sys.argv[1:] if argv is None else list(argv)

    def body() -> int:
        args = build_parser(words).parse_args(words)
        level = logging.WARNING - 10 * min(args.verbose + getattr(args, "verbose_after", 0), 2)
        explicit = getattr(args, "log_level_after", None) or args.log_level
        if explicit is not None:
            level = explicit
        logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        handler: Callable[[argparse.Namespace], int] = args.handler
        if getattr(args, "format", None) != "json":
            return handler(args)
        try:
            return handler(args)
        except Exception as exc:  # the JSON document on stdout; exits reports it on stderr
            document = error_document(exc)
            if document is not None:
                print(json.dumps(document), flush=True)
            raise

    return run_command(body)
