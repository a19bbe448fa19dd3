"""Benchmark: the method engines (LBL, CFOP, Old Pochmann tracing) on the same random states.

    python bench/methods.py [--states 200] [--seed 2024] [--json] [--only NAME ...]

Every row runs in a fresh Python process on the same uniformly random states
(``CubieCube.random(random.Random(seed))``, the states of ``bench/solve3x3.py``). A first solve
of a state outside the set builds the engine's tables (``first_call_s``); then every state is
solved through ``solver.api.solve`` and timed, and every solution is checked by applying it
(``verified``). ``stages`` gives the mean HTM of each stage. Rows:

* ``lbl``: seven beginner stages (target: at most 110 HTM on average)
* ``cfop``: cross, four pairs, OLL, PLL (target: at most 55 HTM on average)
* ``cfop neutral``: the best of the six crosses (six times the work)
* ``trace``: Old Pochmann swaps of the seed 002 trace

Targets for the time: a median of at most 200 ms per solve.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from typing import Any

import _args

from solver.api import solve
from solver.cube.cubie import CubieCube

ROWS: dict[str, tuple[str, dict[str, Any]]] = {
    "lbl": ("lbl", {}),
    "cfop": ("cfop", {}),
    "cfop neutral": ("cfop", {"cross": "neutral"}),
    "trace": ("trace", {}),
}
DEFAULT_ROWS = ("lbl", "cfop", "trace")


def states(n: int, seed: int) -> list[CubieCube]:
    rng = random.Random(seed)
    return [CubieCube.random(rng) for _ in range(n)]


def run_row(name: str, n: int, seed: int) -> dict[str, Any]:
    engine, extra = ROWS[name]
    warm = CubieCube.random(random.Random(seed + 1))
    t0 = time.perf_counter()
    solve(warm, engine, **extra)
    first_call = time.perf_counter() - t0
    htm: list[int] = []
    stm: list[int] = []
    ms: list[float] = []
    per_stage: dict[str, list[int]] = defaultdict(list)
    verified = 0
    for cc in states(n, seed):
        cube = cc.to_cube()
        t0 = time.perf_counter()
        solution = solve(cube, engine, **extra)
        ms.append(1000 * (time.perf_counter() - t0))
        if cube.apply(solution.moves).is_solved():
            verified += 1
        htm.append(solution.htm)
        stm.append(solution.stm)
        for stage in solution.stages:
            per_stage[stage.name].append(len(stage.moves))
    ms.sort()
    return {
        "name": name,
        "states": n,
        "verified": verified,
        "htm_mean": round(statistics.mean(htm), 2),
        "htm_max": max(htm),
        "stm_mean": round(statistics.mean(stm), 2),
        "stm_max": max(stm),
        "ms_median": round(statistics.median(ms), 2),
        "ms_p95": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 2),
        "ms_max": round(ms[-1], 2),
        "first_call_s": round(first_call, 2),
        "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "stages": {k: round(statistics.mean(v), 2) for k, v in per_stage.items()},
    }


def print_table(rows: list[dict[str, Any]]) -> None:
    head = (
        f"{'row':<14} {'ok':>7} {'HTM mean':>8} {'max':>4} {'STM mean':>8} {'max':>4} "
        f"{'ms med':>7} {'ms p95':>7} {'ms max':>7} {'1st s':>6} {'MB':>5}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        print(
            f"{r['name']:<14} {r['verified']:>3}/{r['states']:<3} {r['htm_mean']:>8.2f} "
            f"{r['htm_max']:>4} {r['stm_mean']:>8.2f} {r['stm_max']:>4} {r['ms_median']:>7.2f} "
            f"{r['ms_p95']:>7.2f} {r['ms_max']:>7.2f} {r['first_call_s']:>6.2f} "
            f"{r['rss_mb']:>5.0f}"
        )
    for r in rows:
        stages = ", ".join(f"{k} {v:.1f}" for k, v in r["stages"].items())
        print(f"  {r['name']} stages (mean HTM): {stages}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--states", type=_args.count(1), default=200)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--json", action="store_true", help="print the rows as JSON objects")
    ap.add_argument("--only", nargs="*", metavar="NAME", choices=list(ROWS), help="rows to run")
    # child process: run one row, print JSON
    ap.add_argument("--row", choices=list(ROWS), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.row:
        print(json.dumps(run_row(args.row, args.states, args.seed)))
        return 0
    rows = []
    for name in args.only or DEFAULT_ROWS:
        cmd = [sys.executable, os.path.abspath(__file__), "--row", name]
        cmd += ["--states", str(args.states), "--seed", str(args.seed)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(f"row {name!r} failed:\n{done.stderr}", file=sys.stderr)
            return 1
        row = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append(row)
        if args.json:
            print(json.dumps(row), flush=True)
    if not args.json:
        print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
