"""Benchmark: robot time per mechanism kind (solve, then the kind's exact planner).

    python bench/robot_kinds.py [--states 200] [--seed 2026] [--budgets 0.01,0.1,1] [--json]
                                [--only KIND ...] [--modes baseline,coopt[,scored]]

On the same uniformly random 3x3 states, for each mechanism kind and solver budget, a row per
mode (the modes take turns on each state, so that the shared machine's load weighs on each
alike):

* ``baseline``: the shortest two-phase solution found within the budget, then the kind's
  planner (the fastest action sequence for that solution: :class:`robot.kinds.KindPlanner`),
  the CUBOTino-style way;
* ``coopt``: solving and planning together (:func:`robot.kinds.cooptimise.fastest_plan` with
  ``method="search"``): the shortest-solution search for half the budget, then the
  search whose objective is the kind's planned time (:mod:`robot.kinds.mechsearch`) for the
  rest; ``improved`` counts the states where it found a faster solution than the first half's;
* ``scored`` (the first version, ``method="score"``, ``fastest_plan``'s default): the engine
  scores every candidate it meets within the budget by the kind's exact robot time and keeps
  the fastest.

``ratio`` is a row's mean robot time over the baseline's (below 1 is faster).

Every plan is replayed through the simulated mechanism (:func:`robot.kinds.replay`) on the
facelet cube and must end solved (``replayed``); ``wire_replayed``: the plan with the parts
brought home, as the daemon sends it (:func:`robot.kinds.wire.wire_program`: motor moves, timed
per solution in ``wire_ms``), drives the simulated mechanism motor by motor
(:class:`robot.kinds.simulated.MechanismCube`) to a solved cube. ``plan_ms`` is the planner's
time per solution (the full plan with its actions; wall time, and ``plan_cpu_ms`` the
thread's CPU time, which the load of the machine does not inflate); ``score_ms`` the time per
candidate scored (:meth:`~robot.kinds.KindPlanner.seconds`, scored only) and ``scored_mean``
how many were scored per solve; ``search_ms_median`` the solver's time (scoring included).
Kinds: ``turntable`` (CUBOTino-like servo turntable, flipper and cover), ``turntable-stepper``
(the same with an unlimited stepper turntable), ``two-gripper`` (two perpendicular grippers with
180° servos).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

import _args

from firmware_protocol.moves import Face as WireFace
from robot.kinds import KindPlanner, Mechanism, Turntable, TwoGripper, replay
from robot.kinds.cooptimise import fastest_plan
from robot.kinds.profile import TurntableConfig, TwoGripperConfig
from robot.kinds.simulated import MechanismCube
from robot.kinds.wire import wire_program
from solver.api import solve
from solver.cube.cubie import CubieCube

KINDS: dict[str, Mechanism] = {
    "turntable": Turntable(),
    "turntable-stepper": Turntable(table_positions=None),
    "two-gripper": TwoGripper(),
}
#: the same mechanisms as profile tables (their motors, for the wire replay)
TABLES: dict[str, TurntableConfig | TwoGripperConfig] = {
    "turntable": TurntableConfig(),
    "turntable-stepper": TurntableConfig(table_positions=()),
    "two-gripper": TwoGripperConfig(),
}

MODES = ("baseline", "coopt", "scored")

FIELDS = (
    "kind",
    "mode",
    "budget_s",
    "states",
    "replayed",
    "wire_replayed",
    "actions_mean",
    "robot_s_mean",
    "face_turns_mean",
    "ratio",
    "plan_ms",
    "plan_cpu_ms",
    "wire_ms",
    "score_ms",
    "scored_mean",
    "improved",
    "search_ms_median",
)


def _states(count: int, seed: int) -> list[Any]:
    import random

    rng = random.Random(seed)
    return [CubieCube.random(rng).to_cube() for _ in range(count)]


def _planner(kind: str) -> KindPlanner:
    planner = KindPlanner(KINDS[kind])
    planner.prepare()  # tables once per mechanism, not in the per-solution figure
    for cube in _states(2, 0):  # and the time-only tables of the moves
        planner.seconds(solve(cube).moves)
    return planner


class _Tally:
    """One mode's figures over the states, added one state at a time."""

    def __init__(self, kind: str, mode: str, budget: float, planner: KindPlanner) -> None:
        self.kind, self.mode, self.budget, self.planner = kind, mode, budget, planner
        self.replayed = self.wire_replayed = self.scored = self.improved = 0
        self.wire_s = self.plan_s = self.plan_cpu = self.score_s = 0.0
        self.seconds: list[float] = []
        self.actions: list[int] = []
        self.turns: list[int] = []
        self.search: list[float] = []

    def add(self, cube: Any) -> None:
        planner, mechanism, budget = self.planner, self.planner.mechanism, self.budget
        started = time.perf_counter()
        if self.mode in ("coopt", "scored"):
            method = "search" if self.mode == "coopt" else "score"
            result = fastest_plan(cube, planner, budget, method=method)
            solution = result.solution
            self.search.append((time.perf_counter() - started - result.plan_s) * 1000)
            started, cpu = time.perf_counter(), time.thread_time()
            plan = planner.plan(solution.moves)  # timed here as the baseline's is
            self.plan_cpu += time.thread_time() - cpu
            self.plan_s += time.perf_counter() - started
            assert abs(plan.seconds - result.seconds) < 1e-9
            self.scored += solution.stats.get("candidates_scored", 0)
            self.score_s += solution.stats.get("score_s", 0.0)
            self.improved += bool(solution.stats.get("improved"))
        else:
            solution = solve(cube, budget_s=budget)
            self.search.append((time.perf_counter() - started) * 1000)
            started, cpu = time.perf_counter(), time.thread_time()
            plan = planner.plan(solution.moves)
            self.plan_cpu += time.thread_time() - cpu
            self.plan_s += time.perf_counter() - started
        final, _ = replay(mechanism, cube, [a.action for a in plan.actions])
        self.replayed += final.is_solved()
        started = time.perf_counter()
        table = TABLES[self.kind]
        wired = wire_program(table, mechanism, planner.home(plan).actions, mechanism.start)
        self.wire_s += time.perf_counter() - started
        sim = MechanismCube(cube, table)
        for action in wired:
            sim.apply(WireFace(action.motor).name, action.turns)
        self.wire_replayed += sim.cube.is_solved() and sim.faults == 0
        self.seconds.append(plan.seconds)
        self.actions.append(len(plan))
        self.turns.append(len(solution.moves))

    def row(self) -> dict[str, Any]:
        n = len(self.seconds)
        return {
            "kind": self.kind,
            "mode": self.mode,
            "budget_s": self.budget,
            "states": n,
            "replayed": self.replayed,
            "wire_replayed": self.wire_replayed,
            "wire_ms": round(self.wire_s / n * 1000, 2),
            "actions_mean": round(statistics.fmean(self.actions), 1),
            "robot_s_mean": round(statistics.fmean(self.seconds), 3),
            "face_turns_mean": round(statistics.fmean(self.turns), 2),
            "ratio": None,
            "plan_ms": round(self.plan_s / n * 1000, 2),
            "plan_cpu_ms": round(self.plan_cpu / n * 1000, 2),
            "score_ms": round(self.score_s / self.scored * 1000, 3) if self.scored else None,
            "scored_mean": round(self.scored / n, 1) if self.mode == "scored" else None,
            "improved": self.improved if self.mode == "coopt" else None,
            "search_ms_median": round(statistics.median(self.search), 1),
        }


