"""The 5x5 staged centre search (solver/engines/nxn/staged5.py and its C kernel)."""

from __future__ import annotations

import numpy as np
import pytest

from solver import api
from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import Metric, Move, count
from solver.engines.nxn import _staged5, staged5
from solver.engines.nxn.centres import interior
from solver.engines.nxn.sim import geometry
from solver.engines.nxn.wings import wing_parity
from solver.scramble import random_moves, random_state_nxn

N = 5


_POP = np.array([bin(v).count("1") for v in range(256)], dtype=np.int64)


def _turn(table: np.ndarray, masks: np.ndarray) -> np.ndarray:
    out: np.ndarray = (
        table[masks & 255] | table[256 + (masks >> 8 & 255)] | table[512 + (masks >> 16)]
    )
    return out


def _rank(lut: np.ndarray, masks: np.ndarray) -> np.ndarray:
    out = np.zeros(len(masks), dtype=np.int64)
    k = np.zeros(len(masks), dtype=np.int64)
    for b in range(3):
        v = (masks >> (8 * b) & 255).astype(np.int64)
        out += lut[(b * 9 + np.minimum(k, 8)) * 256 + v]
        k += _POP[v]
    return out


def _reference_bfs(spec: staged5._Spec) -> np.ndarray:
    """The table of ``spec`` by a numpy breadth-first search over mask pairs (independent of
    the kernel's index arithmetic: pairs are kept as masks, ranked only to store a depth)."""
    mx, mt = staged5._move_tables(spec.stage, 0), staged5._move_tables(spec.stage, 1)
    lx, lt = spec.lx.ravel().astype(np.int64), spec.lt.ravel().astype(np.int64)
    goal = staged5._goal(spec.stage)
    x = np.array([goal if len(spec.ux) > 1 else 0], dtype=np.int64)
    t = np.array([goal if len(spec.ut) > 1 else 0], dtype=np.int64)
    dist = np.full(spec.size, -1, dtype=np.int8)
    dist[_rank(lx, x) + _rank(lt, t)] = 0
    depth = 0
    while len(x):
        depth += 1
        nx = np.concatenate([_turn(mx[m].astype(np.int64), x) for m in range(len(mx))])
        nt = np.concatenate([_turn(mt[m].astype(np.int64), t) for m in range(len(mt))])
        index = _rank(lx, nx) + _rank(lt, nt)
        new = dist[index] < 0
        index, first = np.unique(index[new], return_index=True)
        dist[index] = depth
        x, t = nx[new][first], nt[new][first]
    return dist


@pytest.mark.parametrize("name", ["centres5-axis2-parity-x", "centres5-axis2-parity-t"])
def test_c_table_build_matches_a_python_breadth_first_search(name: str) -> None:
    spec = next(s for specs in staged5._specs() for s in specs if s.name == name)
    reached: list[int] = []
    assert np.array_equal(staged5._build(spec, reached.append), _reference_bfs(spec))
    assert reached == sorted(reached) and reached[-1] == spec.size  # progress: one per level


def test_backward_levels_build_the_same_table_as_forward_ones() -> None:
    spec = next(s for specs in staged5._specs() for s in specs if s.name == "centres5-faces-t")
    mx, mt = staged5._move_tables(2, 0), staged5._move_tables(2, 1)
    forward = np.full(spec.size, -1, dtype=np.int8)
    goal = staged5._goal(2)
    forward[staged5._rank(spec.lt.ravel(), goal)] = 0
    depth, added = 0, 1
    while added:
        added = _staged5.bfs_level(forward, depth, mx, mt, spec.ux, spec.ut, spec.lx, spec.lt)
        depth += 1
    built = staged5._build(spec, lambda done: None)
    assert np.array_equal(built, forward)  # backward for its last levels


def test_tables_have_the_sizes_and_depths_of_the_stages() -> None:
    t = staged5.load_tables()
    sizes = [[len(h[0]) for h in stage] for stage in t.heuristics]
    assert sizes == [[735_471] * 2, [25_740, 12_870], [24_010_000] * 3 + [343_000]]
    depths = [[int(h[0].max()) for h in stage] for stage in t.heuristics]
    assert depths == [[8, 8], [8, 9], [13, 13, 13, 8]]
    for stage in t.heuristics:
        for h in stage:
            assert h[0].min() == 0 and int((h[0] == 0).sum()) == 1  # all reached, one goal


def test_perimeter_holds_every_pair_near_the_goal() -> None:
    stage = 1
    mx, mt = staged5._move_tables(stage, 0), staged5._move_tables(stage, 1)
    goal = staged5._goal(stage)
    seen = {(goal, goal)}
    frontier = set(seen)
    for _ in range(3):
        frontier = {
            (staged5._turn(mx[m], x), staged5._turn(mt[m], t))
            for x, t in frontier
            for m in range(len(mx))
        } - seen
        seen |= frontier
    table = np.zeros(1 << 14, dtype=np.uint64)
    assert _staged5.perimeter(table, mx, mt, goal, goal, 3) == len(seen)
    with pytest.raises(ValueError, match="more slots or less depth"):
        _staged5.perimeter(np.zeros(1 << 8, dtype=np.uint64), mx, mt, goal, goal, 3)


