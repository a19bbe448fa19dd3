"""6x6 and 7x7: the inner ring of centres by the smaller cube's staged search (ring.py), and the
progress display of slow big-cube table builds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from solver import api
from solver.cube.geometry import Face
from solver.cube.notation import Move
from solver.engines.nxn import ring, tables
from solver.engines.nxn.centres import interior
from solver.engines.nxn.sim import geometry
from solver.errors import UnsupportedError
from solver.scramble import random_state_nxn


def _small_moves(count: int, seed: int) -> tuple[Move, ...]:
    rng = np.random.default_rng(seed)
    return tuple(
        Move.block(Face(int(rng.integers(6))), 1, int(rng.integers(1, 3)), int(t))
        for t in rng.choice([1, 2, -1], size=count)
    )


@pytest.mark.parametrize("n", ring.SIZES)
def test_the_inner_stickers_turn_as_the_smaller_cube(n: int) -> None:
    """Every sticker of the projection, not only the centres: the mapped moves act on the N
    cube's inner stickers exactly as the smaller cube's moves act on it."""
    state = random_state_nxn(n, 3).flat.copy()
    small = ring.project(state, n)
    moves = _small_moves(40, n)
    geometry(n - 2).apply(small, moves)
    geometry(n).apply(state, ring.to_big(moves))
    assert np.array_equal(ring.project(state, n), small)
    assert ring.to_big((Move.block(Face.R, 1, 2, 1),)) == (Move.block(Face.R, 1, 3, 1),)


def test_the_projection_is_for_six_and_seven_only() -> None:
    assert ring.inner_coords(6) == (0, 2, 3, 5)
    assert ring.inner_coords(7) == (0, 2, 3, 4, 6)
    with pytest.raises(UnsupportedError, match="N in"):
        ring.inner_coords(8)


@pytest.mark.parametrize(("n", "seed"), [(6, 0), (7, 5)])
def test_ring_centres_solve_the_inner_ring_first_and_then_every_face(n: int, seed: int) -> None:
    cube = random_state_nxn(n, seed)
    found = ring.ring_centres(cube.flat, n, ("", "x"), keep=2)
    assert len(found) == 2 and found[0][0] <= found[1][0]
    assert {found[0][1], found[1][1]} == {"", "x"}
    for cost, rotation, relabelled, stages in found:
        assert [s.name for s in stages] == [
            "inner centres",
            "first centre",
            "wing parity",
            "centres",
        ]
        assert cost == sum(int(s.detail["obtm"]) for s in stages)
        start = cube.apply(rotation).flat.copy() if rotation else cube.flat.copy()
        after_ring = start.copy()
        geometry(n).apply(after_ring, stages[0].moves)
        small = ring.project(after_ring, n).reshape(6, n - 2, n - 2)
        inner = small[:, 1:-1, 1:-1].reshape(6, -1)
        assert (inner == inner[:, :1]).all()  # the inner ring: every face one colour
        assert len(stages[0].moves) <= 40
        geometry(n).apply(start, [m for s in stages for m in s.moves])
        for face in Face:  # every face one colour, relabelled to its own
            assert (start[interior(n, face)] == start[interior(n, face)][0]).all()
            assert (relabelled[interior(n, face)] == face).all()


def test_engine_starts_a_seven_with_the_inner_ring_unless_told_commutators() -> None:
    cube = random_state_nxn(7, 11)
    staged = api.solve(cube)
    assert staged.stages[0].name == "inner centres"
    assert len(staged.stages[0].detail["stages"]) == 3
    assert staged.stats["verified"] and cube.apply(staged.moves).is_solved()
    commutators = api.solve(cube, centres="commutators", stages_only=True, centre_tries=1)
    assert commutators.stages[0].name == "first centre"


def test_a_slow_table_build_is_shown_and_a_fast_one_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown: list[tuple[str, int, int]] = []

    def build(report: tables.Report) -> tables.Table:
        for done in (3, 6, 10):
            report(done)
        return np.zeros(10, dtype=np.int8)

    tables.load_table("quick", 10, build, tmp_path, lambda *a: shown.append(a))
    assert shown == []
    monkeypatch.setattr(tables, "PROGRESS_AFTER_S", 0.0)
    tables.load_table("slow", 10, build, tmp_path, lambda *a: shown.append(a))
    assert shown[0] == ("slow", 3, 10) and shown[-1] == ("slow", 10, 10)
    tables._LOADED.clear()
