"""Seed 000's worked examples, cell for cell, and the walker on real geometry."""

from __future__ import annotations

import pytest

from solver.cube.geometry import Face
from solver.cube.walker import (
    Direction,
    Edge,
    EdgeConnectionMap,
    SliceWalker,
    standard_edge_map,
    walk,
)

# The edge connection map of seed 000's worked example (its B face is drawn mirrored).
SEED_MAP = EdgeConnectionMap.parse(
    """
    F.RIGHT -> R.LEFT
    F.TOP -> U.BOTTOM
    U.RIGHT -> R.TOP
    U.TOP -> B.TOP
    B.RIGHT -> R.RIGHT
    B.BOTTOM -> D.BOTTOM
    D.RIGHT -> R.BOTTOM
    D.TOP -> F.BOTTOM
    """.splitlines()
)

BT = Direction.BOTTOM_TO_TOP
TB = Direction.TOP_TO_BOTTOM


@pytest.mark.parametrize(
    ("si", "expected"),
    [
        pytest.param(
            0,
            [
                (Face.F, (0, 3), BT, [(0, 3), (1, 3), (2, 3), (3, 3)], Edge.TOP, 3),
                (Face.U, (0, 3), BT, [(0, 3), (1, 3), (2, 3), (3, 3)], Edge.TOP, 3),
                (Face.B, (3, 3), TB, [(3, 3), (2, 3), (1, 3), (0, 3)], Edge.BOTTOM, 3),
                (Face.D, (0, 3), BT, [(0, 3), (1, 3), (2, 3), (3, 3)], Edge.TOP, 3),
            ],
            id="seed000-N4-F-with-R-SI0",
        ),
        pytest.param(
            2,
            [
                (Face.F, (0, 1), BT, [(0, 1), (1, 1), (2, 1), (3, 1)], Edge.TOP, 1),
                (Face.U, (0, 1), BT, [(0, 1), (1, 1), (2, 1), (3, 1)], Edge.TOP, 1),
                (Face.B, (3, 1), TB, [(3, 1), (2, 1), (1, 1), (0, 1)], Edge.BOTTOM, 1),
                (Face.D, (0, 1), BT, [(0, 1), (1, 1), (2, 1), (3, 1)], Edge.TOP, 1),
            ],
            id="seed000-N4-F-with-R-SI2",
        ),
    ],
)
def test_seed_worked_examples(si: int, expected: list[tuple[object, ...]]) -> None:
    result = walk(4, Face.F, Face.R, si, SEED_MAP)
    got = [(w.face, w.enter, w.direction, list(w.visited), w.exit_edge, w.p) for w in result]
    assert got == expected


def test_get_point_adjacency_and_si_columns() -> None:
    faces = SliceWalker(4, SEED_MAP).calculate_rotation(Face.F, Face.R)
    assert faces[0].get_point(si=0, other_coord=3) == (3, 3)
    assert faces[1].get_point(si=0, other_coord=0) == (0, 3)
    # Seed 000's "SI values on face F": SI=3 is column 0, SI=0 column 3.
    assert [faces[0].get_point(si, 0) for si in range(4)] == [(0, 3), (0, 2), (0, 1), (0, 0)]
    assert faces[0].get_all_points(1) == [(0, 2), (1, 2), (2, 2), (3, 2)]
    with pytest.raises(ValueError, match=r"0\.\.3"):
        faces[0].get_point(4, 0)


def test_standard_map_is_physical() -> None:
    emap = standard_edge_map()
    assert emap.neighbour(Face.F, Edge.RIGHT) == (Face.R, Edge.LEFT, False)
    assert emap.neighbour(Face.U, Edge.TOP) == (Face.B, Edge.TOP, True)
    assert emap.neighbour(Face.D, Edge.TOP) == (Face.F, Edge.BOTTOM, False)
    # On the real cube the slice next to R shows on B's LEFT column (B is seen from behind).
    result = walk(4, Face.F, Face.R, 0, emap)
    assert [w.face for w in result] == [Face.F, Face.U, Face.B, Face.D]
    assert result[2].visited == ((3, 0), (2, 0), (1, 0), (0, 0))


@pytest.mark.parametrize("n", [2, 3, 4, 7])
def test_every_walk_closes_on_real_geometry(n: int) -> None:
    walker = SliceWalker(n)
    for rotating in Face:
        for start in Face:
            if start in (rotating, Face((rotating + 3) % 6)):
                continue
            faces = walker.calculate_rotation(start, rotating)
            assert len({f.face for f in faces}) == 4
            for si in range(n):
                cells = [(f.face, p) for f in faces for p in f.get_all_points(si)]
                assert len(set(cells)) == 4 * n


def test_bad_edge_map_lines_are_rejected() -> None:
    with pytest.raises(ValueError, match="line 1"):
        EdgeConnectionMap.parse(["F.SIDEWAYS -> R.LEFT"])
    with pytest.raises(ValueError, match="already connects"):
        EdgeConnectionMap.parse(["F.RIGHT -> R.LEFT", "F.RIGHT -> U.LEFT"])