def test_kernel_refuses_malformed_buffers() -> None:
    heur = staged5.load_tables().heuristics[0]
    mx = staged5._move_tables(0, 0)
    axis, slot = staged5._axis_slot(0)
    with pytest.raises(ValueError, match="one byte per move"):
        _staged5.search(heur, mx, mx, axis[:-1], slot, 0, 0, 0, 0, 0, 5, 1, 10, None, 0)
    with pytest.raises(ValueError, match="dist needs"):
        _staged5.bfs_level(np.zeros(7, dtype=np.int8), 0, mx, mx, *heur[0][1:3], *heur[0][1:3])


def _solved_centres(state: np.ndarray, targets: tuple[int, ...]) -> bool:
    return all((state[interior(N, face)] == targets[face]).all() for face in Face)


@pytest.mark.parametrize("seed", range(5))
def test_staged_centres_solve_every_face_with_even_wings(seed: int) -> None:
    cube = random_state_nxn(N, seed)
    found = staged5.staged_centres(cube.flat, keep=4)
    assert 1 <= len(found) <= 4
    assert [f.length for f in found] == sorted(f.length for f in found)
    for option in found:
        assert option.targets == tuple(int(cube.flat[f * 25 + 12]) for f in range(6))
        state = cube.flat.copy()
        geometry(N).apply(state, option.moves)
        assert _solved_centres(state, option.targets)
        assert wing_parity(state, N, 1) == 0
        assert all(m.lo == 1 and m.hi in (1, 2) for m in option.moves)  # outer and wide turns
        assert option.length <= 40  # about 30 on random states


def test_more_stage_three_solutions_from_fewer_searches() -> None:
    """``searches`` and ``paths3``: the 7x7's outer search asks 4 shortest stage-3 solutions
    of each of 12 stage-2 ends (48) instead of one of each of 48: as short a best, more
    solutions, each solving the centres."""
    cube = random_state_nxn(N, 7)
    one_each = staged5.staged_centres(cube.flat, keep=12)
    several = staged5.staged_centres(cube.flat, 48, None, None, 12, 4)
    assert len(several) > len(one_each)
    assert several[0].length == one_each[0].length
    assert [f.length for f in several] == sorted(f.length for f in several)
    for option in several:
        state = cube.flat.copy()
        geometry(N).apply(state, option.moves)
        assert _solved_centres(state, option.targets)
        assert wing_parity(state, N, 1) == 0


def test_stage_one_and_two_place_the_axes() -> None:
    cube = random_state_nxn(N, 11)
    option = staged5.staged_centres(cube.flat)[0]
    state = cube.flat.copy()
    geometry(N).apply(state, option.stages[0])
    c = option.targets
    # the first stage placed one axis pair of colours on its axis (the order is searched)
    placed = [
        {int(v) for v in state[np.concatenate([interior(N, a), interior(N, b)])]} == {c[a], c[b]}
        for a, b in ((Face.U, Face.D), (Face.R, Face.L), (Face.F, Face.B))
    ]
    assert sum(placed) >= 1
    geometry(N).apply(state, option.stages[1])
    placed2 = [
        {int(v) for v in state[np.concatenate([interior(N, a), interior(N, b)])]} == {c[a], c[b]}
        for a, b in ((Face.U, Face.D), (Face.R, Face.L), (Face.F, Face.B))
    ]
    assert all(placed2)  # two axes placed: the third holds the rest


def test_a_centre_scramble_of_few_moves_is_undone_in_as_few() -> None:
    scramble = [Move.block(Face.R, 1, 2, 1), Move.block(Face.U, 1, 2, 2), Move.outer(Face.F, -1)]
    cube = Cube.solved(N).apply(scramble)
    assert staged5.staged_centres(cube.flat)[0].length <= 3
    scramble = random_moves(N, 4, seed=3)
    cube = Cube.solved(N).apply(scramble)
    assert staged5.staged_centres(cube.flat)[0].length <= 2 * count(scramble, Metric.HTM, N)


@pytest.mark.parametrize("seed", [0, 7])
def test_engine_picks_the_staged_search_for_5x5_and_both_methods_solve(seed: int) -> None:
    cube = random_state_nxn(N, seed)
    staged_run = api.solve(cube)
    assert [s.name for s in staged_run.stages] == ["centres", "edges", "3x3"]
    assert len(staged_run.stages[0].detail["stages"]) == 3
    assert staged_run.stats["verified"]
    assert cube.apply(staged_run.moves).is_solved()
    commutators = api.solve(cube, centres="commutators", centre_tries=1)
    assert commutators.stages[0].name == "first centre"
    assert cube.apply(commutators.moves).is_solved()
    assert staged_run.stats["obtm"] < commutators.stats["obtm"]
