"""Notation: parsing, printing, errors with columns, inverses and metrics."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import (
    MAX_EXPANDED_MOVES,
    MAX_NESTING,
    Metric,
    Move,
    MoveKind,
    count,
    format_moves,
    invert,
    parse,
)
from solver.errors import NotationError, UnsupportedError


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        pytest.param("R U R' U'", "R U R' U'", id="basic"),
        pytest.param("R2 L2' F'", "R2 L2' F'", id="half-turns"),
        pytest.param("RUR'U'", "R U R' U'", id="no-spaces"),
        pytest.param("Rw r 3Rw 3r", "Rw r 3Rw 3r", id="wide"),
        pytest.param("2R 3L'", "2R 3L'", id="inner-slices"),
        pytest.param("2-3Rw 2-3r2", "2-3Rw 2-3r2", id="ranges"),
        pytest.param("M E' S2 x y' z2", "M E' S2 x y' z2", id="slices-rotations"),
        pytest.param("(R U)3", "R U R U R U", id="repeat"),
        pytest.param("(R U)'", "U' R'", id="inverse-group"),
        pytest.param("((R)2 U)2", "R R U R R U", id="nested"),
        pytest.param("R’ U2’", "R' U2'", id="typographic-prime"),
        pytest.param("1R 1Rw", "R R", id="layer-one"),
        pytest.param("", "", id="empty"),
    ],
)
def test_parse_and_print(text: str, printed: str) -> None:
    moves = parse(text)
    assert format_moves(moves) == printed
    assert format_moves(parse(printed)) == printed


@pytest.mark.parametrize(
    ("text", "column", "token"),
    [
        pytest.param("R U Q", 5, "Q", id="unknown-letter"),
        pytest.param("R (U", 3, "(", id="unclosed"),
        pytest.param("R U)", 4, ")", id="unmatched-close"),
        pytest.param("2M", 1, "2M", id="numbered-M"),
        pytest.param("3x", 1, "3x", id="numbered-rotation"),
        pytest.param("R 3-2Rw", 3, "3-2Rw", id="backward-range"),
        pytest.param("R U+", 4, "+", id="junk-suffix"),
        pytest.param("R 0R", 3, "0R", id="layer-zero"),
    ],
)
def test_errors_name_column_and_token(text: str, column: int, token: str) -> None:
    with pytest.raises(NotationError) as info:
        parse(text)
    assert info.value.column == column
    assert info.value.token == token
    assert f"column {column}" in str(info.value)


def test_moves_that_a_size_lacks_are_refused() -> None:
    with pytest.raises(UnsupportedError, match="N >= 3"):
        Cube.solved(2).apply("M")
    with pytest.raises(UnsupportedError, match="layer 4"):
        Cube.solved(3).apply("4Rw")


def test_inverse_sequence() -> None:
    assert format_moves(invert(parse("R U2 F' 3Rw2'"))) == "3Rw2 F U2 R'"


@pytest.mark.parametrize(
    ("text", "n", "htm", "qtm", "stm", "etm"),
    [
        pytest.param("R U R' U'", 3, 4, 4, 4, 4, id="sexy"),
        pytest.param("R2 U2", 3, 2, 4, 2, 2, id="halves"),
        pytest.param("M2 U M2 U2 M2 U M2", 3, 11, 20, 7, 7, id="slices"),
        pytest.param("x R y", 3, 1, 1, 1, 3, id="rotations"),
        pytest.param("Rw 2R 2-3Rw", 5, 5, 5, 3, 3, id="big"),
    ],
)
def test_metrics(text: str, n: int, htm: int, qtm: int, stm: int, etm: int) -> None:
    moves = parse(text)
    assert count(moves, Metric.HTM, n) == htm
    assert count(moves, Metric.QTM, n) == qtm
    assert count(moves, Metric.STM, n) == stm
    assert count(moves, "etm", n) == etm


def _move_strategy() -> st.SearchStrategy[Move]:
    faces = st.sampled_from(list(Face))
    turns = st.sampled_from([1, 2, -1, -2])
    outer = st.builds(lambda f, t: Move(MoveKind.OUTER, f, 1, 1, t), faces, turns)
    wide = st.builds(
        lambda f, d, t, low: Move(MoveKind.WIDE, f, 1, d, t, low),
        faces,
        st.integers(2, 6),
        turns,
        st.booleans(),
    )
    slice_ = st.builds(
        lambda f, k, t: Move(MoveKind.SLICE, f, k, k, t), faces, st.integers(2, 6), turns
    )
    range_ = st.builds(
        lambda f, a, b, t, low: Move(MoveKind.RANGE, f, a, a + b, t, low),
        faces,
        st.integers(2, 4),
        st.integers(1, 3),
        turns,
        st.booleans(),
    )
    middle = st.builds(
        lambda f, t: Move(MoveKind.MIDDLE, f, 0, 0, t),
        st.sampled_from([Face.L, Face.D, Face.F]),
        turns,
    )
    rotation = st.builds(
        lambda f, t: Move(MoveKind.ROTATION, f, 0, 0, t),
        st.sampled_from([Face.R, Face.U, Face.F]),
        turns,
    )
    return st.one_of(outer, wide, slice_, range_, middle, rotation)


@given(st.lists(_move_strategy(), max_size=30))
def test_print_parse_round_trip(moves: list[Move]) -> None:
    text = format_moves(moves)
    assert parse(text) == moves
    assert format_moves(parse(text)) == text


@given(st.text(alphabet="RUFDLBrwM'2()3 -xq", max_size=20))
def test_parser_raises_only_notation_errors(text: str) -> None:
    try:
        moves = parse(text)
    except NotationError:
        return
    assert format_moves(parse(format_moves(moves))) == format_moves(moves)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        pytest.param("(" * 1000 + "R" + ")" * 1000, "nested more than", id="deep-nesting"),
        pytest.param("(((R)1000)1000)1000", "expands to more than", id="huge-expansion"),
        pytest.param("(R U)1000 " * 300, "expands to more than", id="many-groups"),
        pytest.param("R " * (MAX_EXPANDED_MOVES + 1), "more than", id="long-plain"),
    ],
)
def test_hostile_sequences_are_refused_not_crashed(text: str, reason: str) -> None:
    with pytest.raises(NotationError) as info:
        parse(text)
    assert reason in info.value.reason
    assert len(str(info.value)) < 400  # the message quotes an excerpt, not the whole input


def test_caps_leave_legitimate_sequences_alone() -> None:
    assert len(parse("(" * MAX_NESTING + "R" + ")" * MAX_NESTING)) == 1
    assert len(parse("(R U R' U')25")) == 100
    assert len(parse("((R)100)100")) == 10_000 < MAX_EXPANDED_MOVES
