"""Typed messages: encode → decode round trips for every type, and malformed payloads."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware_protocol.codec import Frame, decode_frame
from firmware_protocol.codes import MAX_MOVE_DEPTH, move_flags
from firmware_protocol.errors import MalformedMessage
from firmware_protocol.messages import (
    MAX_MOVES_PER_FRAME,
    Ack,
    Clear,
    Enable,
    ErrorCode,
    ErrorReport,
    EStop,
    Executed,
    FirmwareState,
    Heartbeat,
    Hello,
    Hold,
    Home,
    Ident,
    Message,
    MessageType,
    Moves,
    Nak,
    NakReason,
    Resume,
    Status,
    StatusFlags,
    StatusRequest,
    WireMove,
    encode_message,
    parse_message,
)

u8 = st.integers(0, 0xFF)
u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFF_FFFF)
turns = st.sampled_from((-2, -1, 1, 2))


@st.composite
def move_batches(draw: st.DrawFn) -> Moves:
    count = draw(st.integers(1, MAX_MOVES_PER_FRAME))
    first = draw(st.integers(1, 0xFFFF_FFFF - count))
    moves = []
    for k in range(count):
        flags = move_flags(
            simultaneous_with_next=draw(st.booleans()), depth=draw(st.integers(1, MAX_MOVE_DEPTH))
        )
        moves.append(WireMove(first + k, draw(st.integers(0, 5)), draw(turns), flags))
    return Moves(tuple(moves))


messages_strategy = st.one_of(
    st.builds(Hello, nonce=u32, watchdog_ms=u16, protocol_version=u8),
    move_batches(),
    st.builds(Home, motor_mask=st.integers(1, 0x3F)),
    st.builds(Enable, enabled_mask=st.integers(0, 0x3F)),
    st.just(Clear()),
    st.just(EStop()),
    st.just(Hold()),
    st.just(Resume()),
    st.just(StatusRequest()),
    st.just(Heartbeat()),
    st.builds(
        Ident,
        nonce=u32,
        protocol_version=u8,
        firmware_version=st.tuples(u8, u8, u8),
        motor_count=u8,
        queue_depth=u8,
        max_batch=u8,
        watchdog_ms=u16,
        boot_id=u32,
        last_received=u32,
        started_upto=u32,
        last_executed=u32,
        state=st.sampled_from(FirmwareState),
        error=st.sampled_from(ErrorCode),
    ),
    st.builds(Ack, seq=u16, last_received=u32, queue_free=u8),
    st.builds(Nak, seq=u16, reason=st.sampled_from(NakReason), detail=u32),
    st.builds(Executed, last_executed=u32, started_upto=u32, queue_free=u8),
    st.builds(
        Status,
        boot_id=u32,
        state=st.sampled_from(FirmwareState),
        error=st.sampled_from(ErrorCode),
        error_motor=u8,
        flags=st.sampled_from([StatusFlags(v) for v in range(8)]),
        enabled_mask=u8,
        queue_free=u8,
        expected_seq=u16,
        last_received=u32,
        started_upto=u32,
        last_executed=u32,
        uptime_ms=u32,
    ),
    st.builds(ErrorReport, code=st.sampled_from(ErrorCode), motor=u8, move_index=u32, detail=u16),
)


@given(messages_strategy, u16)
def test_message_round_trip(message: Message, seq: int) -> None:
    wire = encode_message(message, seq)
    frame, used = decode_frame(wire)
    assert used == len(wire)
    assert frame.seq == seq and frame.type == message.TYPE
    assert parse_message(frame) == message


def _moves_payload(*moves: tuple[int, int, int, int]) -> bytes:
    out = bytes((len(moves),))
    for index, motor, quarter, flags in moves:
        out += index.to_bytes(4, "little") + bytes((motor, quarter & 0xFF, flags))
    return out


MALFORMED = [
    pytest.param(0x7E, b"", id="unknown-host-type"),
    pytest.param(0xFE, b"", id="unknown-firmware-type"),
    pytest.param(MessageType.HEARTBEAT, b"\x00", id="heartbeat-with-payload"),
    pytest.param(MessageType.HELLO, b"\x01\x00\x00\x00\x01", id="hello-short"),
    pytest.param(MessageType.MOVES, b"", id="moves-empty"),
    pytest.param(MessageType.MOVES, b"\x00", id="moves-count-zero"),
    pytest.param(MessageType.MOVES, _moves_payload((1, 0, 1, 0))[:-1], id="moves-truncated"),
    pytest.param(MessageType.MOVES, _moves_payload((0, 0, 1, 0)), id="moves-index-zero"),
    pytest.param(MessageType.MOVES, _moves_payload((1, 6, 1, 0)), id="moves-motor-6"),
    pytest.param(MessageType.MOVES, _moves_payload((1, 0, 0, 0)), id="moves-zero-turns"),
    pytest.param(MessageType.MOVES, _moves_payload((1, 0, 3, 0)), id="moves-three-turns"),
    pytest.param(MessageType.MOVES, _moves_payload((1, 0, 1, 0x20)), id="moves-unknown-flag"),
    pytest.param(MessageType.MOVES, _moves_payload((1, 0, 1, 0x80)), id="moves-reserved-bit-7"),
    pytest.param(
        MessageType.MOVES, _moves_payload((1, 0, 1, 0), (3, 1, 1, 0)), id="moves-index-gap"
    ),
    pytest.param(MessageType.HOME, b"\x00", id="home-empty-mask"),
    pytest.param(MessageType.HOME, b"\x40", id="home-motor-6"),
    pytest.param(MessageType.ENABLE, b"\x80", id="enable-motor-7"),
    pytest.param(MessageType.IDENT, bytes(30), id="ident-short"),
    pytest.param(MessageType.IDENT, bytes(29) + b"\x09\x00", id="ident-bad-state"),
    pytest.param(MessageType.NAK, b"\x00\x00\x63\x00\x00\x00\x00", id="nak-unknown-reason"),
    pytest.param(MessageType.STATUS, bytes(4) + b"\x00\x00\xff\x80" + bytes(20), id="status-flag"),
    pytest.param(MessageType.ERROR, b"\x09\x00" + bytes(6), id="error-unknown-code"),
    pytest.param(MessageType.EXECUTED, bytes(10), id="executed-long"),
]


@pytest.mark.parametrize(("kind", "payload"), MALFORMED)
def test_malformed_payloads(kind: int, payload: bytes) -> None:
    with pytest.raises(MalformedMessage) as info:
        parse_message(Frame(int(kind), 9, payload))
    assert info.value.frame_type == kind
    assert info.value.seq == 9


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        pytest.param({"index": 0, "motor": 0, "quarter_turns": 1}, "reserved", id="index-0"),
        pytest.param({"index": 1, "motor": 6, "quarter_turns": 1}, "motor", id="motor-6"),
        pytest.param({"index": 1, "motor": 0, "quarter_turns": 0}, "quarter", id="turns-0"),
        pytest.param({"index": 2**32, "motor": 0, "quarter_turns": 1}, "index", id="index-big"),
    ],
)
def test_wire_move_rejects_bad_values(kwargs: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        WireMove(**kwargs)


def test_moves_frame_limits() -> None:
    with pytest.raises(ValueError):
        Moves(())
    with pytest.raises(ValueError):
        Moves(tuple(WireMove(i + 1, 0, 1) for i in range(MAX_MOVES_PER_FRAME + 1)))
    biggest = Moves(tuple(WireMove(i + 1, 0, 1) for i in range(MAX_MOVES_PER_FRAME)))
    assert len(encode_message(biggest, 1)) <= 264


@pytest.mark.parametrize("depth", [1, 2, 3, 7, MAX_MOVE_DEPTH])
def test_move_depth_travels_in_flags_bits_1_to_4(depth: int) -> None:
    """The gripper depth is bits 1..4 of the flags byte (layers - 1), beside bit 0."""
    first = WireMove(7, 1, -1, move_flags(simultaneous_with_next=True, depth=depth))
    moves = Moves((first, WireMove(8, 4, 2, move_flags(depth=depth))))
    payload = moves.pack()
    assert payload[1 + 6] == ((depth - 1) << 1) | 1 and payload[1 + 7 + 6] == (depth - 1) << 1
    back = parse_message(Frame(int(MessageType.MOVES), 3, payload))
    assert isinstance(back, Moves) and back == moves
    assert [m.depth for m in back.moves] == [depth, depth]
    assert back.moves[0].simultaneous_with_next and not back.moves[1].simultaneous_with_next


@pytest.mark.parametrize("depth", [0, MAX_MOVE_DEPTH + 1])
def test_move_depth_out_of_range_is_refused(depth: int) -> None:
    with pytest.raises(ValueError, match=r"depth must be 1\.\.16"):
        move_flags(depth=depth)
