"""``bench/anytime_kinds.py``: the anytime scheme played offline on a one-camera kind executes
every action it counts, and what it executes solves the cube."""

from __future__ import annotations

import random
from types import ModuleType

import pytest

from robot.kinds import KindPlanner, Turntable, TwoGripper
from solver.cube.cubie import CubieCube
from tests.benchload import load_bench

pytestmark = pytest.mark.usefixtures("solver_tables")


def _bench() -> ModuleType:
    return load_bench("anytime_kinds")


@pytest.mark.parametrize(
    "mechanism",
    [
        pytest.param(Turntable(), id="turntable"),
        pytest.param(TwoGripper(), id="grippers", marks=pytest.mark.slow),  # 72 machine states
    ],
)
def test_anytime_and_fixed_plays_end_solved_with_the_parts_home(mechanism: object) -> None:
    bench = _bench()
    planner = KindPlanner(mechanism)  # type: ignore[arg-type]
    cube = CubieCube.random(random.Random(3)).to_cube()
    played = bench.anytime(cube, planner, 0.01, 0.05, 0.03, 1)
    assert played["replayed"]
    assert played["windows"] > 10 and played["refined"] <= played["windows"]
    assert 0 < played["visible_s"] < 1.0 and played["motion_s"] > 5.0
    fixed = bench.fixed(cube, planner, 0.02)
    assert fixed["replayed"] and fixed["motion_s"] > 5.0


def test_a_row_compares_each_mode_state_by_state_with_the_best_fixed_budget() -> None:
    bench = _bench()
    states = [CubieCube.random(random.Random(s)).to_cube() for s in (4, 5)]
    rows = bench.run_kind("turntable", states, [0.01, 0.02], [0.01], 0.05, 0.02, 1)
    assert [r["mode"] for r in rows] == ["fixed 0.01", "fixed 0.02", "anytime 0.01"]
    best = min(rows[:2], key=lambda r: r["wall_s_mean"])
    assert best["ratio"] == 1.0 and best["vs_best_s"] == 0.0
    for row in rows:
        assert row["replayed"] == 2 and row["states"] == 2
        assert row["vs_best_s"] == pytest.approx(row["wall_s_mean"] - best["wall_s_mean"], abs=2e-3)
