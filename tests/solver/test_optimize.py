"""The optimiser: same state, never longer, and the reductions it promises."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import Metric, Move, MoveKind, count, format_moves, parse
from solver.optimize import optimize


@pytest.mark.parametrize(
    ("text", "n", "expected"),
    [
        pytest.param("R R", 3, "R2", id="merge"),
        pytest.param("R R'", 3, "", id="cancel"),
        pytest.param("R L R", 3, "R2 L", id="across-axis"),
        pytest.param("R U U' R'", 3, "", id="cascade"),
        pytest.param("R2 R2 F", 3, "F", id="half-cancel"),
        pytest.param("x R", 3, "R x", id="rotation-to-end"),
        pytest.param("y F y'", 3, "R", id="rotation-conjugate"),
        pytest.param("M M", 3, "M2", id="slice-merge"),
        pytest.param("Rw R'", 4, "2R", id="wide-minus-outer"),
        pytest.param("2R 3R", 4, "2-3Rw", id="adjacent-slices"),
        pytest.param("R 2R 3R L", 5, "3Rw L", id="parallel-layers"),
    ],
)
def test_reductions(text: str, n: int, expected: str) -> None:
    result = optimize(text, n)
    assert format_moves(result) == expected
    assert Cube.solved(n).apply(result) == Cube.solved(n).apply(text)


def _moves(n: int) -> st.SearchStrategy[list[Move]]:
    faces = st.sampled_from(list(Face))
    turns = st.sampled_from([1, 2, -1, -2])
    layer_moves = st.builds(
        lambda f, lo, span, t: Move.block(f, lo, min(n, lo + span), t),
        faces,
        st.integers(1, n),
        st.integers(0, 2),
        turns,
    )
    rotations = st.builds(
        lambda f, t: Move(MoveKind.ROTATION, f, 0, 0, t),
        st.sampled_from([Face.R, Face.U, Face.F]),
        turns,
    )
    middles = st.builds(
        lambda f, t: Move(MoveKind.MIDDLE, f, 0, 0, t),
        st.sampled_from([Face.L, Face.D, Face.F]),
        turns,
    )
    return st.lists(st.one_of(layer_moves, layer_moves, rotations, middles), max_size=25)


@pytest.mark.parametrize("n", [3, 4, 5])
def test_optimiser_properties(n: int) -> None:
    @settings(max_examples=150, deadline=None)
    @given(_moves(n))
    def check(moves: list[Move]) -> None:
        result = optimize(moves, n)
        assert Cube.solved(n).apply(result) == Cube.solved(n).apply(moves)
        assert len(result) <= len(moves)
        assert count(result, Metric.HTM, n) <= count(moves, Metric.HTM, n)
        assert optimize(result, n) == result or len(optimize(result, n)) <= len(result)

    check()


def test_rejects_moves_the_size_lacks() -> None:
    from solver.errors import UnsupportedError

    with pytest.raises(UnsupportedError):
        optimize(parse("M"), 2)
