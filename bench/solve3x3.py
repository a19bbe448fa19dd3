"""Benchmark: the two-phase engine against the reference solvers on the same random states.

    python bench/solve3x3.py [--states 200] [--seed 2024] [--json] [--only NAME ...]

Every row runs in a fresh Python process (so ``first_call_s`` is a real first call, tables
loaded or built included, and ``rss_mb`` is that process's peak memory) on the same uniformly
random states (``CubieCube.random`` with the seed). Every returned solution is checked by
applying it to its state (``verified``). Rows:

* ``twophase first``: budget 0 (the first solution of at most 20 moves)
* ``twophase 10ms`` / ``100ms`` / ``1s``: shortest solution found within the budget
* ``twophase robot 10ms`` / ``100ms`` / ``1s``: fastest robot execution (default cost model)
* ``kociemba`` and ``kociemba max20``: the ``kociemba`` package (C), when importable
  (``pip install kociemba``; an optional bench dependency)
* ``RubikTwoPhase 20`` / ``RubikTwoPhase 1s``: hkociemba's Python solver, when importable and
  ``--rubiktwophase`` is given (its first run builds tables for about 15 minutes in the
  working directory)

``robot_s_mean`` is the default cost model's estimate for every row. ``knodes_mean`` (the
two-phase rows only; None for the others) is the mean number of search nodes per solve (phase 1
and phase 2, both worker threads, in thousands): on a machine shared with other work the
lengths depend on how much of the budget the search got, and the node count says how much.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import _args

from solver.cost import DEFAULT_COST_MODEL
from solver.cube.cubie import CubieCube
from solver.cube.notation import Metric, count, parse

FIELDS = (
    "name",
    "states",
    "verified",
    "htm_mean",
    "htm_median",
    "htm_max",
    "qtm_mean",
    "robot_s_mean",
    "ms_median",
    "ms_p95",
    "ms_max",
    "first_call_s",
    "rss_mb",
    "knodes_mean",
)

TWOPHASE_ROWS: dict[str, tuple[float, bool]] = {
    "twophase first": (0.0, False),
    "twophase 10ms": (0.01, False),
    "twophase 100ms": (0.1, False),
    "twophase 1s": (1.0, False),
    "twophase robot 10ms": (0.01, True),
    "twophase robot 100ms": (0.1, True),
    "twophase robot 1s": (1.0, True),
}


def states(n: int, seed: int) -> list[CubieCube]:
    rng = random.Random(seed)
    return [CubieCube.random(rng) for _ in range(n)]


Solver = Callable[[CubieCube], str]


class TwoPhaseRow:
    """A two-phase row's solver, counting the search nodes of every solve."""

    def __init__(self, budget_s: float, robot: bool) -> None:
        self.budget_s = budget_s
        self.cost = DEFAULT_COST_MODEL if robot else None
        self.nodes: list[int] = []

    def __call__(self, cube: CubieCube) -> str:
        from solver.engines.twophase.engine import get_solver

        solution = get_solver().solve(cube, budget_s=self.budget_s, cost_model=self.cost)
        self.nodes.append(int(solution.stats["nodes_phase1"] + solution.stats["nodes_phase2"]))
        return str(solution)


def make_solver(name: str) -> Solver:
    if name in TWOPHASE_ROWS:
        budget, robot = TWOPHASE_ROWS[name]
        return TwoPhaseRow(budget, robot)
    if name.startswith("kociemba"):
        import kociemba

        depth = 20 if name.endswith("max20") else 24

        def run_kociemba(cube: CubieCube) -> str:
            return str(kociemba.solve(cube.to_facelets(), max_depth=depth))

        return run_kociemba
    if name.startswith("RubikTwoPhase"):
        import twophase.solver as sv

        # RubikTwoPhase returns as soon as it holds a solution of at most max_length moves, and
        # at its timeout returns the best so far. "20": the first solution within 20 moves (a
        # long timeout never ends that search early); "1s": the best it finds in one second
        # (max_length 0 is never reached, so it searches the whole second).
        max_length, timeout = (0, 1.0) if name.endswith("1s") else (20, 60.0)

        def run_rtp(cube: CubieCube) -> str:
            text = str(sv.solve(cube.to_facelets(), max_length, timeout))
            tokens = text.split("(")[0].split()
            return " ".join(t[0] + {"1": "", "2": "2", "3": "'"}[t[1]] for t in tokens)

        return run_rtp
    raise SystemExit(f"unknown row {name!r}")


