"""The big-cube engine: every N solved and verified, parity cases, seed 003's commutators."""

from __future__ import annotations

import numpy as np
import pytest

from solver import api
from solver.api import SolveOptions
from solver.cube.facelets import Cube
from solver.cube.geometry import FACE_FRAMES, Face
from solver.cube.notation import Metric, Move, count, parse
from solver.engines.nxn import centres, engine, pairing, reduced, wings
from solver.engines.nxn.sim import geometry
from solver.errors import UnsupportedError
from solver.optimize import optimize
from solver.scramble import random_moves, random_state_nxn
from solver.solution import Stage


def _solves(cube: Cube) -> api.Solution:  # type: ignore[name-defined]
    solution = api.solve(cube)
    assert solution.engine == "nxn"
    assert cube.apply(solution.moves).is_solved()
    assert solution.stats["verified"] is True
    # the output is SiGN notation that the project's parser reads back
    assert parse(str(solution)) == list(solution.moves)
    return solution


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7])
def test_fast_moves_match_the_facelet_model(n: int) -> None:
    moves = random_moves(n, 40, seed=n) + parse(
        "x y' z2" + (" 2R 3U' 2-3Fw 3r M" if n >= 5 else "")
    )
    state = Cube.solved(n).flat.copy()
    geometry(n).apply(state, moves)
    assert np.array_equal(state, Cube.solved(n).apply(moves).flat)


@pytest.mark.parametrize("n", range(4, 11))
@pytest.mark.parametrize("seed", range(2))
def test_random_states_of_every_size_are_solved(n: int, seed: int) -> None:
    _solves(random_state_nxn(n, seed))


@pytest.mark.parametrize("n", [4, 5, 6])
def test_random_move_scrambles_are_solved(n: int) -> None:
    _solves(Cube.solved(n).apply(random_moves(n, seed=7)))


@pytest.mark.slow
def test_fifteen_cube() -> None:
    solution = _solves(random_state_nxn(15, 0))
    assert solution.n == 15


def test_solved_cube_needs_nothing_but_maybe_the_3x3() -> None:
    assert api.solve(Cube.solved(6)).moves == ()


