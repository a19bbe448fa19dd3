"""Cycle tracing (seed 002) for edges and corners, the Old Pochmann solver built on it, and
``cuberobot trace``."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping

import numpy as np
import pytest

from robot.cli import main
from solver.api import solve
from solver.cube.cubie import CubieCube
from solver.cube.facelets import DEFAULT_SCHEME, Cube
from solver.cube.geometry import Face
from solver.cube.notation import parse
from solver.engines.common.stage_search import MOVES
from solver.engines.trace import (
    CORNER_LETTERS,
    EDGE_LETTERS,
    letter_position,
    piece_letters,
    sticker_index,
    trace,
    trace_corners,
    trace_edges,
)
from solver.errors import InvalidCubeError, UnsupportedError


def _random_cubes(seed: int, count: int) -> list[Cube]:
    rng = random.Random(seed)
    return [CubieCube.random(rng).to_cube() for _ in range(count)]


def _colours(letter: str) -> str:
    return "-".join(DEFAULT_SCHEME.colours[letter_position(x)[0]] for x in piece_letters(letter))


# --- letters ---------------------------------------------------------------------------------

# seed 002's edge notation data (white up, green front): letter -> (main, secondary) colour
SEED_EDGE_COLOURS = {
    "a": "white-blue", "b": "white-red", "c": "white-green", "d": "white-orange",
    "e": "orange-white", "f": "orange-green", "g": "orange-yellow", "h": "orange-blue",
    "i": "green-white", "j": "green-red", "k": "green-yellow", "l": "green-orange",
    "m": "red-white", "n": "red-blue", "o": "red-yellow", "p": "red-green",
    "q": "blue-white", "r": "blue-orange", "s": "blue-yellow", "t": "blue-red",
    "u": "yellow-green", "v": "yellow-red", "w": "yellow-blue", "x": "yellow-orange",
}  # fmt: skip


@pytest.mark.parametrize("letter", list(EDGE_LETTERS))
def test_edge_letters_are_seed_002s(letter: str) -> None:
    assert _colours(letter) == SEED_EDGE_COLOURS[letter]


def test_buffer_b_is_white_red() -> None:
    assert letter_position("b") == (Face.U, 1, 2)  # the U sticker next to R
    assert piece_letters("b") == ("b", "m")


# Speffz corners: the three letters of each corner slot
CORNER_SLOTS = {
    "ULB": "AER", "UBR": "BNQ", "URF": "CJM", "UFL": "DFI",
    "DLF": "GLU", "DFR": "KPV", "DRB": "OTW", "DBL": "HSX",
}  # fmt: skip


@pytest.mark.parametrize(("slot", "letters"), CORNER_SLOTS.items())
def test_corner_letters(slot: str, letters: str) -> None:
    for letter in letters:
        faces = {letter_position(x)[0].name for x in piece_letters(letter)}
        assert faces == set(slot)
        assert set(piece_letters(letter)) == set(letters)
    (top_or_bottom,) = [x for x in letters if letter_position(x)[0] in (Face.U, Face.D)]
    assert top_or_bottom == {"ULB": "A", "UBR": "B", "URF": "C", "UFL": "D"}.get(
        slot, {"DLF": "U", "DFR": "V", "DRB": "W", "DBL": "X"}.get(slot)
    )


def test_letters_are_distinct_stickers() -> None:
    indices = {sticker_index(x) for x in EDGE_LETTERS + CORNER_LETTERS}
    assert len(indices) == 48
    with pytest.raises(ValueError, match="sticker letter"):
        letter_position("y")


# --- tracing ---------------------------------------------------------------------------------


def test_solved_cube_has_no_cycles() -> None:
    result = trace(Cube.solved(3))
    for piece_trace in (result.edges, result.corners):
        assert piece_trace.cycles == ((),)
        assert piece_trace.misoriented == ()
        assert piece_trace.is_complete and piece_trace.stickers_traced == 24
        assert piece_trace.to_dict()["cycles"] == []
    assert not result.parity


@pytest.mark.parametrize(
    ("moves", "edges", "corners"),
    [
        # traced by hand: U carries UF to UL, UL to UB, UB to UR, UR to UF
        ("U", [["a", "d", "c"]], [["D", "C", "B"]]),
        # R carries FR to UR (its F sticker up), DR to FR, BR to DR
        ("R", [["j", "v", "t"]], [["B", "J", "V", "T", "B"]]),
    ],
)
def test_single_turns(moves: str, edges: list[list[str]], corners: list[list[str]]) -> None:
    result = trace(Cube.solved(3).apply(moves))
    assert result.edges.to_dict()["cycles"] == edges
    assert result.corners.to_dict()["cycles"] == corners
    assert result.parity  # a quarter turn is an odd permutation


def _cube_from_cycles(mapping: Mapping[str, str]) -> Cube:
    """The state where the sticker on letter ``p`` belongs on ``mapping[p]`` (the piece's other
    stickers follow); letters not mentioned stay solved."""
    flat = np.array(Cube.solved(3).flat)
    for here, there in mapping.items():
        for a, b in zip(piece_letters(here), piece_letters(there), strict=True):
            flat[sticker_index(a)] = letter_position(b)[0]
    return Cube(flat, 3)


def test_seed_002_example() -> None:
    """Seed 002's example result: a first cycle from the buffer without its closing letter,
    a second cycle written with its start and closing letters, and a flipped edge last (also in
    ``flippedEdges``). The seed's example cannot come from a real cube (t and n are one edge,
    and so are g and x; t is written in two cycles), so the same shape is built with distinct
    edges: t u c o r g, then d j w d, then the flipped a q."""
    mapping = {"b": "t", "t": "u", "u": "c", "c": "o", "o": "r", "r": "g", "g": "m"}
    mapping |= {"d": "j", "j": "w", "w": "d", "a": "q"}
    cube = _cube_from_cycles(mapping)
    result = trace_edges(cube)
    assert result.to_dict()["cycles"] == [
        ["t", "u", "c", "o", "r", "g"],
        ["d", "j", "w", "d"],
        ["a", "q"],
    ]
    assert result.to_dict()["flipped"] == ["a", "q"]
    assert result.to_dict()["total_pieces"] == 24 and result.is_complete
    assert result.targets == tuple("tucorgdjwdaq")
    assert not result.parity
    assert result.letters() == "tu co rg dj wd aq"


def test_next_cycle_starts_at_the_first_untraced_letter() -> None:
    # two 3-cycles besides the buffer: c -> l -> s, and k -> x -> o on the edges DF, DL, DR;
    # the second starts at g, the first letter of those edges (DL's L sticker), where v (the
    # partner of o) belongs
    cube = _cube_from_cycles({"c": "l", "l": "s", "s": "c", "k": "x", "x": "o", "o": "k"})
    assert trace_edges(cube).to_dict()["cycles"] == [["c", "l", "s", "c"], ["g", "v", "u", "g"]]


def test_flipped_buffer_and_twisted_corners() -> None:
    cube = _cube_from_cycles({"b": "m", "a": "q", "A": "E", "C": "J"})
    result = trace(cube)
    assert result.edges.to_dict()["cycles"] == [["a", "q"]]
    assert result.edges.buffer_twist == 1
    assert result.corners.to_dict()["twisted"] == ["C", "J"]
    assert result.corners.buffer_twist == 1
    assert not result.parity


def test_a_cycle_that_also_turns_its_start_closes_on_another_sticker() -> None:
    # UL's sticker d goes to t, t to x, and x back to UL flipped (e): the cycle closes on e
    # (the buffer is flipped too, as the flips must add up to an even number)
    cube = _cube_from_cycles({"d": "t", "t": "x", "x": "e", "b": "m"})
    result = trace_edges(cube)
    assert result.to_dict()["cycles"] == [["d", "t", "x", "e"]]
    assert result.cycles[0] == () and result.buffer_twist == 1


def _simulate(cube: Cube, letters: str, buffer: str) -> Cube:
    """Swap the buffer sticker with each target sticker in turn (their piece mates follow)."""
    flat = np.array(cube.flat)
    for target in letters:
        for a, b in zip(piece_letters(buffer), piece_letters(target), strict=True):
            i, j = sticker_index(a), sticker_index(b)
            flat[i], flat[j] = flat[j], flat[i]
    return Cube(flat, 3)


@pytest.mark.parametrize(("edge_buffer", "corner_buffer"), [("b", "A"), ("c", "C"), ("u", "V")])
def test_swapping_the_traced_letters_solves(edge_buffer: str, corner_buffer: str) -> None:
    """The trace's meaning, independent of any algorithm: swapping the buffer's sticker with
    each letter in turn solves every piece of that kind."""
    for cube in _random_cubes(31, 150):
        result = trace(cube, edge_buffer, corner_buffer)
        edges_done = _simulate(cube, "".join(result.edges.targets), edge_buffer)
        corners_done = _simulate(edges_done, "".join(result.corners.targets), corner_buffer)
        assert corners_done.is_solved()
        assert result.edges.parity == result.corners.parity


def test_trace_refuses_impossible_and_other_cubes() -> None:
    flipped = _cube_from_cycles({"a": "q"})  # a single flipped edge
    with pytest.raises(InvalidCubeError):
        trace(flipped)
    with pytest.raises(UnsupportedError, match="3x3"):
        trace(Cube.solved(4))
    with pytest.raises(UnsupportedError, match="edges letters"):
        trace_edges(Cube.solved(3), buffer="B")
    assert trace_corners(Cube.solved(3).apply("R"), buffer="V").buffer == "V"


# --- the Old Pochmann solver -----------------------------------------------------------------


def test_solved_and_one_move() -> None:
    assert solve(Cube.solved(3), engine="trace").moves == ()
    for move in MOVES:
        solution = solve(Cube.solved(3).apply([move]), engine="trace")
        assert solution.moves == (move.inverse(),)


@pytest.mark.slow
def test_trace_solver_solves_1000_random_states() -> None:
    for cube in _random_cubes(2002, 1000):
        solution = solve(cube, engine="trace")
        assert cube.apply(solution.moves).is_solved()


def test_one_swap_per_letter() -> None:
    for cube in _random_cubes(5, 30):
        result = trace(cube)
        solution = solve(cube, engine="trace")
        names = [s.name for s in solution.stages]
        assert names == (["edges", "parity", "corners"] if result.parity else ["edges", "corners"])
        assert [m for s in solution.stages for m in s.moves] == list(solution.moves)
        edges = solution.stages[0].detail
        corners = solution.stages[-1].detail
        assert [step["letter"] for step in edges["steps"]] == list(result.edges.targets)
        assert [step["letter"] for step in corners["steps"]] == list(result.corners.targets)
        assert edges["swap"] == "R U R' U' R' F R2 U' R' U' R U R' F'"
        assert solution.stats["parity"] == result.parity


def test_special_states_solve() -> None:
    for mapping in (
        {"b": "m", "a": "q"},  # flipped buffer
        {"A": "E", "C": "J"},  # twisted buffer
        {"A": "R", "B": "Q"},
        {"d": "e", "c": "i"},  # the helper UL flipped
        # DFR (the corner helper) and DLF twisted opposite ways
        {"V": piece_letters("V")[1], "U": piece_letters("U")[2]},
    ):
        cube = _cube_from_cycles(mapping)
        solution = solve(cube, engine="trace")
        assert cube.apply(solution.moves).is_solved(), mapping


def test_solver_buffers_are_fixed() -> None:
    cube = _random_cubes(1, 1)[0]
    with pytest.raises(UnsupportedError, match="Old Pochmann"):
        solve(cube, engine="trace", edge_buffer="c")


# --- cuberobot trace -------------------------------------------------------------------------


def test_cli_text(capsys: pytest.CaptureFixture[str]) -> None:
    cube = Cube.solved(3).apply(parse("U"))
    assert main(["trace", cube.to_facelets()]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("edges   (buffer b): ad c ")
    assert "cycles: a d c" in out[0]
    assert out[1].startswith("corners (buffer A): DC B ")
    assert out[2] == "parity: yes"


def test_cli_json_and_buffers(capsys: pytest.CaptureFixture[str]) -> None:
    cube = _random_cubes(8, 1)[0]
    assert main(["trace", cube.to_facelets(), "--format", "json", "--corner-buffer", "c"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data == trace(cube, "b", "C").to_dict()
    assert data["corners"]["buffer"] == "C"


def test_cli_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "UUU"]) == 2
    assert "not a facelet string" in capsys.readouterr().err
    impossible = _cube_from_cycles({"a": "q"}).to_facelets()
    assert main(["trace", impossible]) == 1
    assert "flip" in capsys.readouterr().err.lower()
    assert main(["trace", Cube.solved(3).to_facelets(), "--edge-buffer", "z"]) == 2
