"""Benchmark: big-cube solutions on a six-motor robot whose grippers hold 1..max_depth layers.

    python bench/plan_nxn.py [--sizes 4,5,6,7] [--states 3] [--depths 1,2,3] [--seed 2026] [--json]

For each N >= 4, uniformly random states (:func:`solver.scramble.random_state_nxn`, fixed
seed) are solved once by the engine for the size (``auto``); each solution is then planned
(:class:`robot.planner.Planner`) for six motors with grippers of ``max_depth`` layers, one row
per (N, max_depth):

* ``planned``: solutions the robot can execute (the others are refused with ``PlanError``: a
  move deeper than the grippers hold); ``verified``: planned programs that leave the facelet
  cube solved when their physical moves are applied to the state;
* ``solver_moves_mean`` (the solution, SiGN moves), ``motor_moves_mean`` and ``groups_mean``
  (motor turns, simultaneous pairs counted once), ``robot_s_mean`` (the program's estimate under
  the default cost model), ``deep_share`` (share of motor moves gripping more than one layer);
* ``plan_ms_median``: the planner's time per solution.
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

from robot.config import MotorConfig, MotorsConfig
from robot.errors import PlanError
from robot.planner import Planner
from solver.api import solve
from solver.cost import CostModel
from solver.cube.facelets import MAX_N, Cube
from solver.scramble import random_state_nxn

#: the most layers ``[motors.X] max_depth`` lets a gripper hold (its field's upper bound)
MAX_DEPTH: int = next(
    bound.le for bound in MotorConfig.model_fields["max_depth"].metadata if hasattr(bound, "le")
)

FIELDS = (
    "n",
    "max_depth",
    "states",
    "planned",
    "verified",
    "solver_moves_mean",
    "motor_moves_mean",
    "groups_mean",
    "robot_s_mean",
    "deep_share",
    "plan_ms_median",
)


def _motors(max_depth: int) -> MotorsConfig:
    return MotorsConfig.model_validate(
        {face: MotorConfig(motor=k, max_depth=max_depth) for k, face in enumerate("URFDLB")}
    )


def _row(n: int, depth: int, cases: list[tuple[Cube, list[Any]]]) -> dict[str, Any]:
    planner = Planner(_motors(depth), CostModel(), n)
    programs, times, verified = [], [], 0
    for state, moves in cases:
        started = time.perf_counter()
        try:
            program = planner.plan(moves)
        except PlanError:
            continue
        times.append((time.perf_counter() - started) * 1000)
        programs.append(program)
        verified += state.apply(program.face_moves).is_solved()
    motor = [len(p.moves) for p in programs]

    def mean(values: list[float] | list[int]) -> float | None:
        return round(statistics.fmean(values), 2) if values else None

    deep = sum(m.depth > 1 for p in programs for m in p.moves)
    return {
        "n": n,
        "max_depth": depth,
        "states": len(cases),
        "planned": len(programs),
        "verified": verified,
        "solver_moves_mean": mean([len(m) for _, m in cases]),
        "motor_moves_mean": mean(motor),
        "groups_mean": mean([p.groups for p in programs]),
        "robot_s_mean": mean([p.estimate_s for p in programs]),
        "deep_share": round(deep / sum(motor), 3) if motor else None,
        "plan_ms_median": round(statistics.median(times), 2) if times else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        type=_args.int_list(4, MAX_N, what="a big cube's size"),
        default="4,5,6,7",
        help=f"big cubes only (4..{MAX_N}), comma-separated",
    )
    parser.add_argument("--states", type=_args.count(1), default=3)
    parser.add_argument(
        "--depths",
        type=_args.int_list(1, MAX_DEPTH, what="a gripper's layers"),
        default="1,2,3",
        help=f"layers a gripper holds (1..{MAX_DEPTH}), comma-separated",
    )
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    args = parser.parse_args(argv)
    sizes: list[int] = args.sizes
    rows = []
    for n in sizes:
        rng = random.Random(args.seed + n)
        cases = []
        for _ in range(args.states):
            state = random_state_nxn(n, rng.randrange(2**32))
            cases.append((state, list(solve(state, "auto").moves)))
        rows += [_row(n, d, cases) for d in args.depths]
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    widths = {f: max(len(f), 6) for f in FIELDS}
    print(" ".join(f"{f:>{widths[f]}}" for f in FIELDS))
    for row in rows:
        print(" ".join(f"{'-' if row[f] is None else row[f]!s:>{widths[f]}}" for f in FIELDS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
