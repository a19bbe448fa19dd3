"""The messages the firmware sends the host (:mod:`firmware_protocol.messages`): IDENT, ACK,
NAK, EXECUTED, STATUS and ERROR."""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass
from typing import ClassVar

from firmware_protocol.codec import Frame
from firmware_protocol.codes import (
    ErrorCode,
    FirmwareState,
    MessageType,
    NakReason,
    StatusFlags,
)
from firmware_protocol.messages.base import (
    BOOT_COUNTERS_LOST,
    Message,
    _check_u8,
    _enum,
    _malformed,
)

__all__ = [
    "Ack",
    "ErrorReport",
    "Executed",
    "Ident",
    "Nak",
    "Status",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Ident(Message):
    """Who the firmware is and where its move counters stand.

    ``boot_id`` changes at every firmware reset. The three move counters survive resets
    (non-volatile): ``last_received`` is the highest move index accepted into the queue,
    ``started_upto`` the highest index whose motors started, ``last_executed`` the index of the
    most recently completed move. Moves in ``(last_executed, started_upto]`` were interrupted.
    ``nonce`` echoes the HELLO; 0 marks the unsolicited announcement sent at boot.
    ``boot_flags`` (protocol v2, a 32nd byte; 0 from a v1 firmware, which cannot say):
    :data:`BOOT_COUNTERS_LOST` when this boot's counters started at zero because the
    non-volatile memory held none.
    """

    TYPE: ClassVar[MessageType] = MessageType.IDENT
    _STRUCT: ClassVar[struct.Struct] = struct.Struct("<IBBBBBBBHIIIIBBB")
    _STRUCT_V1: ClassVar[struct.Struct] = struct.Struct("<IBBBBBBBHIIIIBB")

    nonce: int
    protocol_version: int
    firmware_version: tuple[int, int, int]
    motor_count: int
    queue_depth: int
    max_batch: int
    watchdog_ms: int
    boot_id: int
    last_received: int
    started_upto: int
    last_executed: int
    state: FirmwareState
    error: ErrorCode
    boot_flags: int = 0

    def __post_init__(self) -> None:
        _check_u8("boot_flags", self.boot_flags)

    @property
    def counters_lost(self) -> bool:
        """This boot's counters started at zero: the memory held none (v2 firmware only)."""
        return bool(self.boot_flags & BOOT_COUNTERS_LOST)

    def pack(self) -> bytes:
        fields = (
            self.nonce,
            self.protocol_version,
            *self.firmware_version,
            self.motor_count,
            self.queue_depth,
            self.max_batch,
            self.watchdog_ms,
            self.boot_id,
            self.last_received,
            self.started_upto,
            self.last_executed,
            int(self.state),
            int(self.error),
        )
        if self.protocol_version < 2:  # no boot_flags byte: a v1 firmware cannot say
            return self._STRUCT_V1.pack(*fields)
        return self._STRUCT.pack(*fields, self.boot_flags)

    @classmethod
    def unpack(cls, frame: Frame) -> Ident:
        payload = frame.payload
        if len(payload) == cls._STRUCT_V1.size:  # v1's layout: no boot_flags
            f = (*(int(v) for v in cls._STRUCT_V1.unpack(payload)), 0)
        else:  # v2 and later: 32 bytes
            f = cls._fields(frame)
        return cls(
            nonce=f[0],
            protocol_version=f[1],
            firmware_version=(f[2], f[3], f[4]),
            motor_count=f[5],
            queue_depth=f[6],
            max_batch=f[7],
            watchdog_ms=f[8],
            boot_id=f[9],
            last_received=f[10],
            started_upto=f[11],
            last_executed=f[12],
            state=FirmwareState(_enum(FirmwareState, f[13], "state", frame)),
            error=ErrorCode(_enum(ErrorCode, f[14], "error", frame)),
            boot_flags=f[15],
        )


@dataclass(frozen=True, slots=True)
class Ack(Message):
    """RECEIVED: every sequenced frame up to ``seq`` arrived and was accepted (cumulative)."""

    TYPE: ClassVar[MessageType] = MessageType.ACK
    _STRUCT: ClassVar[struct.Struct] = struct.Struct("<HIB")

    seq: int
    last_received: int
    queue_free: int

    def pack(self) -> bytes:
        return self._STRUCT.pack(self.seq, self.last_received, self.queue_free)

    @classmethod
    def unpack(cls, frame: Frame) -> Ack:
        seq, last_received, free = cls._fields(frame)
        return cls(seq, last_received, free)


@dataclass(frozen=True, slots=True)
class Nak(Message):
    """A sequenced frame was not accepted. ``seq`` is the frame to resend from (CORRUPT,
    SEQ_GAP) or the refused frame (other reasons); ``detail`` depends on the reason."""

    TYPE: ClassVar[MessageType] = MessageType.NAK
    _STRUCT: ClassVar[struct.Struct] = struct.Struct("<HBI")

    seq: int
    reason: NakReason
    detail: int = 0

    def pack(self) -> bytes:
        return self._STRUCT.pack(self.seq, int(self.reason), self.detail)

    @classmethod
    def unpack(cls, frame: Frame) -> Nak:
        seq, reason, detail = cls._fields(frame)
        return cls(seq, NakReason(_enum(NakReason, reason, "reason", frame)), detail)


@dataclass(frozen=True, slots=True)
class Executed(Message):
    """Cumulative progress: sent when a move group completes (and repeated in STATUS)."""

    TYPE: ClassVar[MessageType] = MessageType.EXECUTED
    _STRUCT: ClassVar[struct.Struct] = struct.Struct("<IIB")

    last_executed: int
    started_upto: int
    queue_free: int

    def pack(self) -> bytes:
        return self._STRUCT.pack(self.last_executed, self.started_upto, self.queue_free)

    @classmethod
    def unpack(cls, frame: Frame) -> Executed:
        last, started, free = cls._fields(frame)
        return cls(last, started, free)


@dataclass(frozen=True, slots=True)
class Status(Message):
    """A snapshot of the firmware; sent every heartbeat period during a session, on every state
    change, and in answer to STATUS_REQUEST, ESTOP, HOLD and RESUME."""

    TYPE: ClassVar[MessageType] = MessageType.STATUS
    _STRUCT: ClassVar[struct.Struct] = struct.Struct("<IBBBBBBHIIII")

    boot_id: int
    state: FirmwareState
    error: ErrorCode
    error_motor: int  # 0xFF = none
    flags: StatusFlags
    enabled_mask: int
    queue_free: int
    expected_seq: int
    last_received: int
    started_upto: int
    last_executed: int
    uptime_ms: int

    def pack(self) -> bytes:
        return self._STRUCT.pack(
            self.boot_id,
            int(self.state),
            int(self.error),
            self.error_motor,
            int(self.flags),
            self.enabled_mask,
            self.queue_free,
            self.expected_seq,
            self.last_received,
            self.started_upto,
            self.last_executed,
            self.uptime_ms,
        )

    @classmethod
    def unpack(cls, frame: Frame) -> Status:
        f = cls._fields(frame)
        if f[4] & ~0x07:
            raise _malformed(f"unknown status flags 0x{f[4]:02X}", frame)
        return cls(
            boot_id=f[0],
            state=FirmwareState(_enum(FirmwareState, f[1], "state", frame)),
            error=ErrorCode(_enum(ErrorCode, f[2], "error", frame)),
            error_motor=f[3],
            flags=StatusFlags(f[4]),
            enabled_mask=f[5],
            queue_free=f[6],
            expected_seq=f[7],
            last_received=f[8],
            started_upto=f[9],
            last_executed=f[10],
            uptime_ms=f[11],
        )


@dataclass(frozen=True, slots=True)
class ErrorReport(Message):
    """Something stopped the motors. ``motor`` 0xFF = not motor-specific; ``move_index`` is the
    move that was running (0 = none)."""

    TYPE: ClassVar[MessageType] = MessageType.ERROR
    _STRUCT: ClassVar[struct.Struct] = struct.Struct("<BBIH")

    code: ErrorCode
    motor: int
    move_index: int
    detail: int = 0

    def pack(self) -> bytes:
        return self._STRUCT.pack(int(self.code), self.motor, self.move_index, self.detail)

    @classmethod
    def unpack(cls, frame: Frame) -> ErrorReport:
        code, motor, index, detail = cls._fields(frame)
        return cls(ErrorCode(_enum(ErrorCode, code, "code", frame)), motor, index, detail)
