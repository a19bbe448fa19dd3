"""The messages the host sends the firmware (:mod:`firmware_protocol.messages`): HELLO, the
sequenced MOVES, HOME, ENABLE and CLEAR, and the realtime ESTOP, HOLD, RESUME, STATUS_RQ and
HEARTBEAT."""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass
from typing import ClassVar

from firmware_protocol.codec import Frame
from firmware_protocol.codes import (
    MOVE_DEPTH_SHIFT,
    MessageType,
    MoveFlags,
)
from firmware_protocol.messages.base import (
    _WIRE_MOVE,
    MAX_MOVES_PER_FRAME,
    MOTOR_COUNT,
    PROTOCOL_VERSION,
    Message,
    _check_u8,
    _check_u16,
    _check_u32,
    _malformed,
)

__all__ = [
    "Clear",
    "EStop",
    "Enable",
    "Heartbeat",
    "Hello",
    "Hold",
    "Home",
    "Moves",
    "Resume",
    "StatusRequest",
    "WireMove",
]

logger = logging.getLogger(__name__)


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
