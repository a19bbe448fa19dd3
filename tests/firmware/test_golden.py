"""The golden frame vectors shared by the Python codec and the C firmware agree with
PROTOCOL.md section 10, and the codec produces every one of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from firmware_protocol import codec
from firmware_protocol.codec import Frame, decode_frame, encode_frame

PACKAGE = Path(codec.__file__).parent
GOLDEN_TXT = PACKAGE / "golden_frames.txt"
PROTOCOL_MD = PACKAGE / "PROTOCOL.md"

Row = tuple[str, int, bytes, bytes, int]


def _protocol_rows() -> list[Row]:
    section = PROTOCOL_MD.read_text(encoding="utf-8").split("## 10. Golden frames", 1)[1]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 6 or cells[0] in ("name", "---"):
            continue
        name, _, seq, payload, crc, wire = cells
        rows.append(
            (
                name,
                int(seq),
                bytes.fromhex(payload.strip("`").replace("—", "")),
                bytes.fromhex(wire.strip("`")),
                int(crc.strip("`"), 16),
            )
        )
    return rows


def _vector_rows() -> list[tuple[Row, int]]:
    rows = []
    for line in GOLDEN_TXT.read_text(encoding="ascii").splitlines():
        if not line or line.startswith("#"):
            continue
        name, seq, kind, crc, payload, wire = line.split()
        row = (
            name,
            int(seq),
            b"" if payload == "-" else bytes.fromhex(payload),
            bytes.fromhex(wire),
            int(crc, 16),
        )
        rows.append((row, int(kind, 16)))
    return rows


def test_vector_file_matches_protocol_md() -> None:
    assert [row for row, _ in _vector_rows()] == _protocol_rows()


@pytest.mark.parametrize(("row", "kind"), _vector_rows(), ids=[row[0] for row, _ in _vector_rows()])
def test_codec_produces_each_vector(row: Row, kind: int) -> None:
    _name, seq, payload, wire, crc = row
    assert encode_frame(Frame(kind, seq, payload)) == wire
    frame, used = decode_frame(wire)
    assert (frame.type, frame.seq, frame.payload, used) == (kind, seq, payload, len(wire))
    body = bytes((len(payload),)) + seq.to_bytes(2, "little") + bytes((kind,)) + payload
    assert codec.crc16_ccitt(body) == crc
