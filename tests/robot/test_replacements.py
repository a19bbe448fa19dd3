"""Turning a face without a motor: the table is correct, and the search proves it shortest."""

from __future__ import annotations

import pytest

from robot.replacements import D_REPLACEMENTS, face_rotations, replacement_for, search_replacements
from solver.cost import CostModel
from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import Move, parse

SUFFIX = {1: "", 2: "2", 3: "'"}
FIVE = [Face.U, Face.R, Face.F, Face.L, Face.B]


@pytest.mark.parametrize("n", [2, 3, 4, 5])
@pytest.mark.parametrize("q", [1, 2, 3])
def test_table_entries_equal_the_d_turn_on_every_size(q: int, n: int) -> None:
    target = Cube.solved(n).apply("D" + SUFFIX[q])
    for text in D_REPLACEMENTS[q]:
        moves = parse(text)
        assert all(m.face is not Face.D for m in moves)
        assert Cube.solved(n).apply(moves) == target, text


def test_table_lengths() -> None:
    assert {len(parse(t)) for t in D_REPLACEMENTS[1]} == {13}
    assert {len(parse(t)) for t in D_REPLACEMENTS[3]} == {13}
    assert {len(parse(t)) for t in D_REPLACEMENTS[2]} == {9}


def test_search_finds_the_half_turn_at_length_nine() -> None:
    result = search_replacements(Move.outer(Face.D, 2), FIVE, max_depth=9)
    assert result.length == 9
    texts = {" ".join(str(m) for m in seq) for seq in result.sequences}
    assert texts <= set(D_REPLACEMENTS[2])
    for seq in result.sequences:
        assert Cube.solved(3).apply(seq) == Cube.solved(3).apply("D2")


def test_search_finds_nothing_shorter_than_nine_for_a_quarter_turn() -> None:
    result = search_replacements(Move.outer(Face.D, 1), FIVE, max_depth=9)
    assert result.length is None and result.sequences == ()


@pytest.mark.slow
def test_search_proves_no_quarter_turn_replacement_within_twelve() -> None:
    """With the table's verified 13-move sequences this proves 13 is the minimum (≈15 s)."""
    result = search_replacements(Move.outer(Face.D, 1), FIVE, max_depth=12)
    assert result.length is None


def test_search_of_a_face_that_is_available_is_one_move() -> None:
    result = search_replacements(Move.outer(Face.U, -1), FIVE, max_depth=3)
    assert result.length == 1
    assert [str(m) for m in result.sequences[0]] == ["U'"]


def test_there_are_24_rotations() -> None:
    rotations = face_rotations()
    assert len(rotations) == 24
    assert len({tuple(sorted(r.items())) for r in rotations}) == 24


@pytest.mark.parametrize("face", list(Face))
@pytest.mark.parametrize("q", [1, 2, 3])
def test_any_missing_face_is_replaced_by_relabelling(face: Face, q: int) -> None:
    available = [f for f in Face if f is not face]
    moves = replacement_for(face, q, available, CostModel())
    assert all(m.face is not face for m in moves)
    assert Cube.solved(3).apply(moves) == Cube.solved(3).apply(face.name + SUFFIX[q])


def test_two_missing_faces_have_no_replacement() -> None:
    with pytest.raises(LookupError, match="no known sequence"):
        replacement_for(Face.D, 1, [Face.R, Face.F, Face.L, Face.B], CostModel())


def test_cost_model_picks_among_equal_lengths() -> None:
    # With pairs free and half turns expensive, the cheapest D2 has the fewest half-turn groups.
    slow_halves = CostModel(quarter_turn_s=0.1, half_turn_s=1.0, pair_extra_s=0.0, settle_s=0.0)
    chosen = replacement_for(Face.D, 2, FIVE, slow_halves)
    costs = [slow_halves.estimate(parse(t)) for t in D_REPLACEMENTS[2]]
    assert slow_halves.estimate(chosen) == pytest.approx(min(costs))