@pytest.mark.parametrize("n", [4, 5, 6, 8])
def test_oll_parity_case(n: int) -> None:
    """One inner slice quarter turn: a single flipped dedge after pairing (OLL parity). After
    the first centre and the parity stage (4x4 and 5x5: after the staged centres, whose second
    stage fixes the wing parity; 6x6: after the inner ring, bars and outer centres, the last a
    5x5's staged search) every wing orbit is in an even permutation."""
    cube = Cube.solved(n).apply("2R U2 F R")
    assert wings.wing_parity(cube.flat, n, 1) == 1
    solution = _solves(cube)
    if n in (4, 5):
        assert solution.stages[0].name == "centres"
        state = cube.apply(solution.stages[0].moves).flat
        assert wings.wing_parity(state, n, 1) == 0
        return
    names = [stage.name for stage in solution.stages]  # 6x6: inner ring, bars, outer centres
    upto = names.index("centres" if n == 6 else "wing parity") + 1
    bars = ["inner centres", "bars", "centres"]
    assert names[:upto] == (bars if n == 6 else ["first centre", "wing parity"])
    state = cube.apply([m for stage in solution.stages[:upto] for m in stage.moves]).flat
    assert all(wings.wing_parity(state, n, j) == 0 for j in range(1, (n - 2) // 2 + 1))


@pytest.mark.parametrize("n", [4, 6])
def test_pll_parity_case(n: int) -> None:
    """Two dedges swapped on a reduced cube (PLL parity) is solved: the pairing targets give
    the dedges the corners' permutation parity."""
    h = n // 2
    _solves(Cube.solved(n).apply(f"{h}R2 U2 {h}R2 {h}Uw2 {h}R2 {h}Uw2"))


@pytest.mark.parametrize("seed", range(12))
def test_dedge_targets_keep_the_reduced_cube_legal(seed: int) -> None:
    """Both parities of the corners occur; the paired dedges always have even total flip and
    the corners' permutation parity, and pair partner wings."""
    n = 4
    state, _, _ = engine.reduce_centres(random_state_nxn(n, seed))
    corner = engine.corner_parity(state, n)
    targets = wings.dedge_targets(state, n, corner)
    assert sorted(targets) == list(range(24))
    dedges = [targets[2 * e] // 2 for e in range(12)]
    assert all(targets[2 * e + 1] // 2 == dedges[e] for e in range(12))
    assert sum(targets[2 * e] % 2 for e in range(12)) % 2 == 0
    assert wings._parity(dedges) == corner


def test_every_parity_combination_occurs_and_is_solved() -> None:
    seen = set()
    for seed in range(32):  # each combination is about 1 in 4; stop when all four were met
        cube = random_state_nxn(4, seed)
        state = engine._staged(cube, 1, None)[0][2]  # the 4x4 centres (they fix wing parity)
        case = (wings.wing_parity(cube.flat, 4, 1) == 1, engine.corner_parity(state, 4))
        if case not in seen:
            _solves(cube)
            seen.add(case)
        if len(seen) == 4:
            break
    assert seen == {(False, 0), (False, 1), (True, 0), (True, 1)}


# --- seed 003 -----------------------------------------------------------------------------------

#: seed 003's slice per face pair (target F and R): the axis of the slice moves
SEED_SLICES = {
    (Face.F, Face.U): "M",
    (Face.F, Face.D): "M",
    (Face.F, Face.L): "E",
    (Face.F, Face.R): "E",
    (Face.R, Face.U): "S",
    (Face.R, Face.D): "S",
    (Face.R, Face.F): "E",
    (Face.R, Face.B): "E",
}
AXIS_OF = {Face.R: "M", Face.L: "M", Face.U: "E", Face.D: "E", Face.F: "S", Face.B: "S"}


def _pairs() -> list[tuple[Face, Face]]:
    return [(t, s) for t in Face for s in Face if s != t]


def test_all_thirty_face_pairs_have_commutators() -> None:
    assert len(_pairs()) == 30  # opposite pairs by half turns (seed 003's B -> F by M2)
    for target, source in _pairs():
        configs = centres._configs(5, target, source)
        assert configs, (target, source)
        assert all(c.d == (2 if (source + 3) % 6 == target else c.d) for c in configs)
        axis = configs[0].axis
        normal = np.array(FACE_FRAMES[axis][0])
        assert normal @ np.array(FACE_FRAMES[target][0]) == 0
        assert normal @ np.array(FACE_FRAMES[source][0]) == 0
        if (target, source) in SEED_SLICES:
            assert AXIS_OF[axis] == SEED_SLICES[(target, source)]


def test_seed_003_up_to_front_three_cycle_on_5x5() -> None:
    """A single piece from U to F (inner slices only): exactly three centre stickers move, one
    from U into the target, the target's to U, and one U piece to where the first was."""
    n = 5
    cfg = centres._configs(n, Face.F, Face.U)[0]
    target = int(cfg.cells[0])
    u, line = int(cfg.u[0]), int(cfg.u2[0])
    a = Move.block(cfg.axis, u, u, cfg.d)
    m2 = Move.block(cfg.axis, line, line, cfg.e)
    t = Move.outer(Face.F, cfg.t)
    seq = [a, t, m2, t.inverse(), a.inverse(), t, m2.inverse(), t.inverse()]
    labels = np.arange(6 * n * n)
    geometry(n).apply(labels, seq)
    moved = np.flatnonzero(labels != np.arange(labels.size))
    assert moved.size == 3
    assert labels[target] == cfg.src[0]
    assert {int(i) // (n * n) for i in moved} == {Face.F, Face.U}


@pytest.mark.parametrize(
    ("n", "states"), [(5, 40), (7, 40), (9, 20), pytest.param(11, 12, marks=pytest.mark.slow)]
)
def test_block_commutators_always_land(
    n: int, states: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed 003 left block moves disabled (3 % of cases failed). Here every commutator, blocks of
    many cells included, is checked after it is applied, on random states of each size (fewer
    for the bigger cubes, each of which holds many more commutators)."""
    gains: list[int] = []
    checked = centres._apply_checked

    def spy(state: np.ndarray, n: int, plan: centres._Plan, *args: object) -> None:
        gains.append(plan.gain)
        checked(state, n, plan, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(centres, "_apply_checked", spy)
    monkeypatch.setattr(centres, "MAX_INSERT_N", 0)  # commutators only
    for seed in range(states):
        state = random_state_nxn(n, 1000 + seed).flat.copy()
        targets = centres.centre_targets(state, n)
        moves = centres.solve_centres(state, n, targets)  # raises if a block misses
        for face in Face:
            assert set(state[centres.interior(n, face)].tolist()) == {targets[face]}
        assert moves
    assert max(gains) >= 2 and sum(g >= 2 for g in gains) > len(gains) // 10


def test_unknown_option_and_small_sizes_are_refused() -> None:
    cube = random_state_nxn(4, 0)
    with pytest.raises(UnsupportedError):
        api.solve(cube, colour="red")
    with pytest.raises(UnsupportedError):
        engine.solve_nxn(Cube.solved(3), SolveOptions())
    with pytest.raises(UnsupportedError):
        api.solve(cube, "cfop")
    assert api.solve(Cube.solved(3).apply("R U")).engine == "twophase"


def test_stages_carry_moves_and_metrics() -> None:
    cube = random_state_nxn(5, 3)
    solution = api.solve(cube, centres="commutators", centre_tries=1)
    assert cube.apply(solution.moves).is_solved()
    names = [s.name for s in solution.stages]
    assert names == ["first centre", "wing parity", "centres", "edges", "3x3"]
    staged = _solves(cube)  # 4x4 and 5x5: the staged centres by default
    assert [s.name for s in staged.stages] == ["centres", "edges", "3x3"]
    assert [s.name for s in _solves(random_state_nxn(4, 3)).stages][-2:] == ["edges", "3x3"]
    for stage in solution.stages + staged.stages:
        assert {"obtm", "ms"} <= set(stage.detail)
    assert solution.to_dict()["stages"][2]["name"] == "centres"


def test_auto_engine_by_size_and_named_engines_as_asked() -> None:
    assert api.engine_for_size(2, "auto") == "pocket"
    assert api.engine_for_size(3, "auto") == "twophase"
    assert api.engine_for_size(7, "auto") == "nxn"
    with pytest.raises(UnsupportedError, match="engine 'twophase' does not solve 4x4x4"):
        api.engine_for_size(4, "twophase")
    with pytest.raises(UnsupportedError):
        api.engine_for_size(3, "nxn")
    with pytest.raises(UnsupportedError):
        api.solve(Cube.solved(4).apply("R"), "twophase")


def test_stages_only_stops_after_the_centres() -> None:
    cube = random_state_nxn(6, 9)
    solution = api.solve(cube, stages_only=True)
    names = ["inner centres", "bars", "centres"]
    assert [s.name for s in solution.stages] == names
    state = cube.apply(solution.moves).stickers
    for face in Face:
        inner = state[face, 1:-1, 1:-1]
        assert (inner == inner[0, 0]).all()


@pytest.mark.parametrize("n", [4, 5, 6, 7])
def test_freeslice_pairing_keeps_centres_and_pairs_most_wings(n: int) -> None:
    state, _, _ = engine.reduce_centres(random_state_nxn(n, 11))
    centres_before = [state[centres.interior(n, f)].copy() for f in Face]
    before = pairing.paired_count(state, n)
    moves = pairing.pair_edges(state, n)
    assert moves is not None
    for face, old in zip(Face, centres_before, strict=True):
        assert np.array_equal(state[centres.interior(n, face)], old)
    assert pairing.paired_count(state, n) >= max(before + 1, 12 * (n - 2) - 8)
    check = engine.reduce_centres(random_state_nxn(n, 11))[0]
    geometry(n).apply(check, moves)
    assert np.array_equal(check, state)  # the moves returned are the moves applied


def test_midge_targets_pair_each_wing_with_its_middle_edge() -> None:
    cube = Cube.solved(5).apply("R U F' D2 L B' U' R2")  # outer turns keep every pair
    assert wings.midge_targets(cube.flat, 5) == wings._homes(cube.flat, 5, 1)


@pytest.mark.parametrize("rotation", engine.ROTATIONS)
def test_moves_found_on_a_rotated_cube_map_back_to_the_cube_as_given(rotation: str) -> None:
    cube = random_state_nxn(4, 5)
    moves = parse("R 2U' Fw2 3L D' 2B")
    mapped = engine._unrotate(tuple(moves), rotation)
    # rotation, then the moves == the mapped moves, then the rotation
    assert np.array_equal(
        cube.apply([*parse(rotation), *moves]).flat, cube.apply([*mapped, *parse(rotation)]).flat
    )


def test_more_centre_tries_never_cost_more_centre_moves() -> None:
    cube = random_state_nxn(4, 1)
    one = api.solve(cube, stages_only=True, centre_tries=1)
    many = api.solve(cube, stages_only=True, centre_tries=9)
    assert sum(s.detail["obtm"] for s in many.stages) <= sum(s.detail["obtm"] for s in one.stages)
    state = cube.apply(many.moves).stickers
    for face in Face:
        inner = state[face, 1:-1, 1:-1]
        assert (inner == inner[0, 0]).all()


def test_the_reduction_whose_whole_solution_is_shortest_goes_to_the_3x3(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With several reductions within the slack, each gets a 3x3 and the shortest whole (after
    the optimiser) is kept; a budget re-solves the chosen 3x3 with the caller's options (the
    engine's own effort off: see the next test)."""
    n = 6
    monkeypatch.setitem(engine.ENDS, n, (3, 3))
    monkeypatch.setitem(reduced.THREE_EFFORT, n, (0, 0.0))
    cube = random_state_nxn(n, 21)
    options = SolveOptions()
    reductions = engine._best_reductions(cube, 1, 2, options)
    assert 1 < len(reductions) <= engine.MAX_ENDS
    totals = [total for total, _, _, _ in reductions]
    assert totals == sorted(totals) and totals[-1] < totals[0] + 3

    def whole(state: np.ndarray, stages: list[Stage]) -> int:  # type: ignore[type-arg]
        small = api.solve(engine.reduced_3x3(state, n), "twophase")
        raw = [m for stage in stages for m in stage.moves] + list(small.moves)
        return count(optimize(raw, n), Metric.HTM, n)

    best = min(whole(state, stages) for _, _, state, stages in reductions)
    rotation, state, stages, small = reduced.pick_3x3(reductions, n, options)
    raw = [m for stage in stages for m in stage.moves] + list(small.moves)
    assert count(optimize(raw, n), Metric.HTM, n) == best
    check = cube.flat.copy()
    geometry(n).apply(check, engine._unrotate(tuple(raw), rotation))
    assert engine._solved(check, n)
    budgeted = reduced.pick_3x3(reductions, n, SolveOptions(budget_s=0.05))
    assert np.array_equal(budgeted[1], state)  # chosen by the quick 3x3s, then re-solved
    assert engine.reduced_3x3(state, n).apply(budgeted[3].moves).is_solved()
    solution = _solves(cube)
    assert solution.stats["verified"] is True


def test_the_3x3_of_a_6x6_gets_the_engines_effort(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no budget from the caller, the few reductions whose quick wholes are shortest get
    a two-phase search of the effort's seconds (:data:`reduced.THREE_EFFORT`) and the shortest
    whole is kept; a caller's longer budget or cost model skips them and re-solves the
    chosen 3x3 with the caller's options; the 4x4 and 5x5 get no effort."""
    n = 6
    assert reduced.THREE_EFFORT[6][0] >= 1 and reduced.THREE_EFFORT[6][1] > 0
    assert 4 not in reduced.THREE_EFFORT and 5 not in reduced.THREE_EFFORT
    monkeypatch.setitem(engine.ENDS, n, (3, 3))
    monkeypatch.setitem(reduced.THREE_EFFORT, n, (2, 0.05))
    budgets: list[float] = []
    solve_3x3 = reduced.solve_3x3

    def spy(cube: Cube, options: SolveOptions) -> api.Solution:  # type: ignore[name-defined]
        budgets.append(options.budget_s)
        return solve_3x3(cube, options)

    monkeypatch.setattr(reduced, "solve_3x3", spy)
    cube = random_state_nxn(n, 21)
    reductions = engine._best_reductions(cube, 1, 2, SolveOptions())
    assert len(reductions) >= 2
    quick = min(
        reduced._whole(stages, api.solve(engine.reduced_3x3(state, n), "twophase"), n)
        for _, _, state, stages in reductions
    )
    budgets.clear()
    rotation, state, stages, small = reduced.pick_3x3(reductions, n, SolveOptions())
    assert budgets == [0.0] * len(reductions) + [0.05, 0.05]
    assert reduced._whole(stages, small, n) <= quick
    assert engine.reduced_3x3(state, n).apply(small.moves).is_solved()
    raw = [m for stage in stages for m in stage.moves] + list(small.moves)
    check = cube.flat.copy()
    geometry(n).apply(check, engine._unrotate(tuple(raw), rotation))
    assert engine._solved(check, n)
    budgets.clear()
    reduced.pick_3x3(reductions, n, SolveOptions(budget_s=0.1))  # the caller's is longer
    assert budgets == [0.0] * len(reductions) + [0.1]
    budgets.clear()
    solution = _solves(cube)  # the whole engine: the 3x3 searched, the solution verified
    assert 0.05 in budgets
    assert solution.stats["verified"] is True
