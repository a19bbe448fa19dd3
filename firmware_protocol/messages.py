"""The messages of the wire protocol: typed, immutable, packed into frame payloads. Pure.

All multi-byte fields are little-endian. The tables in ``PROTOCOL.md`` are the specification;
this module follows them field by field.

========  ====  ==========  =========================================================
type      code  direction   delivery
========  ====  ==========  =========================================================
HELLO     0x01  host → fw   opens a session; repeated until IDENT echoes its nonce
MOVES     0x02  host → fw   sequenced (window, ACK/NAK, retransmission)
HOME      0x03  host → fw   sequenced
ENABLE    0x04  host → fw   sequenced
CLEAR     0x05  host → fw   sequenced
ESTOP     0x10  host → fw   realtime (unsequenced, idempotent, answered by STATUS)
HOLD      0x11  host → fw   realtime
RESUME    0x12  host → fw   realtime
STATUS_RQ 0x13  host → fw   realtime
HEARTBEAT 0x14  host → fw   realtime
IDENT     0x81  fw → host   reply to HELLO; also sent unsolicited (nonce 0) at boot
ACK       0x82  fw → host   RECEIVED: cumulative acknowledgement of sequenced frames
NAK       0x83  fw → host   a sequenced frame was lost, corrupt, or refused
EXECUTED  0x84  fw → host   cumulative: moves up to ``last_executed`` have executed
STATUS    0x85  fw → host   state snapshot; periodic heartbeat and reply to STATUS_RQ
ERROR     0x86  fw → host   stall / driver fault / limit / watchdog / e-stop report
========  ====  ==========  =========================================================

:func:`encode_message` turns a message into wire bytes; :func:`parse_message` turns a decoded
:class:`~firmware_protocol.codec.Frame` into a message or raises
:class:`~firmware_protocol.errors.MalformedMessage`.
"""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import ClassVar

from firmware_protocol.codec import Frame, encode_frame
from firmware_protocol.codes import (
    MOVE_DEPTH_SHIFT,
    SEQUENCED_TYPES,
    ErrorCode,
    FirmwareState,
    MessageType,
    MoveFlags,
    NakReason,
    StatusFlags,
)
from firmware_protocol.errors import MalformedMessage

__all__ = [
    "BOOT_COUNTERS_LOST",
    "MAX_MOVES_PER_FRAME",
    "MOTOR_COUNT",
    "PROTOCOL_VERSION",
    "SEQUENCED_TYPES",
    "SUPPORTED_VERSIONS",
    "Ack",
    "Clear",
    "EStop",
    "Enable",
    "ErrorCode",
    "ErrorReport",
    "Executed",
    "FirmwareState",
    "Heartbeat",
    "Hello",
    "Hold",
    "Home",
    "Ident",
    "Message",
    "MessageType",
    "MoveFlags",
    "Moves",
    "Nak",
    "NakReason",
    "Resume",
    "Status",
    "StatusFlags",
    "StatusRequest",
    "WireMove",
    "encode_message",
    "parse_message",
]

logger = logging.getLogger(__name__)

#: the version this host speaks (its HELLO); it also understands the IDENT of every version in
#: :data:`SUPPORTED_VERSIONS` (v1: no ``boot_flags``)
PROTOCOL_VERSION = 2
SUPPORTED_VERSIONS = (1, 2)
#: IDENT ``boot_flags`` bit 0 (v2): this boot found no valid non-volatile counters (a cold
#: power-up, or memory lost), so they started at zero
BOOT_COUNTERS_LOST = 0x01
#: Motors 0..5 are the faces U R F D L B.
MOTOR_COUNT = 6
_WIRE_MOVE = struct.Struct("<IBbB")  # index, motor, quarter turns, flags
#: 1 count byte + 7 bytes a move must fit in the 255-byte payload.
MAX_MOVES_PER_FRAME = (255 - 1) // _WIRE_MOVE.size  # 36
_U32 = 0xFFFF_FFFF


def _malformed(msg: str, frame: Frame) -> MalformedMessage:
    return MalformedMessage(
        f"{_type_name(frame.type)} seq {frame.seq}: {msg}", frame_type=frame.type, seq=frame.seq
    )


def _type_name(code: int) -> str:
    try:
        return MessageType(code).name
    except ValueError:
        return f"type 0x{code:02X}"


def _check_u32(name: str, value: int) -> None:
    if not 0 <= value <= _U32:
        raise ValueError(f"{name} must be 0..{_U32}, got {value}")


def _check_u16(name: str, value: int) -> None:
    if not 0 <= value <= 0xFFFF:
        raise ValueError(f"{name} must be 0..65535, got {value}")


def _check_u8(name: str, value: int) -> None:
    if not 0 <= value <= 0xFF:
        raise ValueError(f"{name} must be 0..255, got {value}")


