"""Benchmark (offline): what anytime solving would save a turntable or two-gripper robot.

    python bench/anytime_kinds.py [--states 12] [--seed 2026] [--only KIND ...]
        [--budgets 0.1,0.5,1] [--head-starts 0.015,0.5] [--lead 0.05] [--window-cap 2]
        [--length-slack 1] [--json]

The daemon's anytime solving ([docs/daemon.md](../docs/daemon.md), ``[solver] anytime``) drives
six face motors only; a turntable or two-gripper robot solves with a fixed budget (its profiles'
``budget_s``: 0.5 s), then executes the plan. Its moves are slow (a turntable's face turn takes
1.6 s or more, most of it flips and spins), so a search has seconds while the machine works, and
the mechanism search (:mod:`robot.kinds.mechsearch`) keeps finding faster plans with time (about
0.975 of the CUBOTino-style baseline at 1 s, 0.918 after 40 s: docs/kinds.md). This bench plays
the anytime scheme offline on the same states as the fixed budgets, one row per mode and kind:

* ``fixed B``: the daemon's way, :func:`robot.kinds.cooptimise.fastest_plan` (its default
  method, as the daemon solves a co-optimising profile) for ``B`` seconds, then the plan with
  the parts brought home (:meth:`~robot.kinds.KindPlanner.home`); ``visible_s`` is the measured
  solve and plan time before the first action.
* ``anytime H``: the mechanism search for the head start ``H`` (``--head-starts``: the six-face
  robot's 15 ms, and the profiles' 0.5 s budget), its plan; then
  solution move by solution move, the plan's actions up to and including the next move are
  committed (they take their planned seconds) and, while they run, the search looks from the cube
  and the machine's state after them (:func:`robot.kinds.mechsearch.costs_from_state`, its
  tables' remaking counted in the window) for a remainder faster than the plan's, for their
  seconds less ``--lead`` (at most ``--window-cap``, which only keeps the bench short: the
  daemon could search the whole window); a faster one replaces the rest of the plan. ``visible_s``
  is the head start and its plan; ``refined`` the windows whose search replaced the rest.

``wall_s`` = ``visible_s`` + ``motion_s`` (every committed action's seconds and the homing);
``ratio`` is a row's mean wall over its kind's best fixed budget's, ``vs_best_s`` the mean of
the state-by-state differences from it, with their standard error ``vs_best_se_s``. Every
executed action sequence, homing included, is replayed through the simulated mechanism from the
scrambled cube (:func:`robot.kinds.replay`) and must end solved with the parts at their start
(``replayed``).
The searches run in this process for their windows' length, so a state takes about as long as
its plan's motion (capped windows: less).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

import _args
from robot_kinds import KINDS, _planner, _states

from robot.kinds import KindPlanner, replay
from robot.kinds.cooptimise import fastest_plan
from robot.kinds.mechsearch import (
    DEFAULT_LENGTH_SLACK,
    costs_for,
    costs_from_state,
    search_fastest,
)
from robot.kinds.planner import ActionPlan, PlannedAction
from solver.cube.cubie import CubieCube
from solver.cube.facelets import Cube

#: the longest solution the searches may return (the co-optimising solve's own limit)
MAX_LENGTH = 22
ANYTIME_KINDS = ("turntable", "two-gripper")
FIELDS = (
    "kind",
    "mode",
    "states",
    "replayed",
    "wall_s_mean",
    "visible_s_mean",
    "motion_s_mean",
    "ratio",
    "vs_best_s",
    "vs_best_se_s",
    "refined_mean",
    "windows_mean",
    "searched_s_mean",
)


def fixed(cube: Cube, planner: KindPlanner, budget: float) -> dict[str, Any]:
    started = time.perf_counter()
    result = fastest_plan(cube, planner, budget)
    homed = planner.home(result.plan)
    visible = time.perf_counter() - started
    actions = [a.action for a in homed.actions]
    return {
        "visible_s": visible,
        "motion_s": homed.seconds,
        "replayed": _replayed(planner, cube, actions),
        "refined": 0,
        "windows": 0,
        "searched_s": 0.0,
    }


def anytime(
    cube: Cube, planner: KindPlanner, head_start: float, lead: float, cap: float, slack: int
) -> dict[str, Any]:
    costs = costs_for(planner)
    if costs is None:
        raise SystemExit("the mechanism search cannot take this mechanism")
    started = time.perf_counter()
    found = search_fastest(cube, costs, head_start, MAX_LENGTH)
    assert found is not None  # without ``beat`` the search raises instead
    plan = planner.plan(found.moves)
    visible = time.perf_counter() - started
    cubie = CubieCube.from_cube(cube)  # the cube in the plan's (notation) frame
    executed: list[PlannedAction] = []
    refined = windows = 0
    searched = 0.0
    while plan.move_ends:
        move, count, state = plan.move_ends[0]
        block = plan.actions[:count]
        executed.extend(block)
        cubie = cubie.apply([move])
        rest = [m for m, _, _ in plan.move_ends[1:]]
        plan = _suffix(planner, plan, count, state)
        window = min(cap, sum(a.seconds for a in block) - lead)
        if not rest or window <= 0:
            continue
        windows += 1
        began = time.perf_counter()
        costs_here = costs_from_state(planner, state)
        left = window - (time.perf_counter() - began)
        if left <= 0:
            continue
        faster = search_fastest(
            cubie,
            costs_here,
            left,
            MAX_LENGTH,
            length_slack=slack,
            beat=(plan.seconds, len(rest)),
        )
        searched += time.perf_counter() - began
        if faster is not None:
            candidate = planner.plan(faster.moves, state=state)
            if candidate.seconds < plan.seconds - 1e-9:
                plan = candidate
                refined += 1
    homed = planner.home(plan)
    executed.extend(homed.actions)
    actions = [a.action for a in executed]
    return {
        "visible_s": visible,
        "motion_s": sum(a.seconds for a in executed),
        "replayed": _replayed(planner, cube, actions),
        "refined": refined,
        "windows": windows,
        "searched_s": searched,
    }


def _suffix(planner: KindPlanner, plan: ActionPlan, count: int, state: int) -> ActionPlan:
    """The rest of ``plan`` after its first ``count`` actions, planned from ``state`` (the
    plan's own remaining actions: the planner's optimum is the same from there)."""
    rest = [m for m, _, _ in plan.move_ends[1:]]
    suffix = planner.plan(rest, state=state)
    assert (
        abs(suffix.seconds - (plan.seconds - sum(a.seconds for a in plan.actions[:count]))) < 1e-6
    )
    return suffix


def _replayed(planner: KindPlanner, cube: Cube, actions: list[Any]) -> bool:
    final, parts = replay(planner.mechanism, cube, actions)
    return final.is_solved() and parts == planner.mechanism.start


def run_kind(
    kind: str,
    states: list[Cube],
    budgets: list[float],
    heads: list[float],
    lead: float,
    cap: float,
    slack: int,
) -> list[dict[str, Any]]:
    """A row per fixed budget and per head start, the modes taking turns on each state."""
    planner = _planner(kind)
    costs_for(planner)  # the mechanism search's tables once, not in any mode's time
    modes: list[tuple[str, Any]] = [
        (f"fixed {b:g}", lambda c, b=b: fixed(c, planner, b)) for b in budgets
    ]
    modes += [
        (f"anytime {h:g}", lambda c, h=h: anytime(c, planner, h, lead, cap, slack)) for h in heads
    ]
    results: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in modes}
    for number, cube in enumerate(states):
        order = modes if number % 2 == 0 else modes[::-1]  # the load weighs on each alike
        for name, fn in order:
            results[name].append(fn(cube))
    rows = []
    for name, _ in modes:
        got = results[name]
        wall = _walls(got)
        rows.append(
            {
                "kind": kind,
                "mode": name,
                "states": len(got),
                "replayed": sum(r["replayed"] for r in got),
                "wall_s_mean": round(statistics.fmean(wall), 3),
                "visible_s_mean": round(statistics.fmean(r["visible_s"] for r in got), 4),
                "motion_s_mean": round(statistics.fmean(r["motion_s"] for r in got), 3),
                "ratio": None,
                "vs_best_s": None,
                "vs_best_se_s": None,
                "refined_mean": round(statistics.fmean(r["refined"] for r in got), 2),
                "windows_mean": round(statistics.fmean(r["windows"] for r in got), 2),
                "searched_s_mean": round(statistics.fmean(r["searched_s"] for r in got), 2),
            }
        )
    fixed_rows = [r for r in rows if r["mode"].startswith("fixed")]
    best = min(fixed_rows, key=lambda r: r["wall_s_mean"])
    best_walls = _walls(results[best["mode"]])
    for row in rows:
        row["ratio"] = round(row["wall_s_mean"] / best["wall_s_mean"], 4)
        diffs = [a - b for a, b in zip(_walls(results[row["mode"]]), best_walls, strict=True)]
        row["vs_best_s"] = round(statistics.fmean(diffs), 3)
        if len(diffs) > 1:
            row["vs_best_se_s"] = round(statistics.stdev(diffs) / len(diffs) ** 0.5, 3)
    return rows


def _walls(results: list[dict[str, Any]]) -> list[float]:
    return [r["visible_s"] + r["motion_s"] for r in results]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--states", type=_args.count(1), default=12, help="states (default 12)")
    ap.add_argument("--seed", type=int, default=2026, help="random seed (default 2026)")
    ap.add_argument("--only", nargs="*", choices=ANYTIME_KINDS, help="kinds to run")
    ap.add_argument(
        "--budgets",
        type=_args.seconds_list(),
        default=[0.1, 0.5, 1.0],
        help="fixed budgets in seconds (default 0.1,0.5,1)",
    )
    ap.add_argument(
        "--head-starts",
        type=_args.seconds_list(),
        default=[0.015, 0.5],
        help="anytime head starts in seconds (default 0.015,0.5)",
    )
    ap.add_argument("--lead", type=_args.seconds(), default=0.05)
    ap.add_argument("--window-cap", type=_args.seconds(), default=2.0)
    ap.add_argument(
        "--length-slack",
        type=_args.count(0, MAX_LENGTH),
        default=DEFAULT_LENGTH_SLACK,
        help="moves a remainder may be longer than the plan's (default %(default)s, the search's)",
    )
    ap.add_argument("--json", action="store_true", help="print the rows as JSON objects")
    args = ap.parse_args(argv)
    states = _states(args.states, args.seed)
    rows: list[dict[str, Any]] = []
    for kind in args.only or ANYTIME_KINDS:
        assert kind in KINDS
        rows += run_kind(
            kind,
            states,
            args.budgets,
            args.head_starts,
            args.lead,
            args.window_cap,
            args.length_slack,
        )
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    print(" ".join(f"{f:>15}" for f in FIELDS))
    for row in rows:
        print(" ".join(f"{'' if row[f] is None else row[f]!s:>15}" for f in FIELDS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
