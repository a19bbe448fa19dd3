"""The framing layer of the wire protocol: bytes in, frames out. Pure: no I/O, asyncio or serial.

A frame on the wire (see ``PROTOCOL.md`` for the full specification)::

    ┌──────────── COBS-encoded body ────────────┐┌──┐
    │ LEN │ SEQ (u16 LE) │ TYPE │ PAYLOAD │ CRC ││00│   CRC = CRC-16/CCITT-FALSE (u16 LE)
    │ u8  │              │ u8   │ LEN B   │     ││  │         over LEN..PAYLOAD
    └───────────────────────────────────────────┘└──┘

The body is COBS-encoded so that it contains no zero byte; ``0x00`` ends every frame. A receiver
that sees garbage resynchronises at the next ``0x00``: one corrupted frame never swallows the next.

Two distinct outcomes besides a frame:

- :class:`~firmware_protocol.errors.IncompleteFrame`: no delimiter yet; keep the bytes, feed more.
- :class:`~firmware_protocol.errors.CorruptFrame` (and its children): drop ``skip`` bytes.

:func:`decode_frame` works on a buffer; :class:`FrameDecoder` is the streaming form a transport
uses (``feed(chunk)`` returns frames and corrupt-frame errors in arrival order).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass

from firmware_protocol.errors import (
    BadChecksum,
    BadCobs,
    BadLength,
    CorruptFrame,
    FrameTooLong,
    IncompleteFrame,
)

__all__ = [
    "BITS_PER_BYTE",
    "CRC_SIZE",
    "DELIMITER",
    "HEADER_SIZE",
    "MAX_BODY_SIZE",
    "MAX_ENCODED_SIZE",
    "MAX_PAYLOAD_SIZE",
    "MAX_SEQ",
    "MIN_BODY_SIZE",
    "Frame",
    "FrameDecoder",
    "cobs_decode",
    "cobs_encode",
    "crc16_ccitt",
    "decode_frame",
    "encode_frame",
]

logger = logging.getLogger(__name__)

DELIMITER = 0x00
HEADER_SIZE = 4  # LEN u8, SEQ u16, TYPE u8
CRC_SIZE = 2
MAX_PAYLOAD_SIZE = 255
MIN_BODY_SIZE = HEADER_SIZE + CRC_SIZE  # 6
MAX_BODY_SIZE = HEADER_SIZE + MAX_PAYLOAD_SIZE + CRC_SIZE  # 261
#: Longest COBS encoding of a body (one overhead byte per started 254 bytes), without delimiter.
MAX_ENCODED_SIZE = MAX_BODY_SIZE + (MAX_BODY_SIZE + 253) // 254  # 263
MAX_SEQ = 0xFFFF
#: Bits a byte takes on the serial line, 8N1: start + 8 data + stop (for wire-time estimates).
BITS_PER_BYTE = 10


# --- CRC-16/CCITT-FALSE ---------------------------------------------------------------------------


def _crc_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return tuple(table)


_CRC_TABLE = _crc_table()


def crc16_ccitt(data: bytes | bytearray | memoryview, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, no final XOR.

    Check value: ``crc16_ccitt(b"123456789") == 0x29B1``.
    """
    table = _CRC_TABLE
    for byte in bytes(data):
        crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ byte) & 0xFF]
    return crc


# --- COBS ----------------------------------------------------------------------------------------


def cobs_encode(data: bytes | bytearray | memoryview) -> bytes:
    """Consistent Overhead Byte Stuffing: the result contains no ``0x00``."""
    out = bytearray()
    block = bytearray()
    for byte in bytes(data):
        if byte == 0:
            out.append(len(block) + 1)
            out += block
            block.clear()
        else:
            block.append(byte)
            if len(block) == 254:
                out.append(255)
                out += block
                block.clear()
    out.append(len(block) + 1)
    out += block
    return bytes(out)


def cobs_decode(data: bytes | bytearray | memoryview, skip: int = 0) -> bytes:
    """Invert :func:`cobs_encode`. ``data`` must not contain the delimiter.

    Raises :class:`BadCobs` (with ``skip``) for a zero byte or a code running past the end.
    """
    raw = bytes(data)
    out = bytearray()
    i = 0
    n = len(raw)
    while i < n:
        code = raw[i]
        if code == 0:
            raise BadCobs(f"COBS: zero byte at offset {i}", skip)
        end = i + code
        if end > n:
            raise BadCobs(f"COBS: code {code} at offset {i} runs past the end ({n} bytes)", skip)
        out += raw[i + 1 : end]
        i = end
        if code != 255 and i < n:
            out.append(0)
    return bytes(out)


