"""Validation: each single fault class is caught with the right message, naming the place."""

from __future__ import annotations

import random

import pytest

from solver.cube.cubie import CubieCube
from solver.cube.facelets import Cube
from solver.cube.validate import check, validate
from solver.errors import InvalidCubeError

SOLVED = Cube.solved(3).to_facelets()


def _with(changes: dict[int, str], base: str = SOLVED) -> Cube:
    text = list(base)
    for index, letter in changes.items():
        text[index] = letter
    return Cube.from_facelets("".join(text))


def _swap(a: int, b: int, base: str = SOLVED) -> Cube:
    text = list(base)
    text[a], text[b] = text[b], text[a]
    return Cube.from_facelets("".join(text))


# Kociemba indices: U9=8, R1=9, F3=20 form corner URF; U6=5/R2=10 edge UR; U8=7/F2=19 edge UF.
@pytest.mark.parametrize(
    ("cube", "codes", "fragment"),
    [
        pytest.param(
            _with({8: "F"}),
            {"colour_count", "corner_invalid"},
            "green (F) appears 10",
            id="colour-count",
        ),
        pytest.param(
            _with({8: "F"}),
            {"colour_count", "corner_invalid"},
            "corner at URF shows green/red/green",
            id="no-such-corner",
        ),
        pytest.param(_swap(8, 9), {"corner_mirrored"}, "mirror image", id="mirrored-corner"),
        pytest.param(
            _with({4: "F", 22: "U"}),
            {"centre_arrangement"},
            "centres are not arranged",
            id="swapped-centres",
        ),
        pytest.param(
            _with({4: "F"}),
            {"colour_count", "centre_duplicate"},
            "centres of U and F are both green",
            id="two-centres-one-colour",
        ),
        pytest.param(
            CubieCube(co=(1,) + (0,) * 7).to_cube(), {"twist"}, "twisted", id="twisted-corner"
        ),
        pytest.param(
            CubieCube(eo=(1,) + (0,) * 11).to_cube(), {"flip"}, "flipped", id="flipped-edge"
        ),
        pytest.param(
            CubieCube(ep=(1, 0, *range(2, 12))).to_cube(), {"parity"}, "swapped", id="parity"
        ),
        pytest.param(_swap(5, 10), {"flip"}, "flipped", id="flipped-by-stickers"),
    ],
)
def test_single_faults(cube: Cube, codes: set[str], fragment: str) -> None:
    problems = validate(cube)
    assert {p.code for p in problems} == codes
    assert any(fragment in p.message for p in problems), [p.message for p in problems]
    with pytest.raises(InvalidCubeError) as info:
        check(cube)
    assert info.value.problems == problems


def test_piece_seen_twice_and_missing() -> None:
    # Put a copy of the UF edge's stickers into UR, and UR's into UF twice over: UF seen twice.
    cube = _with({5: "U", 10: "F"})  # UR now shows white/green = the UF edge
    problems = validate(cube)
    codes = {p.code for p in problems}
    assert "edge_duplicate" in codes and "edge_missing" in codes
    dup = next(p for p in problems if p.code == "edge_duplicate")
    assert "white/green" in dup.message and "UR" in dup.message and "UF" in dup.message


def test_corner_seen_twice() -> None:
    # Copy corner UFL's three colours into URF's slot (same rotation).
    cube = _with({8: "U", 9: "F", 20: "L"})
    codes = {p.code for p in validate(cube)}
    assert "corner_duplicate" in codes and "corner_missing" in codes


def test_every_random_state_and_rotation_is_valid() -> None:
    rng = random.Random(11)
    for _ in range(200):
        cube = CubieCube.random(rng).to_cube()
        assert validate(cube) == []
    assert validate(Cube.solved(3).apply("x y2 z'")) == []


@pytest.mark.parametrize("n", [2, 4, 5, 6, 7])
def test_big_cubes(n: int) -> None:
    cube = Cube.solved(n)
    rng = random.Random(n)
    moves = (
        ["R", "U", "F", "L'", "D2", "B", "Rw", "3Fw'", "2R", "Uw2"]
        if n >= 4
        else ["R", "U", "F'", "D2"]
    )
    for _ in range(40):
        cube = cube.apply(rng.choice(moves))
    assert validate(cube) == []
    text = list(cube.to_facelets("scheme"))
    # Recolour one sticker: counts break and a piece becomes impossible.
    text[0] = "U" if text[0] != "U" else "D"
    codes = {p.code for p in validate(Cube.from_facelets("".join(text)))}
    assert "colour_count" in codes
    assert codes & {"corner_invalid", "corner_mirrored", "corner_duplicate", "corner_missing"}


def test_big_cube_twisted_corner_and_wings() -> None:
    four = Cube.solved(4)
    flat = four.flat.copy()
    from solver.cube.cubie import cubie_layout

    layout = cubie_layout(4)
    a, b, c = layout.corners[0]
    flat[a], flat[b], flat[c] = four.flat[b], four.flat[c], four.flat[a]
    assert {p.code for p in validate(Cube(flat, 4))} == {"twist"}
    flat = four.flat.copy()
    (w1a, w1b), _ = layout.edges[0]
    flat[w1a], flat[w1b] = 3, 1  # yellow/red wing at UR: a DR wing seen twice
    codes = {p.code for p in validate(Cube(flat, 4))}
    assert "wing_count" in codes