def _enum(kind: type[IntEnum], value: int, field: str, frame: Frame) -> int:
    try:
        return kind(value)
    except ValueError:
        raise _malformed(f"{field} {value} is not a valid {kind.__name__}", frame) from None


class Message:
    """Base of every message. Subclasses define ``TYPE``, ``pack`` and ``unpack``."""

    TYPE: ClassVar[MessageType]
    _STRUCT: ClassVar[struct.Struct] = struct.Struct("<")

    def pack(self) -> bytes:
        return b""

    @classmethod
    def unpack(cls, frame: Frame) -> Message:
        if frame.payload:
            raise _malformed(f"expects an empty payload, got {len(frame.payload)} bytes", frame)
        return cls()

    @classmethod
    def _fields(cls, frame: Frame) -> tuple[int, ...]:
        if len(frame.payload) != cls._STRUCT.size:
            raise _malformed(
                f"payload must be {cls._STRUCT.size} bytes, got {len(frame.payload)}", frame
            )
        return tuple(int(v) for v in cls._STRUCT.unpack(frame.payload))


# --- host → firmware -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hello(Message):
    """Open a session. ``watchdog_ms`` = 0 keeps the firmware's default watchdog timeout."""

    TYPE: ClassVar[MessageType] = MessageType.HELLO
    _STRUCT: ClassVar[struct.Struct] = struct.Struct("<BIH")

    nonce: int
    watchdog_ms: int = 0
    protocol_version: int = PROTOCOL_VERSION

    def __post_init__(self) -> None:
        _check_u32("nonce", self.nonce)
        _check_u16("watchdog_ms", self.watchdog_ms)
        _check_u8("protocol_version", self.protocol_version)

    def pack(self) -> bytes:
        return self._STRUCT.pack(self.protocol_version, self.nonce, self.watchdog_ms)

    @classmethod
    def unpack(cls, frame: Frame) -> Hello:
        version, nonce, watchdog = cls._fields(frame)
        return cls(nonce=nonce, watchdog_ms=watchdog, protocol_version=version)


@dataclass(frozen=True, slots=True)
class WireMove:
    """One move as it travels: firmware move index, motor (face code), signed quarter turns,
    flags (the simultaneous bit and the gripper depth, see ``codes.move_flags``)."""

    index: int
    motor: int
    quarter_turns: int
    flags: MoveFlags = MoveFlags.NONE

    def __post_init__(self) -> None:
        _check_u32("move index", self.index)
        if self.index == 0:
            raise ValueError("move index 0 is reserved for 'no move'")
        if not 0 <= self.motor < MOTOR_COUNT:
            raise ValueError(f"motor must be 0..{MOTOR_COUNT - 1}, got {self.motor}")
        if self.quarter_turns not in (-2, -1, 1, 2):
            raise ValueError(f"quarter turns must be ±1 or ±2, got {self.quarter_turns}")
        if int(self.flags) & ~int(MoveFlags.SIMULTANEOUS_WITH_NEXT | MoveFlags.DEPTH_MASK):
            raise ValueError(f"unknown move flags 0x{int(self.flags):02X}")

    @property
    def simultaneous_with_next(self) -> bool:
        return bool(self.flags & MoveFlags.SIMULTANEOUS_WITH_NEXT)

    @property
    def depth(self) -> int:
        """Layers the motor's gripper turns (1: the outer layer alone)."""
        return ((int(self.flags) & int(MoveFlags.DEPTH_MASK)) >> MOVE_DEPTH_SHIFT) + 1


@dataclass(frozen=True, slots=True)
class Moves(Message):
    """A batch of 1..36 moves with consecutive indices.

    Groups (a move flagged SIMULTANEOUS_WITH_NEXT and the move after it) never span frames.
    """

    TYPE: ClassVar[MessageType] = MessageType.MOVES

    moves: tuple[WireMove, ...]

    def __post_init__(self) -> None:
        if not 1 <= len(self.moves) <= MAX_MOVES_PER_FRAME:
            raise ValueError(f"a MOVES frame holds 1..{MAX_MOVES_PER_FRAME} moves")
        for a, b in zip(self.moves, self.moves[1:], strict=False):
            if b.index != a.index + 1:
                raise ValueError(f"move indices must be consecutive: {a.index} then {b.index}")

    @property
    def first_index(self) -> int:
        return self.moves[0].index

    @property
    def last_index(self) -> int:
        return self.moves[-1].index

    def pack(self) -> bytes:
        out = bytearray((len(self.moves),))
        for m in self.moves:
            out += _WIRE_MOVE.pack(m.index, m.motor, m.quarter_turns, int(m.flags))
        return bytes(out)

    @classmethod
    def unpack(cls, frame: Frame) -> Moves:
        payload = frame.payload
        if not payload:
            raise _malformed("empty payload; MOVES needs a count", frame)
        count = payload[0]
        if len(payload) != 1 + count * _WIRE_MOVE.size:
            raise _malformed(
                f"count {count} needs {1 + count * _WIRE_MOVE.size} bytes, got {len(payload)}",
                frame,
            )
        moves = []
        for k in range(count):
            index, motor, turns, flags = _WIRE_MOVE.unpack_from(payload, 1 + k * _WIRE_MOVE.size)
            try:
                moves.append(WireMove(index, motor, turns, MoveFlags(flags)))
            except ValueError as err:
                raise _malformed(f"move {k}: {err}", frame) from None
        try:
            return cls(tuple(moves))
        except ValueError as err:
            raise _malformed(str(err), frame) from None


