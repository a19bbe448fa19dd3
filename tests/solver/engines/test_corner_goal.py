"""The corner goal rows (group ``cornergoal``): row p is the distance from the corners to the
corner states phase 2 solves within p turns, a bound on the phase-1 turns a node still needs
when its phase 2 may take at most p; the search prunes with it and must find what it found
without it."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from solver.cube.cubie import CubieCube
from solver.cube.notation import parse
from solver.engines.twophase import coord as C
from solver.engines.twophase._twophase import search as _c_search
from solver.engines.twophase.engine import ALL_FACES, PHASE2_SLACK_ALL, get_solver
from solver.engines.twophase.tables.builders import GOAL_ROWS, _phase2_corner_depth


def _entries(corners: np.ndarray, twist: np.ndarray) -> np.ndarray:
    t = get_solver().tables
    sym = t.corner_sym[corners].astype(np.int64)
    return t.corner_classidx[corners].astype(np.int64) * C.N_TWIST + t.twist_conj[twist, sym]


def _row(p: int, i: np.ndarray) -> np.ndarray:
    t = get_solver().tables
    table = t.corner_twist_depth if p == 0 else t.corner_goal_depth[p - 1]
    packed = table[i >> 1]
    return np.where(i & 1, packed >> 4, packed & 15).astype(np.int64)


def test_phase2_corner_depths() -> None:
    """Solved is 0; a phase-2 turn changes the distance by at most one and every other
    permutation has one closer; none needs more than 13 (Kociemba's phase-2 corners)."""
    t = get_solver().tables
    d = _phase2_corner_depth(t.corners_move).astype(np.int64)
    assert d[0] == 0 and (d[1:] > 0).all() and d.max() == 13
    children = d[t.corners_move[:, list(C.PHASE2_MOVES)].astype(np.int64)]
    assert (np.abs(children - d[:, None]) <= 1).all()
    assert (children.min(axis=1)[1:] == d[1:] - 1).all()


def test_goal_rows_are_distances_to_their_goal() -> None:
    """In each row the goal states (twist 0, corners within p phase-2 turns) are 0 and no
    other state is; a turn changes an entry by at most one and every other state has a turn
    one closer; the rows shrink with p, by at most one a row; the largest entries are
    recorded."""
    t = get_solver().tables
    p2 = _phase2_corner_depth(t.corners_move)
    rng = np.random.default_rng(11)
    corners = rng.integers(0, C.N_CORNERS, 4000)
    twist = rng.integers(0, C.N_TWIST, 4000)
    twist[:1500] = 0  # plenty of states with their twist solved, some of them goal states
    corners[:500] = rng.choice(np.nonzero(p2 <= 1)[0], 500)
    corners[500:1000] = rng.choice(np.nonzero(p2 <= 4)[0], 500)
    i = _entries(corners, twist)
    before = _row(0, i)
    for p in range(1, GOAL_ROWS + 1):
        d = _row(p, i)
        goal = (twist == 0) & (p2[corners] <= p)
        assert goal.any() and (d[goal] == 0).all() and (d[~goal] > 0).all()
        children = np.stack(
            [
                _row(
                    p,
                    _entries(t.corners_move[corners, m].astype(np.int64), t.twist_move[twist, m]),
                )
                for m in range(C.N_MOVE)
            ]
        )
        assert (np.abs(children - d) <= 1).all()
        assert (children.min(axis=0)[d > 0] == d[d > 0] - 1).all()
        assert (d <= before).all() and (d >= before - 1).all()
        before = d
        assert int(t.corner_goal_max[p]) == int(
            np.maximum(t.corner_goal_depth[p - 1] & 15, t.corner_goal_depth[p - 1] >> 4).max()
        )
    assert int(t.corner_goal_max[0]) == 11


def _run(
    starts: list[Any], tables: tuple[np.ndarray, ...], length: int
) -> tuple[int, list[int], int]:
    """The kernel's first solution within length (budget 0): direction, moves, phase-1 nodes."""
    found = _c_search(tables, starts, length, 0.0, 60.0, 10, None, PHASE2_SLACK_ALL)
    return found[0], found[1], int(found[2]["nodes_phase1"])


def test_search_finds_the_shortest_solutions_it_found_without_the_bound() -> None:
    """Rows of zeros (and largest entries of 0) never prune. Searched with each, states a
    short scramble away have the same shortest solution length (a solution at it, none
    below: that search proves it exhaustively, and with the rows in fewer phase-1 nodes)."""
    solver = get_solver()
    arrays = solver.tables.search_arrays()
    rows = {id(solver.tables.corner_goal_depth), id(solver.tables.corner_goal_max)}
    off = tuple(np.zeros_like(a) if id(a) in rows else a for a in arrays)
    rng = random.Random(5)
    names = list(C.MOVE_NAMES)
    fewer = 0
    for _ in range(6):
        scramble = " ".join(rng.choice(names) for _ in range(rng.randint(8, 11)))
        cube = CubieCube().apply(parse(scramble))
        starts = [solver._directions(cube, ALL_FACES, 1)[0][2]]  # the cube as it is

        length = len(_run(starts, off, 20)[1])
        while length > 0 and _run(starts, off, length - 1)[0] >= 0:
            length -= 1
        with_rows = _run(starts, arrays, length)
        assert with_rows[0] >= 0 and len(with_rows[1]) == length, scramble
        assert cube.apply(parse(" ".join(C.MOVE_NAMES[m] for m in with_rows[1]))).is_solved()
        if length > 0:
            none_on, none_off = _run(starts, arrays, length - 1), _run(starts, off, length - 1)
            assert none_on[0] == -1 and none_off[0] == -1, scramble
            assert none_on[2] <= none_off[2]
            fewer += none_on[2] < none_off[2]
    assert fewer > 0
