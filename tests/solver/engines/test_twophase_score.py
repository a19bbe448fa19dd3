"""The two-phase engine's candidate scorer, its collector, and reuse from new states with a
deadline (what anytime solving relies on)."""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

import pytest

from solver.api import solve
from solver.cost import DEFAULT_COST_MODEL
from solver.cube.cubie import CubieCube
from solver.cube.geometry import Face
from solver.cube.notation import Move
from solver.engines.twophase._twophase import Collector
from solver.engines.twophase.engine import TwoPhaseSolver, get_solver
from solver.errors import NoSolutionError, OptionError
from solver.scramble import random_moves


@pytest.fixture(scope="module")
def engine() -> TwoPhaseSolver:
    return get_solver()


def _cubes(count: int, seed: int) -> list[CubieCube]:
    rng = random.Random(seed)
    return [CubieCube.random(rng) for _ in range(count)]


def _u_turns(moves: Sequence[Move]) -> int:
    return sum(1 for m in moves if m.face is Face.U)


def test_scorer_that_prefers_few_u_turns_gets_fewer(engine: TwoPhaseSolver) -> None:
    plain_u = scored_u = 0
    for cube in _cubes(6, 17):
        plain = engine.solve(cube, budget_s=0.05)
        scored = engine.solve(cube, budget_s=0.05, score=_u_turns)
        for solution in (plain, scored):
            assert len(solution.moves) <= 20
            assert cube.apply(solution.moves).is_solved()
        assert scored.stats["objective"] == "score"
        assert scored.stats["score"] == _u_turns(scored.moves)
        plain_u += _u_turns(plain.moves)
        scored_u += _u_turns(scored.moves)
    assert scored_u < plain_u


def test_every_candidate_is_a_distinct_solution_within_the_limits(engine: TwoPhaseSolver) -> None:
    cube = _cubes(1, 3)[0]
    seen: list[tuple[Move, ...]] = []

    def score(moves: Sequence[Move]) -> float:
        seen.append(tuple(moves))
        assert cube.apply(moves).is_solved()
        return float(len(moves))

    solution = engine.solve(cube, budget_s=0.05, max_length=21, score=score, score_slack=1)
    assert seen and len(set(seen)) == len(seen)
    assert all(len(moves) <= 21 for moves in seen)
    assert len(solution.moves) == min(len(moves) for moves in seen)
    assert solution.stats["candidates_scored"] == len(seen)
    assert solution.stats["candidates_received"] >= len(seen)


def test_score_with_the_first_solution_mode(engine: TwoPhaseSolver) -> None:
    cube = _cubes(1, 4)[0]
    solution = engine.solve(cube, score=lambda moves: 1.0)
    assert cube.apply(solution.moves).is_solved()
    assert solution.stats["candidates_scored"] == 1


def test_score_through_the_api_and_option_errors() -> None:
    cube = _cubes(1, 5)[0]
    solution = solve(cube.to_cube(), budget_s=0.02, score=lambda moves: float(len(moves)))
    assert cube.apply(solution.moves).is_solved()
    with pytest.raises(OptionError, match="score"):
        solve(cube.to_cube(), score=len, cost_model=DEFAULT_COST_MODEL)
    with pytest.raises(OptionError, match="score"):
        solve(cube.to_cube(), score=3)
    with pytest.raises(OptionError, match="score_slack"):
        solve(cube.to_cube(), score=len, score_slack=-1)
    with pytest.raises(OptionError, match="score_descent"):
        solve(cube.to_cube(), score=len, score_descent=1.0)


def test_descent_first_then_candidates_at_the_length_reached(engine: TwoPhaseSolver) -> None:
    """Short scrambles: both the plain search and the descent finish, so the collecting pass
    gathers every solution at the shortest length, and the scorer chooses among them."""
    lengths: list[int] = []

    def score(moves: Sequence[Move]) -> float:
        lengths.append(len(moves))
        return float(_u_turns(moves))

    for seed in range(3):
        cube = CubieCube().apply(random_moves(3, length=10, seed=seed))
        plain = engine.solve(cube, budget_s=0.2)
        lengths.clear()
        scored = engine.solve(cube, budget_s=0.2, score=score, score_slack=0, score_descent=0.5)
        assert cube.apply(scored.moves).is_solved()
        assert len(scored.moves) == len(plain.moves) == min(lengths)  # slack 0
        assert _u_turns(scored.moves) <= _u_turns(plain.moves)
        assert scored.stats["candidates_scored"] == len(lengths)


def test_a_failing_scorer_stops_the_search_and_the_engine_stays_usable(
    engine: TwoPhaseSolver,
) -> None:
    cube = _cubes(1, 6)[0]

    def broken(moves: Sequence[Move]) -> float:
        raise ValueError("scorer broke")

    started = time.perf_counter()
    with pytest.raises(ValueError, match="scorer broke"):
        engine.solve(cube, budget_s=2.0, score=broken)
    assert time.perf_counter() - started < 1.5  # the workers were stopped, not waited out
    assert cube.apply(engine.solve(cube, budget_s=0.01).moves).is_solved()


def test_collector_queue_is_bounded_and_drains() -> None:
    collector = Collector(20, 0, 1)
    assert collector.drain(0.0) == []
    assert collector.stats() == {"received": 0, "dropped": 0, "shortest": -1}
    with pytest.raises(ValueError):
        Collector(40, 0)


def test_reuse_from_new_states_with_a_hard_deadline() -> None:
    solver = get_solver()
    assert get_solver() is solver  # tables loaded once per process
    tables, pool = solver.tables, solver._workers()
    for cube in _cubes(4, 8):
        started = time.perf_counter()
        solution = solver.solve(cube, budget_s=0.05, timeout_s=0.3)
        elapsed = time.perf_counter() - started
        assert cube.apply(solution.moves).is_solved()
        assert elapsed < 0.05 + 0.25  # generous: the machine is shared
    assert solver.tables is tables and solver._workers() is pool
    # a random state has no solution of 14 moves (almost surely; the search for one takes
    # far longer than this): the hard deadline ends it
    cube = _cubes(1, 9)[0]
    started = time.perf_counter()
    with pytest.raises(NoSolutionError, match="timeout_s"):
        solver.solve(cube, max_length=14, budget_s=0.1, timeout_s=0.1)
    assert time.perf_counter() - started < 0.1 + 0.25
