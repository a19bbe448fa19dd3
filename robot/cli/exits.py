"""The one place where the CLI turns exceptions into exit codes and messages.

Exit codes (a contract for scripts)::

    0    success
    1    the request was understood but failed (an impossible cube, a move that did not
         execute, a robot that refused or did not answer)
    2    malformed input or usage (argparse's own usage errors also exit 2)
    130  interrupted (Ctrl-C): one line, ``interrupted``, on stderr
    141  standard output was closed early (``cuberobot ... | head``): nothing printed, as a
         Unix tool killed by SIGPIPE (128 + 13)

Streams (one rule for every command): results on stdout; problems, errors and logging on
stderr. A command given ``--format json`` prints a JSON document on stdout even when it fails:
``{"error": {...}}`` (:func:`error_document`), the same error also reported on stderr. Usage
errors found by argparse itself (exit 2) print argparse's usage message only.

A command returns its exit code (0, or 1 for an outcome it already reported, such as a batch
with failed lines) or raises. What it raises is reported here as
``cuberobot: <message>`` on stderr, followed by one indented line per detail:

* :class:`CommandError` and its children carry their exit code: :class:`UsageError` (2) and
  :class:`CommandFailed` (1). A command raises them where the message needs its context
  (``not a facelet string: ...``, ``--from: ...``); the cause stays chained.
* The packages' own errors, raised through a command untouched, are mapped by
  :data:`LIBRARY_ERRORS`, most specific first (``NotationError`` → 2 ``bad move: ...``,
  ``LinkError`` → 1, ``ConfigError`` → 2, ...).

Anything else is a bug and keeps its traceback.

:data:`LIBRARY_ERRORS` names the exception classes by module and name instead of importing
them: importing ``vision.errors`` would load OpenCV, and ``firmware_protocol.errors`` the
whole link, into ``cuberobot solve``. An exception whose module was never imported cannot
have been raised, so a rule is only tried once its module is in :data:`sys.modules`.
"""

from __future__ import annotations

import os
import select
import signal
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, ClassVar

__all__ = [
    "LIBRARY_ERRORS",
    "CommandError",
    "CommandFailed",
    "ExitCode",
    "LibraryError",
    "UsageError",
    "as_command_error",
    "error_document",
    "report",
    "run_command",
]


class ExitCode(IntEnum):
    """The process exit codes (see the module docstring)."""

    OK = 0
    FAILED = 1
    USAGE = 2
    INTERRUPTED = 128 + signal.SIGINT
    BROKEN_PIPE = 128 + signal.SIGPIPE


class CommandError(Exception):
    """An error a command reports: ``message`` (printed after ``cuberobot: ``), ``details``
    (one indented line each) and the class's :attr:`exit_code`."""

    exit_code: ClassVar[ExitCode] = ExitCode.FAILED

    def __init__(self, message: str, *, details: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.details = tuple(details)


class CommandFailed(CommandError):
    """The request was understood but failed (exit 1)."""

    exit_code = ExitCode.FAILED


class UsageError(CommandError):
    """Malformed input or usage (exit 2)."""

    exit_code = ExitCode.USAGE


def _problems(exc: BaseException) -> tuple[str, ...]:
    """The detail lines of an ``InvalidCubeError``: every problem with its code and place."""
    problems = getattr(exc, "problems", ())
    return tuple(f"{p.code} at {p.where}: {p.message}" for p in problems)


@dataclass(frozen=True, slots=True)
class LibraryError:
    """A rule: exceptions of ``module.name`` (and subclasses) exit with ``code``, printed as
    ``prefix + str(exc)`` (or ``prefix`` alone when ``details`` gives the lines)."""

    module: str
    name: str
    code: ExitCode
    prefix: str = ""
    details: Callable[[BaseException], tuple[str, ...]] | None = None

    def matches(self, exc: BaseException) -> bool:
        cls = getattr(sys.modules.get(self.module), self.name, None)
        return isinstance(cls, type) and isinstance(exc, cls)

    def error(self, exc: BaseException) -> CommandError:
        kind = UsageError if self.code is ExitCode.USAGE else CommandFailed
        if self.details is not None:
            return kind(self.prefix, details=self.details(exc))
        return kind(f"{self.prefix}{exc}")


#: The packages' errors a command may let through, most specific first.
LIBRARY_ERRORS: tuple[LibraryError, ...] = (
    LibraryError(
        "solver.errors", "InvalidCubeError", ExitCode.FAILED, "impossible cube:", _problems
    ),
    LibraryError("solver.errors", "NoSolutionError", ExitCode.FAILED),
    LibraryError("solver.errors", "NotationError", ExitCode.USAGE, "bad move: "),
    LibraryError("solver.errors", "CubeError", ExitCode.USAGE),
    LibraryError("firmware_protocol.errors", "InvalidMoveError", ExitCode.USAGE, "bad moves: "),
    LibraryError("firmware_protocol.errors", "FirmwareProtocolError", ExitCode.FAILED),
    LibraryError(
        "vision.errors", "GridNotFoundError", ExitCode.FAILED, "no valid cube could be read: "
    ),
    LibraryError("vision.errors", "NoCubeError", ExitCode.FAILED, "no valid cube could be read: "),
    LibraryError("vision.errors", "VisionError", ExitCode.USAGE),
    LibraryError("robot.errors", "ConfigError", ExitCode.USAGE),
    LibraryError("robot.errors", "RobotError", ExitCode.FAILED),
)


def as_command_error(exc: BaseException) -> CommandError | None:
    """The :class:`CommandError` ``exc`` is reported as; ``None`` for a bug (no rule)."""
    if isinstance(exc, CommandError):
        return exc
    for rule in LIBRARY_ERRORS:
        if rule.matches(exc):
            return rule.error(exc)
    return None


def error_document(exc: BaseException) -> dict[str, Any] | None:
    """What a ``--format json`` command prints on stdout when it fails with ``exc``::

        {"error": {"type": "InvalidCubeError", "message": "impossible cube:",
                   "details": ["..."], "exit_code": 1}}

    ``type`` is the exception's class name; ``None`` for an exception that is a bug."""
    error = as_command_error(exc)
    if error is None:
        return None
    return {
        "error": {
            "type": type(exc).__name__,
            "message": error.message,
            "details": list(error.details),
            "exit_code": int(error.exit_code),
        }
    }


def report(error: CommandError) -> ExitCode:
    """Print ``error`` on stderr the one way every command does; return its exit code."""
    print(f"cuberobot: {error.message}", file=sys.stderr)
    for line in error.details:
        print(f"  {line}", file=sys.stderr)
    return error.exit_code


def _stdout_is_broken() -> bool:
    """Whether the reader of standard output went away (a pipe whose far end is closed)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & select.POLLERR for _, events in poller.poll(0))


def _silence_stdout() -> None:
    """Point standard output at /dev/null so that the interpreter's last flush cannot fail."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def run_command(body: Callable[[], int]) -> int:
    """Run ``body`` (parse the arguments, run one command) and map how it ended to an exit code
    (see the module docstring). ``SystemExit`` (argparse's ``--help`` and usage errors) passes
    through, after the same care for a closed standard output."""
    try:
        try:
            return body()
        finally:
            sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        if not _stdout_is_broken():
            raise
        _silence_stdout()
        return ExitCode.BROKEN_PIPE
    except Exception as exc:
        error = as_command_error(exc)
        if error is None:
            raise
        return report(error)