# --- frames --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Frame:
    """One decoded frame: message type, sequence number, raw payload (≤ 255 bytes)."""

    type: int
    seq: int
    payload: bytes = b""

    def __post_init__(self) -> None:
        if not 0 <= self.type <= 0xFF:
            raise ValueError(f"frame type must be 0..255, got {self.type}")
        if not 0 <= self.seq <= MAX_SEQ:
            raise ValueError(f"frame seq must be 0..{MAX_SEQ}, got {self.seq}")
        if len(self.payload) > MAX_PAYLOAD_SIZE:
            raise ValueError(
                f"frame payload must be at most {MAX_PAYLOAD_SIZE} bytes, got {len(self.payload)}"
            )


def encode_frame(frame: Frame) -> bytes:
    """The bytes to send for ``frame``: COBS(LEN SEQ TYPE PAYLOAD CRC) followed by ``0x00``."""
    body = bytearray()
    body.append(len(frame.payload))
    body += frame.seq.to_bytes(2, "little")
    body.append(frame.type)
    body += frame.payload
    body += crc16_ccitt(body).to_bytes(2, "little")
    return cobs_encode(body) + bytes((DELIMITER,))


def _parse_body(body: bytes, skip: int) -> Frame:
    if len(body) < MIN_BODY_SIZE:
        raise BadLength(
            f"frame body is {len(body)} bytes; the smallest frame is {MIN_BODY_SIZE}", skip
        )
    length = body[0]
    if HEADER_SIZE + length + CRC_SIZE != len(body):
        raise BadLength(
            f"LEN says {length} payload bytes but the body holds "
            f"{len(body) - HEADER_SIZE - CRC_SIZE}",
            skip,
        )
    expected = crc16_ccitt(body[:-CRC_SIZE])
    received = int.from_bytes(body[-CRC_SIZE:], "little")
    if expected != received:
        raise BadChecksum(
            f"CRC mismatch: computed 0x{expected:04X}, frame carries 0x{received:04X}",
            skip,
            expected,
            received,
        )
    seq = int.from_bytes(body[1:3], "little")
    return Frame(type=body[3], seq=seq, payload=bytes(body[HEADER_SIZE:-CRC_SIZE]))


def decode_frame(buffer: bytes | bytearray | memoryview) -> tuple[Frame, int]:
    """Decode the first frame in ``buffer``; return it and the number of bytes it used.

    Leading delimiters (empty frames, used as line fillers) are skipped and counted as used.

    Raises:
        IncompleteFrame: no delimiter yet and the buffer could still be a frame's start.
        CorruptFrame: the first frame is invalid; drop ``err.skip`` bytes and call again.
    """
    data = bytes(buffer)
    start = 0
    while start < len(data) and data[start] == DELIMITER:
        start += 1
    end = data.find(DELIMITER, start)
    if end < 0:
        pending = len(data) - start
        if pending > MAX_ENCODED_SIZE:
            raise FrameTooLong(
                f"{pending} bytes without a delimiter; a frame is at most {MAX_ENCODED_SIZE}",
                len(data),
            )
        raise IncompleteFrame(pending)
    skip = end + 1
    encoded = data[start:end]
    if len(encoded) > MAX_ENCODED_SIZE:
        raise FrameTooLong(
            f"{len(encoded)} bytes between delimiters; a frame is at most {MAX_ENCODED_SIZE}",
            skip,
        )
    body = cobs_decode(encoded, skip)
    return _parse_body(body, skip), skip


class FrameDecoder:
    """Streaming decoder: ``feed(chunk)`` yields frames and corrupt-frame errors in order.

    After a :class:`FrameTooLong` it discards bytes up to the next delimiter, so a long run of
    noise costs one error, not one per chunk. Counters (``frames``, ``corrupt``) are for
    statistics and logs.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._discarding = False
        self.frames = 0
        self.corrupt = 0

    @property
    def buffered(self) -> int:
        """Bytes held while waiting for a delimiter."""
        return len(self._buffer)

    def reset(self) -> None:
        """Forget any partial frame (used after a port is reopened)."""
        self._buffer.clear()
        self._discarding = False

    def feed(self, data: bytes | bytearray | memoryview) -> Iterator[Frame | CorruptFrame]:
        """Add ``data``; yield every complete frame (or corrupt-frame error) it finishes."""
        chunk = bytes(data)
        if self._discarding:
            cut = chunk.find(DELIMITER)
            if cut < 0:
                return
            chunk = chunk[cut + 1 :]
            self._discarding = False
        self._buffer += chunk
        while self._buffer:
            try:
                frame, used = decode_frame(self._buffer)
            except IncompleteFrame:
                return
            except FrameTooLong as err:
                # Without a delimiter in what was dropped, we are inside the noise: drop on
                # until the next delimiter arrives.
                self._discarding = self._buffer[err.skip - 1] != DELIMITER
                del self._buffer[: err.skip]
                self.corrupt += 1
                yield err
                continue
            except CorruptFrame as err:
                del self._buffer[: err.skip]
                self.corrupt += 1
                yield err
                continue
            del self._buffer[:used]
            self.frames += 1
            yield frame
