"""The robot search's corner goal (group ``axialgoal``): for p = 3..8 phase-2 groups, the
distance in groups from the corners to the corner states phase 2 solves within p groups, all
rows in one byte an entry. The robot search prunes with it and must find the same fastest
solutions as without it."""

from __future__ import annotations

import dataclasses
import random

import numpy as np

from solver.cost import DEFAULT_COST_MODEL
from solver.cube.cubie import CubieCube
from solver.cube.notation import parse
from solver.engines.twophase import coord as C
from solver.engines.twophase._twophase import search as _c_search
from solver.engines.twophase.engine import ALL_FACES, _cost_tuple, get_solver
from solver.engines.twophase.tables.builders import (
    AX_GOAL_FIRST,
    AX_GOAL_LAST,
    _phase2_corner_depth,
    compose,
)

#: bits set in each byte
_BITS = np.array([bin(x).count("1") for x in range(256)])


def _entries(corners: np.ndarray, twist: np.ndarray) -> np.ndarray:
    t = get_solver().tables
    sym = t.corner_sym[corners].astype(np.int64)
    return t.corner_classidx[corners].astype(np.int64) * C.N_TWIST + t.twist_conj[twist, sym]


def _row(p: int, i: np.ndarray) -> np.ndarray:
    """Row p's entries, decoded as the kernel does (ax_goal_fails())."""
    e = get_solver().axial_tables().corner_goal[i].astype(np.int64)
    return (e & 7) + _BITS[e >> p]


def test_rows_are_group_distances_to_their_goal() -> None:
    """In each row the goal states (twist 0, corners within p phase-2 groups) are 0 and no
    other state is; a group changes an entry by at most one and every other state has a group
    one closer; the rows shrink with p, by at most one a row; the largest entries are
    recorded, and none of the rows before the first."""
    solver = get_solver()
    t, axial = solver.tables, solver.axial_tables()
    assert axial.corner_goal.shape == (C.N_CORNER_CLASS * C.N_TWIST,)
    cm = compose(t.corners_move)
    tm = compose(t.twist_move)
    p2 = _phase2_corner_depth(cm, C.PHASE2_AXIAL)
    assert p2[0] == 0 and (p2[1:] > 0).all()
    rng = np.random.default_rng(13)
    corners = rng.integers(0, C.N_CORNERS, 3000)
    twist = rng.integers(0, C.N_TWIST, 3000)
    twist[:1200] = 0
    corners[:400] = rng.choice(np.nonzero(p2 <= 3)[0], 400)
    corners[400:800] = rng.choice(np.nonzero(p2 <= 6)[0], 400)
    i = _entries(corners, twist)
    before = None
    for p in range(AX_GOAL_FIRST, AX_GOAL_LAST + 1):
        d = _row(p, i)
        goal = (twist == 0) & (p2[corners] <= p)
        assert goal.any() and (d[goal] == 0).all() and (d[~goal] > 0).all()
        children = np.stack(
            [_row(p, _entries(cm[corners, k], tm[twist, k])) for k in range(C.N_AXIAL)]
        )
        assert (np.abs(children - d) <= 1).all()
        assert (children.min(axis=0)[d > 0] == d[d > 0] - 1).all()
        if before is not None:
            assert (d <= before).all() and (d >= before - 1).all()
        before = d
        everything = _row(p, np.arange(axial.corner_goal.size))
        assert int(axial.corner_goal_max[p]) == int(everything.max())
    assert not axial.corner_goal_max[:AX_GOAL_FIRST].any()


def _fastest(search_arrays: tuple[np.ndarray, ...], cube: CubieCube) -> tuple[float, int]:
    """The robot search run to its end on the cube as it is: its robot time and phase-1
    nodes."""
    solver = get_solver()
    start = solver._directions(cube, ALL_FACES, 1)[0][2]
    index, moves, stats = _c_search(
        solver.tables.search_arrays(),
        [start],
        26,
        60.0,
        60.0,
        10,
        _cost_tuple(DEFAULT_COST_MODEL),
        99,
        search_arrays,
    )
    assert index == 0 and stats["exhausted"]
    found = [C.move_of_index(x) for x in moves]
    assert cube.apply(found).is_solved()
    return round(DEFAULT_COST_MODEL.estimate(found), 9), int(stats["nodes_phase1"])


def test_search_finds_the_fastest_solutions_it_found_without_the_bound() -> None:
    """Largest entries of 0 never test. Searched to the end with each, states a short
    scramble away get solutions of the same robot time, with the bound in fewer phase-1
    nodes."""
    axial = get_solver().axial_tables()
    off = dataclasses.replace(axial, corner_goal_max=np.zeros_like(axial.corner_goal_max))
    rng = random.Random(11)
    names = list(C.MOVE_NAMES)
    fewer = 0
    for _ in range(6):
        scramble = " ".join(rng.choice(names) for _ in range(rng.randint(8, 11)))
        cube = CubieCube().apply(parse(scramble))
        with_goal, nodes_on = _fastest(axial.search_arrays(), cube)
        without, nodes_off = _fastest(off.search_arrays(), cube)
        assert with_goal == without, scramble
        assert nodes_on <= nodes_off, scramble
        fewer += nodes_on < nodes_off
    assert fewer > 0
