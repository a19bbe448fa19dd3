"""The messages of the wire protocol: typed, immutable, packed into frame payloads. Pure.

All multi-byte fields are little-endian. The tables in ``PROTOCOL.md`` are the specification;
these modules follow them field by field: :mod:`.host` holds the messages of the host,
:mod:`.reports` those of the firmware, :mod:`.base` what they share.

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

from firmware_protocol.codec import Frame, encode_frame
from firmware_protocol.codes import (
    SEQUENCED_TYPES,
    ErrorCode,
    FirmwareState,
    MessageType,
    MoveFlags,
    NakReason,
    StatusFlags,
)
from firmware_protocol.messages.base import (
    BOOT_COUNTERS_LOST,
    MAX_MOVES_PER_FRAME,
    MOTOR_COUNT,
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    Message,
    _malformed,
)
from firmware_protocol.messages.host import (
    Clear,
    Enable,
    EStop,
    Heartbeat,
    Hello,
    Hold,
    Home,
    Moves,
    Resume,
    StatusRequest,
    WireMove,
)
from firmware_protocol.messages.reports import Ack, ErrorReport, Executed, Ident, Nak, Status

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
