"""The cubie level against seed 001, and conversions."""

from __future__ import annotations

import random

import pytest

from solver.cube.cubie import CubieCube, cubie_layout, permutation_parity
from solver.cube.facelets import Cube
from solver.cube.validate import validate
from solver.errors import InvalidCubeError, UnsupportedError

# Seed 001: the states after R and after F (replaced-by convention: position i holds piece CP[i]).
SEED_R = CubieCube(
    cp=(4, 1, 2, 0, 7, 5, 6, 3),
    co=(2, 0, 0, 1, 1, 0, 0, 2),
    ep=(8, 1, 2, 3, 11, 5, 6, 7, 4, 9, 10, 0),
    eo=(0,) * 12,
)
SEED_F = CubieCube(
    cp=(1, 5, 2, 3, 0, 4, 6, 7),
    co=(1, 2, 0, 0, 2, 1, 0, 0),
    ep=(0, 9, 2, 3, 4, 8, 6, 7, 1, 5, 10, 11),
    eo=(0, 1, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0),
)
# Seed 001's move tables use the other convention: entry i is where the piece at i goes.
SEED_CP_MOVES = {
    "U": [1, 2, 3, 0, 4, 5, 6, 7],
    "D": [0, 1, 2, 3, 7, 4, 5, 6],
    "L": [0, 5, 1, 3, 4, 6, 2, 7],
    "R": [3, 1, 2, 7, 0, 5, 6, 4],
    "F": [4, 0, 2, 3, 5, 1, 6, 7],
    "B": [0, 1, 6, 2, 4, 5, 7, 3],
    "M": [3, 2, 6, 7, 0, 1, 5, 4],
    "E": [1, 2, 3, 0, 5, 6, 7, 4],
    "S": [1, 5, 6, 2, 0, 4, 7, 3],
}
SEED_EP_MOVES = {
    "U": [1, 2, 3, 0, 4, 5, 6, 7, 8, 9, 10, 11],
    "R": [11, 1, 2, 3, 8, 5, 6, 7, 0, 9, 10, 4],
    "F": [0, 8, 2, 3, 4, 9, 6, 7, 5, 1, 10, 11],
    "M": [11, 1, 10, 3, 8, 5, 9, 7, 0, 2, 6, 4],
    "S": [0, 9, 2, 10, 4, 8, 6, 11, 1, 5, 7, 3],
}


def test_states_after_r_and_f_match_seed_001() -> None:
    assert CubieCube().apply("R") == SEED_R
    assert CubieCube().apply("F") == SEED_F


@pytest.mark.parametrize("move", sorted(SEED_CP_MOVES))
def test_seed_tables_are_the_inverse_convention(move: str) -> None:
    state = CubieCube.from_moves(move)
    where_goes = [0] * 8
    for position, piece in enumerate(state.cp):
        where_goes[piece] = position
    assert where_goes == SEED_CP_MOVES[move]
    if move in SEED_EP_MOVES:
        where_goes_e = [0] * 12
        for position, piece in enumerate(state.ep):
            where_goes_e[piece] = position
        assert where_goes_e == SEED_EP_MOVES[move]


def test_move_tables_agree_with_facelets() -> None:
    rng = random.Random(5)
    faces = "URFDLB"
    for _ in range(50):
        seq = " ".join(rng.choice(faces) + rng.choice(["", "2", "'"]) for _ in range(20))
        assert CubieCube().apply(seq).to_cube() == Cube.solved(3).apply(seq)


def test_facelets_cubies_round_trip_1000_random_states() -> None:
    rng = random.Random(2024)
    for _ in range(1000):
        state = CubieCube.random(rng)
        text = state.to_facelets()
        assert CubieCube.from_facelets(text) == state
        assert Cube.from_facelets(text).to_facelets() == text


def test_superflip_is_every_edge_flipped_and_legal() -> None:
    superflip = CubieCube.from_moves("U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2")
    assert superflip.eo == (1,) * 12
    assert superflip.ep == tuple(range(12))
    assert superflip.cp == tuple(range(8)) and superflip.co == (0,) * 8
    assert validate(superflip.to_cube()) == []


def test_group_laws() -> None:
    rng = random.Random(9)
    for _ in range(100):
        a, b, c = (CubieCube.random(rng) for _ in range(3))
        assert (a * b) * c == a * (b * c)
        assert a * a.inverse() == CubieCube()
        assert a.is_solvable()


def test_parity() -> None:
    assert permutation_parity([1, 0, 2]) == 1
    assert permutation_parity([1, 2, 0]) == 0
    r = CubieCube().apply("R")
    assert r.corner_parity() == r.edge_parity() == 1


def test_cubie_layout_any_n() -> None:
    for n in range(2, 8):
        layout = cubie_layout(n)
        stickers = [s for c in layout.corners for s in c]
        stickers += [s for wings in layout.edges for w in wings for s in w]
        stickers += [s for c in layout.centres for s in c]
        assert sorted(stickers) == list(range(6 * n * n))
        assert all(len(w) == n - 2 for w in layout.edges)


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="permute"):
        CubieCube(cp=(0, 0, 2, 3, 4, 5, 6, 7))
    with pytest.raises(UnsupportedError):
        CubieCube.from_cube(Cube.solved(4))
    with pytest.raises(UnsupportedError, match="from_moves"):
        CubieCube().apply("M")
    bad = list(Cube.solved(3).to_facelets())
    bad[8] = "F"
    with pytest.raises(InvalidCubeError):
        CubieCube.from_facelets("".join(bad))
