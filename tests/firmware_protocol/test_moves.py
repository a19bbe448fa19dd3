"""Moves as motor codes: the text form, groups, validation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware_protocol.errors import InvalidMoveError
from firmware_protocol.moves import (
    Face,
    Move,
    format_moves,
    groups,
    opposite,
    parse_moves,
    validate_moves,
)


def test_face_codes_are_the_wire_contract() -> None:
    assert [f.name for f in Face] == list("URFDLB")
    assert [int(f) for f in Face] == [0, 1, 2, 3, 4, 5]
    assert [Face(opposite(f)).name for f in Face] == list("DLBURF")


def test_parse_moves() -> None:
    moves = parse_moves("R U' F2 B2' U+D'")
    assert moves == [
        Move(Face.R, 1),
        Move(Face.U, -1),
        Move(Face.F, 2),
        Move(Face.B, -2),
        Move(Face.U, 1, simultaneous_with_next=True),
        Move(Face.D, -1),
    ]
    assert groups(moves) == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 6)]
    assert format_moves(moves) == "R U' F2 B2' U+D'"


def test_parse_depths_as_wide_turns() -> None:
    """A gripper holding k layers is written as SiGN writes the wide turn: Rw, 3Rw'."""
    moves = parse_moves("Rw 3Lw' U+4Dw2")
    assert [(m.motor, m.quarter_turns, m.depth) for m in moves] == [
        (Face.R, 1, 2),
        (Face.L, -1, 3),
        (Face.U, 1, 1),
        (Face.D, 2, 4),
    ]
    assert moves[2].simultaneous_with_next
    assert format_moves(moves) == "Rw 3Lw' U+4Dw2"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param("R X", "column 3", id="unknown-face"),
        pytest.param("R3", "column 1", id="three-turns"),
        pytest.param("r", "column 1", id="lower-case-wide"),
        pytest.param("M", "column 1", id="slice"),
        pytest.param("U+R", "not opposite", id="adjacent-pair"),
        pytest.param("U+D+U", "group of 3", id="triple"),
        pytest.param("U+", "column 3", id="dangling-plus"),
        pytest.param("R 2R", "column 3", id="inner-slice"),
        pytest.param("1Rw", "at least 2 layers", id="wide-of-one"),
        pytest.param("U 17Rw", "column 3: motor R: depth must be 1..16", id="too-deep"),
    ],
)
def test_parse_rejects(text: str, fragment: str) -> None:
    with pytest.raises(InvalidMoveError, match=fragment):
        parse_moves(text)


def test_validate_rejects_open_group_and_missing_motor() -> None:
    with pytest.raises(InvalidMoveError, match="last move"):
        validate_moves([Move(0, 1, simultaneous_with_next=True)])
    with pytest.raises(InvalidMoveError, match="5 motors"):
        validate_moves([Move(Face.B, 1)], motor_count=5)
    with pytest.raises(InvalidMoveError):
        Move(6, 1)
    with pytest.raises(InvalidMoveError):
        Move(0, 3)


moves_text = st.lists(
    st.one_of(
        st.tuples(st.sampled_from("URFDLB"), st.sampled_from(["", "'", "2", "2'"])).map(
            lambda t: t[0] + t[1]
        ),
        st.tuples(
            st.sampled_from(list(Face)),
            st.sampled_from(["", "'", "2", "2'"]),
            st.sampled_from(["", "'", "2", "2'"]),
        ).map(lambda t: f"{t[0].name}{t[1]}+{Face(opposite(t[0])).name}{t[2]}"),
    ),
    max_size=30,
).map(" ".join)


@given(moves_text)
def test_text_round_trip(text: str) -> None:
    moves = parse_moves(text)
    assert format_moves(moves) == text
    assert parse_moves(format_moves(moves)) == moves