def run_row(name: str, n: int, seed: int) -> dict[str, Any]:
    cubes = states(n, seed)
    solver = make_solver(name)
    htm: list[int] = []
    qtm: list[int] = []
    robot: list[float] = []
    ms: list[float] = []
    verified = 0
    first_call = 0.0
    for i, cube in enumerate(cubes):
        t0 = time.perf_counter()
        text = solver(cube)
        dt = time.perf_counter() - t0
        if i == 0:
            first_call = dt
        else:
            ms.append(1000 * dt)
        moves = parse(text)
        if cube.apply(moves).is_solved():
            verified += 1
        htm.append(count(moves, Metric.HTM))
        qtm.append(count(moves, Metric.QTM))
        robot.append(DEFAULT_COST_MODEL.estimate(moves))
    ms_sorted = sorted(ms) or [0.0]
    nodes = solver.nodes[1:] if isinstance(solver, TwoPhaseRow) else []
    return {
        "name": name,
        "states": n,
        "verified": verified,
        "htm_mean": round(statistics.mean(htm), 3),
        "htm_median": statistics.median(htm),
        "htm_max": max(htm),
        "qtm_mean": round(statistics.mean(qtm), 3),
        "robot_s_mean": round(statistics.mean(robot), 4),
        "ms_median": round(statistics.median(ms_sorted), 3),
        "ms_p95": round(ms_sorted[min(len(ms_sorted) - 1, int(0.95 * len(ms_sorted)))], 3),
        "ms_max": round(ms_sorted[-1], 3),
        "first_call_s": round(first_call, 3),
        "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "knodes_mean": round(statistics.mean(nodes) / 1000, 1) if nodes else None,
    }


#: every row's name (:func:`available_rows`: those this machine can run)
ROW_NAMES = (*TWOPHASE_ROWS, "kociemba", "kociemba max20", "RubikTwoPhase 20", "RubikTwoPhase 1s")


def available_rows(rubiktwophase: bool) -> list[str]:
    rows = list(TWOPHASE_ROWS)
    if importlib.util.find_spec("kociemba") is not None:
        rows += ["kociemba", "kociemba max20"]
    if rubiktwophase and importlib.util.find_spec("twophase") is not None:
        rows += ["RubikTwoPhase 20", "RubikTwoPhase 1s"]
    return rows


def print_table(rows: list[dict[str, Any]]) -> None:
    head = (
        f"{'row':<22} {'ok':>7} {'HTM mean':>8} {'med':>4} {'max':>4} {'QTM':>6} "
        f"{'robot s':>7} {'ms med':>8} {'ms p95':>8} {'ms max':>8} {'1st s':>6} {'MB':>6} "
        f"{'knodes':>7}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        print(
            f"{r['name']:<22} {r['verified']:>3}/{r['states']:<3} {r['htm_mean']:>8.2f} "
            f"{r['htm_median']:>4} {r['htm_max']:>4} {r['qtm_mean']:>6.2f} "
            f"{r['robot_s_mean']:>7.3f} {r['ms_median']:>8.2f} {r['ms_p95']:>8.2f} "
            f"{r['ms_max']:>8.2f} {r['first_call_s']:>6.2f} {r['rss_mb']:>6.0f} "
            f"{'-' if r.get('knodes_mean') is None else r['knodes_mean']:>7}"
        )


def print_robot_gain(rows: list[dict[str, Any]]) -> None:
    """One line per budget run both ways: how much faster the robot-time objective's
    solutions execute than the shortest solutions (the issue's target is 10 %)."""
    by_name = {r["name"]: r for r in rows}
    for name in TWOPHASE_ROWS:
        robot = by_name.get(name.replace("twophase ", "twophase robot ", 1))
        plain = by_name.get(name)
        if "robot" in name or robot is None or plain is None:
            continue
        a, b = plain["robot_s_mean"], robot["robot_s_mean"]
        budget = name.removeprefix("twophase ")
        print(
            f"robot-time objective at {budget}: {b:.3f} s against {a:.3f} s for the shortest "
            f"solutions ({100 * (b - a) / a:+.1f} %)"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--states", type=_args.count(1), default=200)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--json", action="store_true", help="print the rows as JSON objects")
    ap.add_argument(
        "--only", nargs="*", metavar="NAME", choices=ROW_NAMES, help="run only these rows"
    )
    ap.add_argument("--rubiktwophase", action="store_true", help="include RubikTwoPhase rows")
    # child process: run one row, print JSON
    ap.add_argument("--row", choices=ROW_NAMES, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.row:
        print(json.dumps(run_row(args.row, args.states, args.seed)))
        return 0
    names = args.only or available_rows(args.rubiktwophase)
    rows = []
    for name in names:
        cmd = [sys.executable, os.path.abspath(__file__), "--row", name]
        cmd += ["--states", str(args.states), "--seed", str(args.seed)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(f"row {name!r} failed:\n{done.stderr}", file=sys.stderr)
            continue
        row = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append(row)
        if args.json:
            print(json.dumps(row), flush=True)
        else:
            print(f"... {name} done", file=sys.stderr, flush=True)
    if not args.json:
        print_table(rows)
        print_robot_gain(rows)
    return 0 if all(r["verified"] == r["states"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
