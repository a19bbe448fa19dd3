"""Piece orbits: derived by search, checked against counts and against scrambled cubes."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.cube.facelets import Cube
from vision.pieces import OrbitKind, orbits

EXPECTED = {
    2: {"corner": 1},
    3: {"corner": 1, "midge": 1, "fixed": 1},
    4: {"corner": 1, "wing": 1, "centre": 1},
    5: {"corner": 1, "wing": 1, "midge": 1, "centre": 2, "fixed": 1},
    6: {"corner": 1, "wing": 2, "centre": 4},
    7: {"corner": 1, "wing": 2, "midge": 1, "centre": 6, "fixed": 1},
}


@pytest.mark.parametrize("n", sorted(EXPECTED))
def test_orbit_census(n: int) -> None:
    found: dict[str, int] = {}
    covered: list[int] = []
    for orb in orbits(n):
        found[orb.kind.value] = found.get(orb.kind.value, 0) + 1
        covered += orb.slots.reshape(-1).tolist()
        per_slot = {OrbitKind.CORNER: 3, OrbitKind.MIDGE: 2}.get(orb.kind, 1)
        assert orb.tuples.shape[0] == orb.size * per_slot
    assert found == EXPECTED[n]
    assert sorted(covered) == list(range(6 * n * n))  # every sticker in exactly one orbit


def _pieces_real(cube: Cube) -> bool:
    flat = cube.flat
    for orb in orbits(cube.n):
        seen = [tuple(flat[t].tolist()) for t in orb.tuples]
        # every slot shows, at one of its tuples, a piece of the orbit
        pieces = {tuple(p) for p in orb.pieces.tolist()}
        for slot in range(orb.size):
            tuples = [i for i in range(orb.tuples.shape[0]) if orb.slot_of[i] == slot]
            if not any(seen[i] in pieces for i in tuples):
                return False
        if orb.kind in (OrbitKind.CORNER, OrbitKind.MIDGE, OrbitKind.WING):
            shown = []
            for slot in range(orb.size):
                tuples = [i for i in range(orb.tuples.shape[0]) if orb.slot_of[i] == slot]
                shown.append(next(seen[i] for i in tuples if seen[i] in pieces))
            if len(set(shown)) != orb.size:
                return False
    return True


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 6), seed=st.integers(0, 10_000))
def test_scrambled_cubes_show_real_distinct_pieces(n: int, seed: int) -> None:
    rng = random.Random(seed)
    faces = "URFDLB"
    layer = (lambda: str(rng.randint(1, n // 2))) if n > 3 else (lambda: "")
    moves = " ".join(
        f"{layer()}{rng.choice(faces)}{rng.choice(['', chr(39), '2'])}" for _ in range(25)
    )
    cube = Cube.solved(n).apply(moves)
    assert _pieces_real(cube)


def test_a_mirrored_corner_is_not_a_piece() -> None:
    cube = Cube.solved(3)
    flat = cube.flat.copy()
    corner = orbits(3)[0].slots[0]
    flat[corner[1]], flat[corner[2]] = flat[corner[2]], flat[corner[1]]
    assert not _pieces_real(Cube(flat, 3))
    assert np.array_equal(Cube.solved(3).flat, cube.flat)


def test_the_24_orientations_come_from_the_cube_model() -> None:
    """Issue 11: vision names colours with solver.cube.facelets' orientations (one copy)."""
    from solver.cube.facelets import ORIENTATIONS, Cube, legal_centre_arrangements
    from vision import references

    assert references.legal_centre_arrangements is legal_centre_arrangements
    assert len(ORIENTATIONS) == 24 and ORIENTATIONS[0] == ""
    states = {Cube.solved(3).apply(r) for r in ORIENTATIONS}
    assert len(states) == 24
    assert len(set(legal_centre_arrangements())) == 24