@dataclass(frozen=True, slots=True)
class Home(Message):
    """Home the motors in ``motor_mask`` (bit i = motor i); clears STOPPED and FAULT."""

    TYPE: ClassVar[MessageType] = MessageType.HOME
    _STRUCT: ClassVar[struct.Struct] = struct.Struct("<B")

    motor_mask: int = 0x3F

    def __post_init__(self) -> None:
        if not 0 < self.motor_mask <= 0x3F:
            raise ValueError(f"motor mask must be 0x01..0x3F, got 0x{self.motor_mask:02X}")

    def pack(self) -> bytes:
        return self._STRUCT.pack(self.motor_mask)

    @classmethod
    def unpack(cls, frame: Frame) -> Home:
        (mask,) = cls._fields(frame)
        try:
            return cls(mask)
        except ValueError as err:
            raise _malformed(str(err), frame) from None


@dataclass(frozen=True, slots=True)
class Enable(Message):
    """Energise the motors whose bit is set in ``enabled_mask``, release the others."""

    TYPE: ClassVar[MessageType] = MessageType.ENABLE
    _STRUCT: ClassVar[struct.Struct] = struct.Struct("<B")

    enabled_mask: int

    def __post_init__(self) -> None:
        if not 0 <= self.enabled_mask <= 0x3F:
            raise ValueError(f"enable mask must be 0x00..0x3F, got 0x{self.enabled_mask:02X}")

    def pack(self) -> bytes:
        return self._STRUCT.pack(self.enabled_mask)

    @classmethod
    def unpack(cls, frame: Frame) -> Enable:
        (mask,) = cls._fields(frame)
        try:
            return cls(mask)
        except ValueError as err:
            raise _malformed(str(err), frame) from None


@dataclass(frozen=True, slots=True)
class Clear(Message):
    """Leave STOPPED or FAULT for IDLE (no motion). Interrupted moves stay interrupted."""

    TYPE: ClassVar[MessageType] = MessageType.CLEAR


@dataclass(frozen=True, slots=True)
class EStop(Message):
    """Stop every motor now (mid-turn), flush the queue, enter STOPPED."""

    TYPE: ClassVar[MessageType] = MessageType.ESTOP


@dataclass(frozen=True, slots=True)
class Hold(Message):
    """Pause after the move group in progress; keep the queue."""

    TYPE: ClassVar[MessageType] = MessageType.HOLD


@dataclass(frozen=True, slots=True)
class Resume(Message):
    """Leave HOLD and continue with the queue."""

    TYPE: ClassVar[MessageType] = MessageType.RESUME


@dataclass(frozen=True, slots=True)
class StatusRequest(Message):
    """Ask for a STATUS frame now."""

    TYPE: ClassVar[MessageType] = MessageType.STATUS_REQUEST


@dataclass(frozen=True, slots=True)
class Heartbeat(Message):
    """The host is alive (feeds the firmware watchdog; any valid frame does too)."""

    TYPE: ClassVar[MessageType] = MessageType.HEARTBEAT


# --- firmware → host -----------------------------------------------------------------------------


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


_REGISTRY: dict[int, type[Message]] = {
    cls.TYPE: cls
    for cls in (
        Hello,
        Moves,
        Home,
        Enable,
        Clear,
        EStop,
        Hold,
        Resume,
        StatusRequest,
        Heartbeat,
        Ident,
        Ack,
        Nak,
        Executed,
        Status,
        ErrorReport,
    )
}


def encode_message(message: Message, seq: int = 0) -> bytes:
    """Wire bytes of ``message`` with sequence number ``seq`` (realtime frames use 0 from the
    host; the firmware numbers its own frames with its transmit counter)."""
    return encode_frame(Frame(int(message.TYPE), seq, message.pack()))


def parse_message(frame: Frame) -> Message:
    """The typed message in ``frame``; :class:`MalformedMessage` if type or payload is invalid."""
    cls = _REGISTRY.get(frame.type)
    if cls is None:
        raise _malformed("unknown message type", frame)
    return cls.unpack(frame)
