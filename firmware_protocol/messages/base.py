"""What every message of the wire protocol shares: the limits of its fields, the checks of a
payload, and :class:`Message`, the base of the typed messages (:mod:`firmware_protocol.messages`).
"""

from __future__ import annotations

import logging
import struct
from enum import IntEnum
from typing import ClassVar

from firmware_protocol.codec import Frame
from firmware_protocol.codes import (
    MessageType,
)
from firmware_protocol.errors import MalformedMessage

__all__ = [
    "BOOT_COUNTERS_LOST",
    "MAX_MOVES_PER_FRAME",
    "MOTOR_COUNT",
    "PROTOCOL_VERSION",
    "SUPPORTED_VERSIONS",
    "Message",
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
