"""Solving and planning together: the time-only planner is exact, and the co-optimised plan
is never slower than planning the shortest solution (the CUBOTino-style baseline)."""

from __future__ import annotations

import random
from collections.abc import Iterable

import pytest

from robot.kinds import KindPlanner, Mechanism, Turntable, TwoGripper, replay
from robot.kinds.cooptimise import fastest_plan
from solver.api import solve
from solver.cube.cubie import CubieCube
from solver.cube.facelets import Cube
from solver.cube.notation import Move, invert, parse
from solver.scramble import random_moves

MECHANISMS: dict[str, Mechanism] = {
    "cubotino": Turntable(),
    "stepper-turntable": Turntable(table_positions=None),
    "grippers-180": TwoGripper(),
}


@pytest.fixture(scope="module")
def turntable() -> KindPlanner:
    return KindPlanner(Turntable())


@pytest.mark.parametrize("name", MECHANISMS)
def test_time_only_planner_equals_the_full_plan(name: str) -> None:
    planner = KindPlanner(MECHANISMS[name])
    rng = random.Random(11)
    for _ in range(6):
        moves = solve(CubieCube.random(rng).to_cube()).moves
        assert planner.seconds(moves) == pytest.approx(planner.plan(moves).seconds, abs=1e-9)
    # runs of turns about one axis, half turns, repeats that merge
    for text in ("U D2 U' D R2 L2", "F2 B F2 R R", "U2", ""):
        assert planner.seconds(parse(text)) == pytest.approx(
            planner.plan(parse(text)).seconds, abs=1e-9
        )


@pytest.mark.parametrize("method", ["search", "score"])
def test_fastest_plan_is_never_slower_than_the_baseline(
    turntable: KindPlanner, method: str
) -> None:
    """Short scrambles, so that both searches finish within the budget: then the baseline's
    solution is one of the candidates, and the co-optimised plan can only be as fast or
    faster."""
    for seed in range(6):
        scramble = random_moves(3, length=10, seed=seed)
        cube = Cube.solved(3).apply(scramble)
        baseline = turntable.plan(solve(cube, budget_s=0.3).moves)
        result = fastest_plan(cube, turntable, 0.3, slack=0, method=method)
        assert result.seconds <= baseline.seconds + 1e-9
        final, _ = replay(turntable.mechanism, cube, [a.action for a in result.plan.actions])
        assert final.is_solved()
        assert len(result.solution.moves) <= len(invert(scramble))


class _Recording(KindPlanner):
    """A planner that remembers every candidate's time it was asked for."""

    def __init__(self, mechanism: Mechanism) -> None:
        super().__init__(mechanism)
        self.asked: list[float] = []

    def seconds(self, moves: Iterable[Move]) -> float:
        value = super().seconds(moves)
        self.asked.append(value)
        return value


def test_fastest_plan_keeps_the_fastest_candidate() -> None:
    planner = _Recording(Turntable())
    cube = CubieCube.random(random.Random(7)).to_cube()
    result = fastest_plan(cube, planner, 0.1, slack=2, descent=0.0, method="score")
    assert len(planner.asked) == result.solution.stats["candidates_scored"] > 1
    assert result.seconds == pytest.approx(min(planner.asked))
    assert max(planner.asked) > min(planner.asked)  # the candidates differ: the choice matters


def test_scored_fastest_plan_on_random_states_replays_solved(turntable: KindPlanner) -> None:
    rng = random.Random(2026)
    for _ in range(3):
        cube = CubieCube.random(rng).to_cube()
        result = fastest_plan(cube, turntable, 0.05, max_length=21, method="score")
        assert len(result.solution.moves) <= 21
        assert result.seconds == pytest.approx(result.solution.stats["score"])
        assert result.solution.stats["candidates_scored"] >= 1
        final, _ = replay(turntable.mechanism, cube, [a.action for a in result.plan.actions])
        assert final.is_solved()


@pytest.mark.parametrize("name", MECHANISMS)
def test_searched_fastest_plan_on_random_states_replays_solved(name: str) -> None:
    """The mechanism search: never slower than the shortest solution it started from, within
    the length asked for, and its plan solves the cube."""
    planner = KindPlanner(MECHANISMS[name])
    rng = random.Random(2027)
    for _ in range(3):
        cube = CubieCube.random(rng).to_cube()
        result = fastest_plan(cube, planner, 0.1, max_length=22, method="search")
        stats = result.solution.stats
        assert stats["method"] == "search"
        assert len(result.solution.moves) <= 22
        assert result.seconds <= stats["shortest_s"] + 1e-9
        if stats["improved"]:
            assert result.solution.robot_time_s is not None
            assert result.seconds <= result.solution.robot_time_s + 1e-9
        final, _ = replay(planner.mechanism, cube, [a.action for a in result.plan.actions])
        assert final.is_solved()


def test_fastest_plan_refuses_an_unknown_method(turntable: KindPlanner) -> None:
    with pytest.raises(ValueError, match="method"):
        fastest_plan(Cube.solved(3), turntable, 0.0, method="guess")
