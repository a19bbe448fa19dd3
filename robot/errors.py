"""Every exception the robot package raises, in one tree.

::

    RobotError                      base of everything below
    ├── ConfigError                 a robot profile that cannot be used; names file, section, key
    ├── PlanError                   a solution this robot cannot execute (a layer no gripper
    │                               holds, a face with no motor and no replacement)
    ├── JournalError                the job journal cannot be opened, or is from a newer version
    ├── BrokerError                 the embedded MQTT broker cannot start (port taken, ...)
    ├── CommandError                a malformed or refused command; ``code`` is the reply's code
    └── JobError                    a job ended without solving the cube; ``code`` is the
                                    error event's code (``scan_invalid``, ``firmware_reset``, ...)

Messages are for an operator: they name the device, file or value and the next thing to do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from robot.daemon.events import ErrorCode

__all__ = [
    "BrokerError",
    "CommandError",
    "ConfigError",
    "JobError",
    "JournalError",
    "PlanError",
    "RobotError",
]


class RobotError(Exception):
    """Base class of the robot package's errors."""


class ConfigError(RobotError, ValueError):
    """A robot profile that cannot be used.

    ``file``, ``section`` and ``key`` locate the fault (``key`` may be empty for a whole
    section); the message says what was expected.
    """

    def __init__(self, message: str, *, file: str = "", section: str = "", key: str = "") -> None:
        self.file = file
        self.section = section
        self.key = key
        self.reason = message
        where = file or "<config>"
        if section:
            where += f": [{section}]"
        if key:
            where += f" {key}"
        super().__init__(f"{where}: {message}")


class PlanError(RobotError, ValueError):
    """A move sequence this robot cannot execute."""


class JournalError(RobotError):
    """The job journal cannot be used."""


class BrokerError(RobotError):
    """The embedded MQTT broker cannot start."""


class CommandError(RobotError, ValueError):
    """A command that is malformed (``ErrorCode.MALFORMED``) or refused in this state
    (``ErrorCode.BUSY``, ``ErrorCode.NOT_RESUMABLE``, ...; :mod:`robot.daemon.events`)."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        self.code = code
        super().__init__(message)


class JobError(RobotError):
    """A job that ended without a solved cube. ``code`` (an ``ErrorCode`` of
    :mod:`robot.daemon.events`) is stable: it is the MQTT error event's ``code``; ``detail``
    carries machine-readable context (stickers at fault, the executed move count, ...)."""

    def __init__(
        self, code: ErrorCode, message: str, detail: Mapping[str, Any] | None = None
    ) -> None:
        self.code = code
        self.detail: dict[str, Any] = dict(detail or {})
        super().__init__(message)
