"""Offline: what a search during the motion can still save, by how far the plan has gone.

    python bench/anytime_remainder.py [--states 20] [--seed 2026] [--head-start 0.003]
                                      [--head-threads 1] [--head-directions 6] [--after 1,2,3]
                                      [--budgets 0.05,0.15,0.3] [--json]

For uniformly random 3x3 states (``CubieCube.random`` with the seed): the anytime head start
(the robot-time search for ``--head-start`` seconds on ``--head-threads`` threads through an
engine search session searching ``--head-directions`` directions, going on until its first
solution: the daemon runs it on two threads and the engine's six directions) is
planned by the bundled ``simulated`` profile's planner; its first ``k`` motion groups (``--after``)
are taken as committed, and the remainder of the plan is compared with a fresh robot-time
search (two threads, each budget of ``--budgets``) from the state after them, through the
engine's search session as anytime solving runs it. The whole plan's robot time is scored
exactly at the join: the committed groups, the settle after them, then the remainder as its
own groups (a committed group never merges with the first one after it). For reference, a
fresh search of the whole state with the same budget (the fixed-budget mode).

Per ``(after, budget)`` (``--json``: one row each): ``head_s`` the head-start plan's robot
time, ``kept_s`` that of the committed groups, ``remainder_s`` the plan's remainder,
``fresh_s`` the fresh search's remainder, ``wins`` how many states it beat the remainder in,
``whole_s`` the whole plan with the better of the two, ``fixed_s`` the whole state searched
for the budget.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

# run as a script, bench/ comes first on sys.path and bench/vision.py would shadow the
# vision package (robot.config reads files with vision.imagefile): the checkout's root first
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _args

from robot.bundled import bundled_path, load_profile
from robot.planner import Planner
from solver.api import solve
from solver.cube.cubie import CubieCube
from solver.engines.twophase.engine import get_solver
from solver.engines.twophase.settings import MAX_LENGTH_LIMIT, MAX_THREADS

#: the longest head start a profile may give (``[solver] head_start_s``), in seconds
MAX_HEAD_START_S = 1.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=_args.count(1), default=20)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--head-start", type=_args.seconds(0.0, MAX_HEAD_START_S), default=0.003)
    ap.add_argument(
        "--head-threads",
        type=_args.count(1, MAX_THREADS),
        default=1,
        help=f"the head start's threads (1..{MAX_THREADS})",
    )
    ap.add_argument(
        "--head-directions",
        type=int,
        default=6,
        choices=(1, 2, 3, 6),
        help="the head start's search directions (the daemon: 6)",
    )
    # a plan has no more motion groups than moves (at most MAX_LENGTH_LIMIT)
    ap.add_argument(
        "--after",
        type=_args.int_list(1, MAX_LENGTH_LIMIT),
        default="1,2,3",
        help="committed groups",
    )
    ap.add_argument("--budgets", type=_args.seconds_list(), default="0.05,0.15,0.3", help="seconds")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    config = load_profile(bundled_path("simulated"))
    cost = config.cost_model
    planner = Planner(config.motors, cost)
    session = get_solver().session(cost_model=cost, threads=2)
    head_session = get_solver().session(
        cost_model=cost, threads=args.head_threads, directions=args.head_directions
    )
    rng = random.Random(args.seed)
    cubes = [CubieCube.random(rng).to_cube() for _ in range(args.states)]
    afters: list[int] = args.after
    budgets: list[float] = args.budgets
    solve(cubes[0], "twophase", budget_s=0.01, cost_model=cost)  # the tables load
    samples: dict[tuple[int, float], list[dict[str, float]]] = {}
    for cube in cubes:
        began = time.monotonic()
        head = head_session.search(cube, began + args.head_start, timeout_at=began + 1.0)
        if head is None:
            raise RuntimeError(f"no head start solution in 1 s: {cube.to_facelets()}")
        program = planner.plan(head.moves)
        plan = list(program.moves)
        ends = [i + 1 for i, m in enumerate(plan) if not m.simultaneous_with_next]
        fixed = {
            b: planner.plan(
                solve(cube, "twophase", budget_s=b, cost_model=cost, threads=2).moves
            ).estimate_s
            for b in budgets
        }
        for after in afters:
            if after >= len(ends):
                continue
            k = ends[after - 1]
            kept = cost.estimate([m.as_move() for m in plan[:k]])
            remainder = cost.estimate([m.as_move() for m in plan[k:]])
            # the join: the committed groups, one settle, the remainder's own groups
            assert abs(kept + cost.settle_s + remainder - program.estimate_s) < 1e-9
            state = cube.apply([m.as_move() for m in plan[:k]])
            for b in budgets:
                found = session.search(state, time.monotonic() + b)
                fresh = planner.plan(found.moves).estimate_s if found is not None else remainder
                samples.setdefault((after, b), []).append(
                    {
                        "head_s": program.estimate_s,
                        "kept_s": kept,
                        "remainder_s": remainder,
                        "fresh_s": fresh,
                        "win": float(fresh < remainder - 1e-9),
                        "whole_s": kept + cost.settle_s + min(fresh, remainder),
                        "fixed_s": fixed[b],
                    }
                )
    rows: list[dict[str, Any]] = []
    for (after, b), items in sorted(samples.items()):

        def mean(key: str, items: list[dict[str, float]] = items) -> float:
            return round(statistics.fmean(i[key] for i in items), 4)

        rows.append(
            {
                "after_groups": after,
                "budget_s": b,
                "head_directions": args.head_directions,
                "states": len(items),
                "head_s": mean("head_s"),
                "kept_s": mean("kept_s"),
                "remainder_s": mean("remainder_s"),
                "fresh_s": mean("fresh_s"),
                "wins": int(sum(i["win"] for i in items)),
                "whole_s": mean("whole_s"),
                "fixed_s": mean("fixed_s"),
            }
        )
    if args.json:
        for r in rows:
            print(json.dumps(r))
        return 0
    print(
        f"{'after':>6}{'budget':>8}{'head_s':>8}{'kept_s':>8}{'remain':>8}{'fresh':>8}"
        f"{'wins':>7}{'whole_s':>9}{'fixed_s':>9}"
    )
    for r in rows:
        print(
            f"{r['after_groups']:>6}{r['budget_s']:>8.3f}{r['head_s']:>8.3f}{r['kept_s']:>8.3f}"
            f"{r['remainder_s']:>8.3f}{r['fresh_s']:>8.3f}{r['wins']:>4}/{r['states']:<2}"
            f"{r['whole_s']:>9.3f}{r['fixed_s']:>9.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
