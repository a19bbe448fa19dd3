"""Orbit-level validation of big cubes: real states pass, each deliberate fault is named."""

from __future__ import annotations

import numpy as np
import pytest

from solver.cube.cubie import cubie_layout
from solver.cube.facelets import Cube
from solver.cube.validate import validate
from solver.cube.validate_nxn import centre_orbits, orbit_wings
from solver.scramble import random_moves, random_state_nxn


def _codes(flat: np.ndarray, n: int) -> dict[str, str]:
    return {p.code: p.where for p in validate(Cube(flat, n))}


@pytest.mark.parametrize("n", range(4, 10))
def test_random_moves_and_random_states_are_valid(n: int) -> None:
    for seed in range(3):
        assert validate(Cube.solved(n).apply(random_moves(n, 60, seed=seed))) == []
        assert validate(random_state_nxn(n, seed)) == []


@pytest.mark.parametrize("n", [4, 5, 6, 7])
def test_orbits_partition_the_pieces(n: int) -> None:
    cells = np.concatenate(list(centre_orbits(n).values()))
    assert sorted(cells.tolist()) == sorted(i for f in cubie_layout(n).centres for i in f)
    wings = [np.concatenate(orbit_wings(n, j)) for j in range(1, (n - 2) // 2 + 1)]
    assert len(set(np.concatenate(wings).tolist()) if wings else []) == 48 * len(wings)


@pytest.mark.parametrize("n", [4, 5, 6, 7])
def test_a_wing_flipped_in_place_is_named(n: int) -> None:
    flat = random_state_nxn(n, 1).flat.copy()
    prim, sec = orbit_wings(n, 1)
    flat[prim[5]], flat[sec[5]] = flat[sec[5]], flat[prim[5]]
    codes = _codes(flat, n)
    assert "wing_mirrored" in codes
    assert "UL#" in codes["wing_mirrored"]  # slot 5: edge UL (index 2), side 1


def test_mirrored_wing_names_the_two_places() -> None:
    n = 4
    flat = Cube.solved(n).flat.copy()
    prim, sec = orbit_wings(n, 1)
    flat[prim[0]], flat[sec[0]] = flat[sec[0]], flat[prim[0]]  # UR wing 1 flipped in place
    problems = [p for p in validate(Cube(flat, n)) if p.code == "wing_mirrored"]
    assert len(problems) == 1 and problems[0].where == "UR#1,UR#2"


@pytest.mark.parametrize("n", [5, 6, 7])
def test_centre_stickers_swapped_between_orbits_are_named(n: int) -> None:
    flat = random_state_nxn(n, 2).flat.copy()
    x, oblique = centre_orbits(n)[(1, 1)], centre_orbits(n)[(1, 2)]
    a = int(x[0])
    b = next(int(i) for i in oblique if flat[i] != flat[a])
    flat[a], flat[b] = flat[b], flat[a]
    places = {p.where for p in validate(Cube(flat, n)) if p.code == "centre_orbit"}
    assert places == {"centres(1, 1)", "centres(1, 2)"}


@pytest.mark.parametrize("n", [5, 7])
def test_midge_faults_are_named(n: int) -> None:
    mid = (n - 2) // 2
    edges = cubie_layout(n).edges
    flat = random_state_nxn(n, 3).flat.copy()
    a, b = edges[0][mid]
    flat[a], flat[b] = flat[b], flat[a]
    assert "midge_flip" in _codes(flat, n)
    flat = random_state_nxn(n, 3).flat.copy()
    (a1, b1), (a2, b2) = edges[0][mid], edges[1][mid]
    flat[[a1, b1, a2, b2]] = flat[[a2, b2, a1, b1]]
    assert "midge_parity" in _codes(flat, n)


def test_a_twisted_corner_is_still_found_on_big_cubes() -> None:
    n = 6
    flat = random_state_nxn(n, 4).flat.copy()
    c = list(cubie_layout(n).corners[0])
    flat[c] = flat[[c[1], c[2], c[0]]]
    assert "twist" in _codes(flat, n)
