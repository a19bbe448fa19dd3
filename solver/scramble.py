"""Scrambles: uniform random states for 3x3, random-move scrambles of WCA length for other N.

A 3x3 random-state scramble draws a uniformly random solvable cubie state (not random moves);
its move form is the inverse of a solution of that state, found by the two-phase engine.
Other sizes get random-move scrambles of the WCA lengths (2x2 11, 4x4 40, 5x5 60, 6x6 80,
7x7 100; beyond that 20 per layer pair), never turning the same axis twice in a row with a
redundant move, with wide moves up to half the cube.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from solver.cube.cubie import CubieCube, cubie_layout
from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import OPPOSITE, Move, MoveKind
from solver.cube.validate_nxn import centre_orbits, orbit_wings

__all__ = [
    "WCA_LENGTHS",
    "Scramble",
    "random_moves",
    "random_state",
    "random_state_nxn",
    "scramble",
]

WCA_LENGTHS = {2: 11, 3: 25, 4: 40, 5: 60, 6: 80, 7: 100}


@dataclass(frozen=True, slots=True)
class Scramble:
    """A scramble: the moves (may be empty only for a solved state) and the cube they give."""

    n: int
    moves: tuple[Move, ...]
    cube: Cube


def random_state(seed: int | None = None) -> CubieCube:
    """A uniformly random solvable 3x3 state."""
    return CubieCube.random(random.Random(seed))


def random_state_nxn(n: int, seed: int | None = None) -> Cube:
    """A uniformly random reachable N×N state (N >= 4), built piece by piece.

    On a big cube with same-coloured centres every combination of these is reachable:
    corners in any permutation with any twist of sum 0 (odd N: together with the middle edges,
    a uniformly random 3x3 state, the middle centres fixed), the 24 wings of each orbit in any
    permutation (a wing keeps its handedness), and each 24-piece centre orbit in any
    arrangement of its 4 pieces of each colour. Every such state is equally likely.
    """
    if n < 4:
        raise ValueError(f"random_state_nxn builds cubes of size 4 and up, not {n}")
    rng = random.Random(seed)
    flat = Cube.solved(n).flat.copy()
    small = CubieCube.random(rng).to_cube().flat
    layout, layout3 = cubie_layout(n), cubie_layout(3)
    if n % 2 == 0:  # no middle edges: any corner permutation
        cp = list(range(8))
        rng.shuffle(cp)
        small = CubieCube(cp=tuple(cp), co=CubieCube.random(rng).co).to_cube().flat
    for big, three in zip(layout.corners, layout3.corners, strict=True):
        flat[list(big)] = small[list(three)]
    if n % 2:
        mid = (n - 2) // 2
        for wings, edge3 in zip(layout.edges, layout3.edges, strict=True):
            flat[list(wings[mid])] = small[list(edge3[0])]
    solved = Cube.solved(n).flat
    for j in range(1, (n - 2) // 2 + 1):
        prim, sec = orbit_wings(n, j)
        order = list(range(24))
        rng.shuffle(order)
        flat[prim] = solved[prim[order]]
        flat[sec] = solved[sec[order]]
    for cells in centre_orbits(n).values():
        if cells.size == 24:
            colours = solved[cells].tolist()
            rng.shuffle(colours)
            flat[cells] = colours
    return Cube(flat, n)


def random_moves(n: int, length: int | None = None, seed: int | None = None) -> list[Move]:
    """A random-move scramble for an ``n`` cube (WCA length by default)."""
    if n < 2:
        raise ValueError(f"cube size must be at least 2, got {n}")
    rng = random.Random(seed)
    total = length if length is not None else WCA_LENGTHS.get(n, 20 * (n - 2))
    max_depth = n // 2
    moves: list[Move] = []
    # Layers already turned on the current axis (a run of moves on one axis commutes: never
    # repeat a layer set within a run, which would merge into one move).
    axis_run: set[tuple[Face, int]] = set()
    last_axis: Face | None = None
    while len(moves) < total:
        face = rng.choice(list(Face))
        depth = rng.randint(1, max_depth) if n >= 4 else 1
        axis = min(face, OPPOSITE[face])
        if axis != last_axis:
            axis_run = set()
        key = (face, depth)
        if key in axis_run:
            continue
        axis_run.add(key)
        last_axis = axis
        turns = rng.choice((1, 2, -1))
        kind = MoveKind.OUTER if depth == 1 else MoveKind.WIDE
        moves.append(Move(kind, face, 1, depth, turns))
    return moves


def scramble(n: int = 3, seed: int | None = None, length: int | None = None) -> Scramble:
    """A scramble for an ``n`` cube: random-state for 3x3, random moves otherwise."""
    if n == 3 and length is None:
        state = random_state(seed)
        # deferred: the move form needs the two-phase engine and its tables
        from solver.engines.twophase.engine import scramble_moves

        moves = tuple(scramble_moves(state))
        return Scramble(3, moves, state.to_cube())
    seq = random_moves(n, length, seed)
    return Scramble(n, tuple(seq), Cube.solved(n).apply(seq))
