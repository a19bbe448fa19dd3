"""The wire protocol to the stepper-motor firmware.

Modules (``PROTOCOL.md`` is the specification):

- :mod:`~firmware_protocol.codec` — pure framing: COBS, CRC-16/CCITT, :class:`Frame`,
  :class:`FrameDecoder` ("incomplete" distinct from "corrupt").
- :mod:`~firmware_protocol.messages` — pure typed messages (HELLO, MOVES, ACK, EXECUTED, ...);
  :mod:`~firmware_protocol.codes` — their numbers (types, states, error codes, NAK reasons).
- :mod:`~firmware_protocol.moves` — moves as motor codes (U R F D L B = 0..5), text form.
- :mod:`~firmware_protocol.errors` — the exception tree.
- :mod:`~firmware_protocol.link` — :class:`FirmwareLink`, the reliable asyncio link.
- :mod:`~firmware_protocol.sim` — the simulated firmware on a pty or TCP port, with fault
  injection and motor timing.

Nothing here imports the solver, vision or robot packages: the simulated firmware's cube is
injected through :class:`TurnableCube`.
"""

from __future__ import annotations

from firmware_protocol.codec import Frame, FrameDecoder, decode_frame, encode_frame
from firmware_protocol.errors import (
    BadChecksum,
    BadCobs,
    BadLength,
    CodecError,
    CommandRejectedError,
    CorruptFrame,
    EmergencyStopError,
    ExecutionEndedError,
    ExecutionError,
    ExecutionLinkError,
    FirmwareContradictionError,
    FirmwareProtocolError,
    FirmwareResetError,
    FirmwareStoppedError,
    FrameTooLong,
    IncompleteFrame,
    InvalidMoveError,
    LinkBusyError,
    LinkClosedError,
    LinkError,
    LinkTimeoutError,
    MalformedMessage,
    MotorFaultError,
    MoveIndexError,
    PortError,
    PortLostError,
    PortOpenError,
    ProtocolVersionError,
    ResetNotAcknowledgedError,
)
from firmware_protocol.link import (
    Execution,
    ExecutionReport,
    FirmwareInfo,
    FirmwareLink,
    LinkConfig,
    LinkStats,
    MoveExecuted,
    PlannedMove,
)
from firmware_protocol.messages import (
    PROTOCOL_VERSION,
    ErrorCode,
    FirmwareState,
    Status,
    encode_message,
    parse_message,
)
from firmware_protocol.moves import Face, Move, format_moves, parse_moves, validate_moves
from firmware_protocol.sim import (
    FaultSpec,
    FirmwareConfig,
    MotorProfile,
    NonVolatile,
    PtyEndpoint,
    SimulatedFirmware,
    TcpEndpoint,
    TurnableCube,
    parse_fault_spec,
)

__all__ = [
    "PROTOCOL_VERSION",
    "BadChecksum",
    "BadCobs",
    "BadLength",
    "CodecError",
    "CommandRejectedError",
    "CorruptFrame",
    "EmergencyStopError",
    "ErrorCode",
    "Execution",
    "ExecutionEndedError",
    "ExecutionError",
    "ExecutionLinkError",
    "ExecutionReport",
    "Face",
    "FaultSpec",
    "FirmwareConfig",
    "FirmwareContradictionError",
    "FirmwareInfo",
    "FirmwareLink",
    "FirmwareProtocolError",
    "FirmwareResetError",
    "FirmwareState",
    "FirmwareStoppedError",
    "Frame",
    "FrameDecoder",
    "FrameTooLong",
    "IncompleteFrame",
    "InvalidMoveError",
    "LinkBusyError",
    "LinkClosedError",
    "LinkConfig",
    "LinkError",
    "LinkStats",
    "LinkTimeoutError",
    "MalformedMessage",
    "MotorFaultError",
    "MotorProfile",
    "Move",
    "MoveExecuted",
    "MoveIndexError",
    "NonVolatile",
    "PlannedMove",
    "PortError",
    "PortLostError",
    "PortOpenError",
    "ProtocolVersionError",
    "PtyEndpoint",
    "ResetNotAcknowledgedError",
    "SimulatedFirmware",
    "Status",
    "TcpEndpoint",
    "TurnableCube",
    "decode_frame",
    "encode_frame",
    "encode_message",
    "format_moves",
    "parse_fault_spec",
    "parse_message",
    "parse_moves",
    "validate_moves",
]
