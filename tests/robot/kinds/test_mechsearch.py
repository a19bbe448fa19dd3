"""The mechanism search's cost tables are the planner's times, its bounds are lower bounds,
and what it returns solves the cube at the time it says."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from robot.errors import PlanError
from robot.kinds import KindPlanner, Mechanism, Turntable, TwoGripper, replay
from robot.kinds.frames import N_ORIENTATIONS
from robot.kinds.mechsearch import (
    PHASE2_MOVES,
    MechanismCosts,
    costs_for,
    costs_from_state,
    least_time,
    mechanism_costs,
    search_fastest,
)
from solver.cube.cubie import CubieCube
from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.engines.twophase import coord as C

MECHANISMS: dict[str, Mechanism] = {
    "cubotino": Turntable(),
    "stepper-turntable": Turntable(table_positions=None),
    "grippers-180": TwoGripper(),
}


@pytest.fixture(scope="module", params=list(MECHANISMS))
def planned(request: pytest.FixtureRequest) -> tuple[KindPlanner, MechanismCosts]:
    planner = KindPlanner(MECHANISMS[request.param])
    return planner, mechanism_costs(planner)


def _dp(costs: MechanismCosts, moves: list[int]) -> float:
    """The tables' time of a move sequence (two-phase move indices), in that order."""
    v = costs.first[moves[0]].copy()
    for a, b in itertools.pairwise(moves):
        v = (v[:, None] + costs.trans[a // 3, b]).min(axis=0)
    return float(v.min())


def _sequence(rng: random.Random, length: int, same_axis: bool) -> list[int]:
    """Random face turns, never one face twice in a row (nor, unless ``same_axis``, two
    turns about one axis, which the planner may reorder)."""
    out: list[int] = []
    while len(out) < length:
        m = rng.randrange(C.N_MOVE)
        if out and (m // 3 == out[-1] // 3 or (not same_axis and m // 3 % 3 == out[-1] // 3 % 3)):
            continue
        out.append(m)
    return out


def test_table_time_is_the_planners(planned: tuple[KindPlanner, MechanismCosts]) -> None:
    planner, costs = planned
    rng = random.Random(5)
    for length in (1, 2, 7, 15):
        moves = _sequence(rng, length, same_axis=False)
        expected = planner.seconds([C.move_of_index(m) for m in moves])
        assert _dp(costs, moves) == pytest.approx(expected, abs=1e-9)
    for _ in range(5):  # with turns about one axis the planner may only do better
        moves = _sequence(rng, 12, same_axis=True)
        assert _dp(costs, moves) >= planner.seconds([C.move_of_index(m) for m in moves]) - 1e-9


def test_bounds_are_lower_bounds(planned: tuple[KindPlanner, MechanismCosts]) -> None:
    _, costs = planned
    rng = random.Random(6)
    assert costs.start1[0] == 0.0
    assert np.all(np.diff(costs.start1) > 0)
    for length in (3, 8, 14):
        for _ in range(20):
            moves = _sequence(rng, length, same_axis=True)
            assert costs.start1[length] <= _dp(costs, moves) + 1e-9
            p2 = [rng.choice(PHASE2_MOVES) for _ in range(length)]
            if all(a // 3 != b // 3 for a, b in itertools.pairwise(p2)):
                # from after the first move: rest2 of the others from its best end state
                v = costs.first[p2[0]]
                rest = costs.rest2[0, length - 1, p2[0] // 3]
                assert float((v + rest).min()) <= _dp(costs, p2) + 1e-9
    # the inverse directions' bounds: from the start through n moves, then b
    for length in (0, 4, 9):
        for _ in range(20):
            moves = _sequence(rng, length + 1, same_axis=False)
            v = costs.first[moves[0]].copy()
            for a, b in itertools.pairwise(moves):
                v = (v[:, None] + costs.trans[a // 3, b]).min(axis=0)
            assert np.all(costs.brest1[length, moves[-1]] <= v + 1e-9)
    assert np.all(costs.brest2 >= costs.brest1[None] - 1e-9)
    # phase-2 moves only can never be cheaper than any moves
    assert np.all(costs.rest2 >= costs.rest1[None] - 1e-9)
    # a direction along another axis has other phase-2 moves (R, L quarter turns, U2, ...)
    assert costs.rest2.shape[0] == 3


def test_search_solves_at_the_time_it_says(planned: tuple[KindPlanner, MechanismCosts]) -> None:
    planner, costs = planned
    rng = random.Random(7)
    for budget in (0.0, 0.05):
        cubie = CubieCube.random(rng)
        solution = search_fastest(cubie, costs, budget, 24)
        assert solution is not None
        cube = cubie.to_cube()
        assert cube.apply(solution.moves).is_solved()
        # the search's time is the planner's (turns of opposite faces in either order)
        index = {C.move_of_index(m): m for m in range(C.N_MOVE)}
        moves = [index[m] for m in solution.moves]
        assert solution.robot_time_s is not None
        assert solution.robot_time_s <= _dp(costs, moves) + 1e-9
        assert solution.robot_time_s == pytest.approx(planner.seconds(solution.moves), abs=1e-9)
        assert planner.plan(solution.moves).seconds == pytest.approx(solution.robot_time_s)


def test_inverse_directions_place_their_moves_first() -> None:
    """Solutions found on the inverse cube are read backwards; their time is the planner's
    all the same (the vector then runs from each move's end states to the end)."""
    planner = KindPlanner(Turntable())
    costs = mechanism_costs(planner)
    rng = random.Random(9)
    inverse = 0
    for _ in range(8):
        cubie = CubieCube.random(rng)
        solution = search_fastest(cubie, costs, 0.02, 24, threads=1)
        assert solution is not None and solution.robot_time_s is not None
        assert cubie.to_cube().apply(solution.moves).is_solved()
        assert solution.robot_time_s == pytest.approx(planner.seconds(solution.moves), abs=1e-9)
        inverse += solution.stats["direction"]["inverse"]
    assert inverse > 0


def test_search_only_returns_what_beats_the_bound() -> None:
    planner = KindPlanner(Turntable())
    costs = mechanism_costs(planner)
    cubie = CubieCube.random(random.Random(8))
    assert search_fastest(cubie, costs, 0.05, 24, beat=(1.0, 20)) is None
    found = search_fastest(cubie, costs, 0.05, 24, beat=(1000.0, 24))
    assert found is not None and found.robot_time_s is not None and found.robot_time_s < 1000.0


def test_a_search_from_part_way_through_a_plan_is_timed_from_there(
    planned: tuple[KindPlanner, MechanismCosts],
) -> None:
    """``costs_from_state``: the search starts where a plan's first moves left the machine
    (:attr:`ActionPlan.move_ends`); its tables are the planner's times from there, what it
    returns is planned from there at the time it says, and the first moves' actions, the
    remainder's and the way home, replayed from the scrambled cube, solve it."""
    planner, costs = planned
    rng = random.Random(12)
    cubie = CubieCube.random(rng)
    cube = cubie.to_cube()
    solution = search_fastest(cubie, costs, 0.0, 24)
    assert solution is not None
    plan = planner.plan(solution.moves)
    made = [m for m, _, _ in plan.move_ends]
    counts = [count for _, count, _ in plan.move_ends]
    assert cube.apply(made).is_solved()
    assert counts == sorted(set(counts)) and counts[-1] == len(plan.actions)
    for j in (1, 3):
        _, count, state = plan.move_ends[j - 1]
        done = plan.actions[:count]
        _, parts = replay(planner.mechanism, cube, [a.action for a in done])
        assert parts == planner.parts[state % len(planner.parts)]
        # the rest of the plan, planned from its state, takes what the plan has left
        rest = planner.plan(made[j:], state=state)
        assert rest.seconds == pytest.approx(plan.seconds - sum(a.seconds for a in done))
        here = costs_from_state(planner, state)
        assert here.first.shape == costs.first.shape and not np.array_equal(here.first, costs.first)
        for length in (1, 4, 9):
            moves = _sequence(rng, length, same_axis=False)
            expected = planner.plan([C.move_of_index(m) for m in moves], state=state).seconds
            assert _dp(here, moves) == pytest.approx(expected, abs=1e-9)
            assert here.start1[length] <= _dp(here, moves) + 1e-9
        found = search_fastest(cubie.apply(made[:j]), here, 0.05, 24)
        assert found is not None and found.robot_time_s is not None
        remainder = planner.plan(found.moves, state=state)
        assert remainder.seconds == pytest.approx(found.robot_time_s, abs=1e-9)
        home = planner.home(remainder)
        final, parts = replay(planner.mechanism, cube, [a.action for a in (*done, *home.actions)])
        assert final.is_solved() and parts == planner.mechanism.start
    assert costs_from_state(planner, planner.start_state()) is costs_for(planner)
    states = len(planner.parts) * N_ORIENTATIONS
    for bad in (-1, states):
        with pytest.raises(PlanError, match="no planner state"):
            costs_from_state(planner, bad)
        with pytest.raises(PlanError, match="no planner state"):
            planner.plan(made, state=bad)


def test_costs_need_a_3x3_that_makes_every_face_turn() -> None:
    with pytest.raises(PlanError, match="3x3"):
        mechanism_costs(KindPlanner(Turntable(n=4, depths=(1, 2))))
    opposed = KindPlanner(TwoGripper(positions=(Face.D, Face.U)))
    with pytest.raises(PlanError, match="cannot make"):
        mechanism_costs(opposed)
    assert costs_for(opposed) is None
    planner = KindPlanner(Turntable())
    assert costs_for(planner) is costs_for(planner)


def test_solved_cube_needs_no_move() -> None:
    costs = mechanism_costs(KindPlanner(Turntable()))
    solution = search_fastest(Cube.solved(3), costs, 0.0, 20)
    assert solution is not None and solution.moves == () and solution.robot_time_s == 0.0


def _brute_force(planner: KindPlanner, cubie: CubieCube, half: int) -> float:
    """The least planned time over every solution of at most ``2 * half`` face turns (never
    one face twice in a row: such a pair is one turn, which the planner merges anyway), met in
    the middle: the states ``half`` moves from the cube and those ``half`` moves from solved."""
    turn = [CubieCube.from_moves([C.move_of_index(m)]) for m in range(C.N_MOVE)]
    # every sequence of at most ``half`` moves and the cube it makes from solved
    made: dict[tuple[int, ...], CubieCube] = {(): CubieCube()}
    frontier = dict(made)
    for _ in range(half):
        frontier = {
            (*s, m): cube * turn[m]
            for s, cube in frontier.items()
            for m in range(C.N_MOVE)
            if not s or m // 3 != s[-1] // 3
        }
        made.update(frontier)
    ends: dict[CubieCube, list[tuple[int, ...]]] = {}
    for suffix, cube in made.items():  # the state from which ``suffix`` solves the cube
        ends.setdefault(cube.inverse(), []).append(suffix)
    best = np.inf
    for prefix, cube in made.items():
        for suffix in ends.get(cubie * cube, ()):
            if prefix and suffix and prefix[-1] // 3 == suffix[0] // 3:
                continue
            best = min(best, planner.seconds([C.move_of_index(m) for m in prefix + suffix]))
    return float(best)


def test_least_time_is_the_brute_force_optimum(planned: tuple[KindPlanner, MechanismCosts]) -> None:
    """The exhaustive mechanism search finds the least planned time of all solutions up to
    six moves, as a brute force over every such move sequence does."""
    planner, costs = planned
    rng = random.Random(11)
    for _ in range(2):
        scramble = [C.move_of_index(m) for m in _sequence(rng, 4, same_axis=True)]
        cubie = CubieCube.from_moves(scramble)
        found = least_time(cubie, costs, 6)
        assert found.stats["exhausted"]
        assert cubie.to_cube().apply(found.moves).is_solved()
        assert found.robot_time_s == pytest.approx(_brute_force(planner, cubie, 3), abs=1e-9)
