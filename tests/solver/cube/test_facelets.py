"""The facelet model against independent 3D geometry, and the group facts every move obeys."""

from __future__ import annotations

import numpy as np
import pytest

from solver.cube.facelets import (
    Cube,
    facelet_order,
    layer_permutation,
    move_permutation,
    net,
    sequence_permutation,
)
from solver.cube.geometry import FACE_FRAMES, Face, rotation_matrix, sticker_positions
from solver.cube.notation import Move, MoveKind, invert, parse

SOLVED3 = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"


def _expected_layer_perm(n: int, face: Face, layer: int) -> np.ndarray:
    """Where each sticker goes, computed by rotating 3D positions (no walker involved)."""
    pos = sticker_positions(n).reshape(-1, 3)
    normal = np.array(FACE_FRAMES[face][0])
    owner = np.repeat(np.array([FACE_FRAMES[g][0] for g in Face]), n * n, axis=0)
    cubie_centre = pos - owner
    in_layer = (cubie_centre @ normal) == (n - 1 - 2 * (layer - 1))
    turned = (rotation_matrix(FACE_FRAMES[face][0], 1) @ pos.T).T
    index = {tuple(p): i for i, p in enumerate(pos.tolist())}
    expected = np.arange(6 * n * n)
    for i in np.flatnonzero(in_layer):
        expected[index[tuple(turned[i].tolist())]] = i
    return expected


@pytest.mark.parametrize("n", range(1, 8))
def test_every_layer_turn_matches_3d_rotation(n: int) -> None:
    for face in Face:
        for layer in range(1, n + 1):
            assert np.array_equal(
                layer_permutation(n, face, layer), _expected_layer_perm(n, face, layer)
            ), (
                n,
                face,
                layer,
            )


def test_known_3x3_states_after_r_and_f() -> None:
    # Kociemba's published facelet strings after R and after F.
    assert Cube.solved(3).apply("R").to_facelets() == (
        "UUFUUFUUFRRRRRRRRRFFDFFDFFDDDBDDBDDBLLLLLLLLLUBBUBBUBB"
    )
    assert Cube.solved(3).apply("F").to_facelets() == (
        "UUUUUULLLURRURRURRFFFFFFFFFRRRDDDDDDLLDLLDLLDBBBBBBBBB"
    )


def _all_moves(n: int) -> list[Move]:
    moves: list[Move] = []
    for face in Face:
        for turns in (1, 2, -1):
            moves.append(Move.outer(face, turns))
            for depth in range(2, n + 1):
                moves.append(Move(MoveKind.WIDE, face, 1, depth, turns))
            for layer in range(2, n + 1):
                moves.append(Move(MoveKind.SLICE, face, layer, layer, turns))
            if n >= 4:
                moves.append(Move(MoveKind.RANGE, face, 2, n - 1, turns))
    for text in ("x", "y", "z", "x2", "y'", "z2"):
        moves.extend(parse(text))
    if n >= 3:
        moves.extend(parse("M E S M2 E' S2"))
    return moves


@pytest.mark.parametrize("n", range(2, 8))
def test_every_move_has_order_4_and_inverse_is_identity(n: int) -> None:
    identity = np.arange(6 * n * n)
    for move in _all_moves(n):
        perm = move_permutation(move, n)
        order = 2 if move.quarter_turns == 2 else 4
        power = identity
        for k in range(1, order + 1):
            power = power[perm]
            if k < order:
                assert not np.array_equal(power, identity), (n, str(move), k)
        assert np.array_equal(power, identity), (n, str(move))
        both = sequence_permutation([move, move.inverse()], n)
        assert np.array_equal(both, identity), (n, str(move))


def test_sexy_move_has_order_6() -> None:
    cube = Cube.solved(3)
    seq = parse("R U R' U'")
    states = [cube]
    for _ in range(6):
        states.append(states[-1].apply(seq))
    assert states[6] == cube
    assert all(s != cube for s in states[1:6])


def test_rotations_and_slices_relations() -> None:
    for n in (3, 5):
        solved = Cube.solved(n)
        # x = R M' L' on odd cubes (M is every inner layer).
        assert solved.apply("x") == solved.apply("R M' L'")
        assert solved.apply("y") == solved.apply("U E' D'")
        assert solved.apply("z") == solved.apply("F S B'")
    four = Cube.solved(4)
    assert four.apply("Rw") == four.apply("R 2R")
    assert four.apply("3Rw") == four.apply("r 3R")
    assert four.apply("2-3Rw") == four.apply("2R 3R")
    assert four.apply("4Rw") == four.apply("x")
    assert four.apply("3r") == four.apply("3Rw")


def test_facelet_string_round_trip_any_n() -> None:
    rng = np.random.default_rng(7)
    for n in range(2, 8):
        cube = Cube.solved(n)
        moves = _all_moves(n)
        for _ in range(30):
            cube = cube.apply([moves[int(rng.integers(len(moves)))]])
        text = cube.to_facelets("scheme")
        assert Cube.from_facelets(text) == cube
        assert len(text) == 6 * n * n


def test_facelet_order_is_kociemba_reading_order() -> None:
    order = facelet_order(3)
    # U1 (top-left of U on the net) is LTR (row 2, col 0) of U; F9 is LTR (0, 2) of F.
    assert order[0] == 0 * 9 + 2 * 3 + 0
    assert order[2 * 9 + 8] == 2 * 9 + 0 * 3 + 2
    assert Cube.solved(3).to_facelets() == SOLVED3


def test_letters_by_centres_after_rotation() -> None:
    rotated = Cube.solved(3).apply("x")
    assert rotated.to_facelets() == SOLVED3  # odd N: letters follow the centres
    assert rotated.to_facelets("scheme") != SOLVED3
    assert rotated.is_solved()


def test_move_after_inverse_sequence_restores() -> None:
    seq = parse("R U2 3Rw' F 2L B2 x M' D")
    cube = Cube.solved(5).apply(seq)
    assert not cube.is_solved()
    assert cube.apply(invert(seq)) == Cube.solved(5)


def test_net_has_all_faces() -> None:
    text = net(Cube.solved(3).apply("R"))
    lines = text.splitlines()
    assert len(lines) == 9
    assert lines[3].split() == ["L", "L", "L", "F", "F", "D", "R", "R", "R", "U", "B", "B"]
    coloured = net(Cube.solved(2), ansi=True)
    assert "\x1b[48;2;" in coloured
