"""Every exception this package raises, in one tree.

::

    FirmwareProtocolError                 base of everything below
    ├── CodecError                        the pure codec (bytes ↔ frames ↔ messages)
    │   ├── IncompleteFrame               not an error of the data: more bytes are needed
    │   └── CorruptFrame                  these bytes can never become a valid frame; ``skip`` says
    │       │                             how many to drop to resynchronise
    │       ├── BadCobs                   COBS code byte points past the end of the frame
    │       ├── BadLength                 frame shorter than a header, or LEN disagrees with it
    │       ├── BadChecksum               CRC-16/CCITT mismatch
    │       ├── FrameTooLong              no delimiter within the longest possible frame
    │       └── MalformedMessage          an intact frame whose type or payload is invalid
    ├── InvalidMoveError (also ValueError) a move the firmware cannot execute (bad motor, turns,
    │                                      or a simultaneous group that is not two opposite faces)
    └── LinkError                         the asyncio link (:mod:`firmware_protocol.link`)
        ├── LinkClosedError               we closed the link (``close()`` was called)
        ├── LinkBusyError                 ``execute()`` while another execution is running
        ├── ExecutionEndedError           ``extend()`` with no execution running (it ended)
        ├── ResetNotAcknowledgedError     ``execute()`` after a firmware reset, before
        │                                 ``acknowledge_reset()``
        ├── MoveIndexError                ``execute()`` / ``extend()`` with moves that would need
        │                                 a move index past 0xFFFFFFFF (the firmware's counters
        │                                 are at the end of their range)
        ├── PortError                     the outside failed (cause chained)
        │   ├── PortOpenError             the port cannot be opened at ``connect()``
        │   └── PortLostError             the port vanished and did not come back in time
        ├── LinkTimeoutError              the firmware stopped answering (no ACK / IDENT / STATUS
        │                                 after the bounded retries)
        ├── ProtocolVersionError          the firmware speaks another protocol version (or
        │                                 announces a queue of 0 moves or no motor)
        ├── CommandRejectedError          the firmware refused a command (NAK with a permanent
        │                                 reason, or a state that forbids it)
        └── ExecutionError                an ``execute()`` ended before every move executed;
            │                             ``report`` says exactly which moves did
            ├── FirmwareResetError        the boot id changed mid-sequence
            ├── EmergencyStopError        an emergency stop ended the sequence
            ├── MotorFaultError           stall, driver fault or limit switch
            ├── FirmwareStoppedError      the firmware is stopped (e-stop, fault) and refuses moves
            ├── ExecutionLinkError        the link itself failed (port lost, timeouts); moves in
            │                             ``report.unknown`` may or may not have executed
            └── FirmwareContradictionError  a report contradicts what the host sent (a counter
                                          past the last move sent) or an EXECUTED is denied by
                                          the STATUS; ``report.unknown`` moves need a re-scan

Closed (we did it) and Broken (the outside did it, ``__cause__`` chained) are kept apart, as in
httpx and trio. Every message of a link error names the port and the next thing to try.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from firmware_protocol.link.data import ExecutionReport

__all__ = [
    "BadChecksum",
    "BadCobs",
    "BadLength",
    "CodecError",
    "CommandRejectedError",
    "CorruptFrame",
    "EmergencyStopError",
    "ExecutionEndedError",
    "ExecutionError",
    "ExecutionLinkError",
    "FirmwareContradictionError",
    "FirmwareProtocolError",
    "FirmwareResetError",
    "FirmwareStoppedError",
    "FrameTooLong",
    "IncompleteFrame",
    "InvalidMoveError",
    "LinkBusyError",
    "LinkClosedError",
    "LinkError",
    "LinkTimeoutError",
    "MalformedMessage",
    "MotorFaultError",
    "MoveIndexError",
    "PortError",
    "PortLostError",
    "PortOpenError",
    "ProtocolVersionError",
    "ResetNotAcknowledgedError",
]


class FirmwareProtocolError(Exception):
    """Base class of every exception raised by :mod:`firmware_protocol`."""


# --- codec ---------------------------------------------------------------------------------------


class CodecError(FirmwareProtocolError):
    """Raised by the pure codec."""


class IncompleteFrame(CodecError):
    """The buffer holds the start of a frame but not yet its end: feed more bytes.

    Nothing is wrong with the data; nothing should be discarded.
    """

    def __init__(self, buffered: int) -> None:
        super().__init__(f"incomplete frame: {buffered} bytes buffered, no delimiter yet")
        self.buffered = buffered


class CorruptFrame(CodecError):
    """Bytes that can never be a valid frame.

    ``skip`` is the number of bytes (from the start of the buffer given to the decoder) to drop
    so that decoding resumes at the next frame boundary.
    """

    def __init__(self, reason: str, skip: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.skip = skip


class BadCobs(CorruptFrame):
    """The COBS encoding is invalid (a code byte runs past the end of the frame)."""


class BadLength(CorruptFrame):
    """The frame is shorter than header + CRC, or its LEN field disagrees with its size."""


class BadChecksum(CorruptFrame):
    """The CRC-16/CCITT of the frame does not match."""

    def __init__(self, reason: str, skip: int, expected: int, received: int) -> None:
        super().__init__(reason, skip)
        self.expected = expected
        self.received = received


class FrameTooLong(CorruptFrame):
    """No delimiter within the longest possible encoded frame: line noise or a lost delimiter."""


class MalformedMessage(CorruptFrame):
    """An intact frame (CRC good) whose type is unknown or whose payload is invalid."""

    def __init__(self, reason: str, skip: int = 0, frame_type: int = -1, seq: int = -1) -> None:
        super().__init__(reason, skip)
        self.frame_type = frame_type
        self.seq = seq


# --- moves ---------------------------------------------------------------------------------------


class InvalidMoveError(FirmwareProtocolError, ValueError):
    """A move the firmware cannot execute; raised before anything is sent."""


# --- link ----------------------------------------------------------------------------------------


class LinkError(FirmwareProtocolError):
    """Raised by :class:`firmware_protocol.link.FirmwareLink`. ``port`` names the device."""

    def __init__(self, message: str, port: str = "") -> None:
        super().__init__(message)
        self.port = port


class LinkClosedError(LinkError):
    """The link was closed by its owner; open a new one."""


class LinkBusyError(LinkError):
    """An execution is already in progress on this link."""


class ExecutionEndedError(LinkError):
    """``extend()`` found no execution running: the last one ended (every move executed and
    confirmed, or it failed). Start a new execution with the moves instead."""


class ResetNotAcknowledgedError(LinkError):
    """The firmware reset mid-sequence; the owner must reconcile the cube state and call
    ``acknowledge_reset()`` before the link executes more moves."""


class MoveIndexError(LinkError):
    """The moves would need a move index past 0xFFFFFFFF, the last the protocol has: the
    firmware's move counters are at the end of their range (or were never initialised, as an
    erased EEPROM reads 0xFF). Raised before anything is sent."""


class PortError(LinkError):
    """The serial port failed (the original exception is chained as ``__cause__``)."""


class PortOpenError(PortError):
    """The port could not be opened."""


class PortLostError(PortError):
    """The port vanished and did not come back within the reconnect budget."""


class LinkTimeoutError(LinkError):
    """The firmware did not answer within the bounded retries."""


class ProtocolVersionError(LinkError):
    """The firmware speaks a protocol version this host does not."""


class CommandRejectedError(LinkError):
    """The firmware refused a command; ``reason`` is the NAK reason or state name."""

    def __init__(self, message: str, port: str = "", reason: str = "") -> None:
        super().__init__(message, port)
        self.reason = reason


class ExecutionError(LinkError):
    """An execution ended before every move executed.

    ``report`` (:class:`firmware_protocol.link.ExecutionReport`) lists exactly which moves
    executed, which were interrupted mid-turn, which never started, and (only when the link
    itself failed) which are unknown.
    """

    def __init__(self, message: str, port: str, report: ExecutionReport) -> None:
        super().__init__(message, port)
        self.report = report


class FirmwareResetError(ExecutionError):
    """The firmware's boot id changed while moves were outstanding."""


class EmergencyStopError(ExecutionError):
    """An emergency stop (from this host, another, or the firmware) ended the sequence."""


class MotorFaultError(ExecutionError):
    """A motor stalled, its driver faulted, or a limit switch tripped."""


class FirmwareStoppedError(ExecutionError):
    """The firmware is stopped or faulted and refuses moves until ``home()``."""


class ExecutionLinkError(ExecutionError):
    """The link failed mid-sequence; ``report.unknown`` may or may not have executed."""


class FirmwareContradictionError(ExecutionError):
    """A report from the line contradicts what the host sent or what the firmware said before
    (a counter past the last move sent, counters out of order, a STATUS that denies an EXECUTED):
    ``report.executed`` holds only the moves reported within bounds, ``report.unknown`` those
    whose fate the host cannot know. ``field`` and ``value`` name the offending report field."""

    def __init__(
        self, message: str, port: str, report: ExecutionReport, field: str, value: int
    ) -> None:
        super().__init__(message, port, report)
        self.field = field
        self.value = value
