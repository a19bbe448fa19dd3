"""The optimal 2x2 engine: every solution solves the cube and is optimal."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from solver import api
from solver.cube.facelets import Cube
from solver.cube.notation import Metric, Move, count
from solver.engines import pocket
from solver.errors import NoSolutionError, OptionError
from solver.scramble import random_moves

#: the number of 2x2 positions at each HTM distance (God's number 11)
HTM_COUNTS = [1, 9, 54, 321, 1847, 9992, 50136, 227536, 870072, 1887748, 623800, 2644]


def _brute_force_depth(cube: Cube, limit: int) -> int:
    """Shortest HTM solution length by plain iterative deepening (short scrambles only)."""
    moves = [Move.outer(f, t) for f in pocket._FACES for t in (1, 2, -1)]
    for depth in range(limit + 1):
        for seq in itertools.product(moves, repeat=depth):
            if any(a.face == b.face for a, b in itertools.pairwise(seq)):
                continue
            if cube.apply(list(seq)).is_solved():
                return depth
    raise AssertionError("deeper than the limit")


def test_htm_table_has_the_known_distance_counts() -> None:
    table = pocket.load_pocket_table("htm")
    assert np.bincount(table.dist).tolist() == HTM_COUNTS


@pytest.mark.parametrize("seed", range(40))
def test_random_states_solved_optimally(seed: int) -> None:
    cube = Cube.solved(2).apply(random_moves(2, 20, seed=seed))
    solution = api.solve(cube)
    assert solution.engine == "pocket"
    assert cube.apply(solution.moves).is_solved()
    _, held = pocket._held(cube)
    assert solution.htm == pocket.load_pocket_table("htm").dist[pocket.state_index(held)]
    assert solution.htm <= 11


@pytest.mark.parametrize("seed", range(8))
def test_short_scrambles_match_brute_force(seed: int) -> None:
    cube = Cube.solved(2).apply(random_moves(2, 4, seed=100 + seed))
    assert api.solve(cube).htm == _brute_force_depth(cube, 4)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(10))
def test_qtm_option_is_optimal_in_quarter_turns(seed: int) -> None:
    cube = Cube.solved(2).apply(random_moves(2, 20, seed=seed))
    solution = api.solve(cube, metric="qtm")
    assert cube.apply(solution.moves).is_solved()
    _, held = pocket._held(cube)
    assert solution.qtm == pocket.load_pocket_table("qtm").dist[pocket.state_index(held)] <= 14
    assert count(solution.moves, Metric.QTM, 2) <= 14


def test_max_length_is_honoured() -> None:
    cube = Cube.solved(2).apply("R U R' U' F2 U R2")
    with pytest.raises(NoSolutionError):
        api.solve(cube, max_length=2)


def test_damaged_cache_file_is_rebuilt(tmp_path: Path) -> None:
    path = pocket.table_path(tmp_path, "htm")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"garbage")
    pocket._LOADED.clear()
    table = pocket.load_pocket_table("htm", tmp_path)
    assert table.dist[0] == 0 and path.stat().st_size > pocket.N_STATES


@pytest.mark.parametrize("faces", ["URFLB", "DLB", "ULB", "RFD", "UDRLF"])
@pytest.mark.parametrize("seed", range(6))
def test_allowed_faces_are_honoured_at_the_optimal_length(faces: str, seed: int) -> None:
    cube = Cube.solved(2).apply(random_moves(2, 11, seed=seed))
    optimal = api.solve(cube).htm
    solution = api.solve(cube, faces=faces)
    assert {m.face.name for m in solution.moves} <= set(faces)
    assert cube.apply(solution.moves).is_solved()
    assert solution.htm == optimal


def test_faces_without_an_axis_are_no_solution() -> None:
    cube = Cube.solved(2).apply("R U F")
    with pytest.raises(NoSolutionError, match="faces UR lack an axis"):
        api.solve(cube, faces="UR")


def test_cache_dir_of_the_wrong_type_is_an_option_error() -> None:
    with pytest.raises(OptionError, match="cache_dir must be a folder path"):
        api.solve(Cube.solved(2).apply("R"), cache_dir=5)