def run_modes(
    kind: str, budget: float, states: list[Any], modes: list[str], planner: KindPlanner
) -> list[dict[str, Any]]:
    """A row per mode; the modes take turns on each state, so that a change of the machine's
    load while the states are solved weighs on every mode alike."""
    tallies = [_Tally(kind, mode, budget, planner) for mode in modes]
    for cube in states:
        for tally in tallies:
            tally.add(cube)
    return [tally.row() for tally in tallies]


def run(
    kind: str, budget: float, states: list[Any], mode: str, planner: KindPlanner
) -> dict[str, Any]:
    """One mode's row (:func:`run_modes` with that mode alone)."""
    return run_modes(kind, budget, states, [mode], planner)[0]


def _table(rows: list[dict[str, Any]]) -> None:
    head = " ".join(f"{f:>16}" for f in FIELDS)
    print(head)
    print("-" * len(head))
    for row in rows:
        print(" ".join(f"{row[f]!s:>16}" for f in FIELDS))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--states", type=_args.count(1), default=200, help="random states (default 200)"
    )
    ap.add_argument("--seed", type=int, default=2026, help="random seed (default 2026)")
    ap.add_argument(
        "--budgets",
        type=_args.seconds_list(skip_blank=True),
        default="0.01,0.1,1",
        help=f"solver budgets in seconds (0..{_args.MAX_BUDGET_S:g}), comma-separated",
    )
    ap.add_argument("--only", nargs="*", choices=sorted(KINDS), help="kinds to run")
    ap.add_argument(
        "--modes",
        type=_args.name_list(MODES, skip_blank=True),
        default="baseline,coopt",
        help="baseline, coopt, scored (comma-separated; default baseline,coopt)",
    )
    ap.add_argument("--json", action="store_true", help="print the rows as JSON objects")
    args = ap.parse_args(argv)
    budgets: list[float] = args.budgets
    modes: list[str] = args.modes
    states = _states(args.states, args.seed)
    rows = []
    for kind in args.only or list(KINDS):
        planner = _planner(kind)
        for budget in budgets:
            base = None
            for mode, row in zip(
                modes, run_modes(kind, budget, states, modes, planner), strict=True
            ):
                if mode == "baseline":
                    base = row["robot_s_mean"]
                    row["ratio"] = 1.0
                elif base:
                    row["ratio"] = round(row["robot_s_mean"] / base, 4)
                else:
                    row["ratio"] = None
                rows.append(row)
                if args.json:
                    print(json.dumps(row), flush=True)
                else:
                    print(f"... {kind} {mode} {budget}s done", file=sys.stderr, flush=True)
    if not args.json:
        _table(rows)
    solved = all(r["replayed"] == r["wire_replayed"] == r["states"] for r in rows)
    return 0 if solved else 1


if __name__ == "__main__":
    sys.exit(main())
