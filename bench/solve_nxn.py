"""Benchmark of the big-cube solvers: random states of every size, solved and verified.

    python bench/solve_nxn.py                        # the issue's counts (long)
    python bench/solve_nxn.py --quick                # 5 states for N = 2..7, 1 for 8..10
    python bench/solve_nxn.py --sizes 4,5 --count 20 # chosen sizes, one count for all
    python bench/solve_nxn.py --sizes 33 --count 1 --json

States: N = 2 from random moves (30; the 2x2 table makes every solution optimal whatever the
state), N >= 4 from :func:`solver.scramble.random_state_nxn` (uniform, built piece by piece),
seeds 0, 1, 2, ... Each solution is applied to its state and must solve it (``verified``).
Moves are counted in OBTM (a block turn with an outer layer 1, an inner slice 2);
``stage_moves`` is the mean OBTM of each stage; ``centre_per_piece`` is the OBTM of the
centre stages (``inner centres`` and ``bars`` of a 6x6 and 7x7, ``outer centres`` of a 7x7 with
``centres="rings"``, ``first centre``, ``centres``) per centre piece (6·(N-2)²);
``centre_btm_per_piece`` the same with every block turn counted 1, an inner slice too (the
metric of hkociemba's RubikNxNxNSolver figure for N = 101). Times are wall-clock per state on this
machine; ``cpu_ms_median`` the median CPU time of this process per state (all its threads: the
big-cube centres plan on 2, ``CUBEROBOT_NXN_THREADS``); ``main_cpu_ms_median`` the median CPU
time of the calling thread alone (about the wall-clock time on an idle machine with a core per
thread, less the waits for the other thread; the development machine is shared);
``rss_mb`` is the process's peak resident memory after the size. Exit status 1 if any state
was not solved.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _args

from solver import api
from solver.cube.facelets import MAX_N, Cube
from solver.scramble import random_moves, random_state_nxn

#: the issue's counts per size
DEFAULT_COUNTS = {
    **{n: 100 for n in range(2, 8)},
    **{n: 20 for n in range(8, 11)},
    15: 3,
    21: 3,
    33: 1,
    101: 1,
}
QUICK_COUNTS = {**{n: 5 for n in range(2, 8)}, **{n: 1 for n in range(8, 11)}}


def _state(n: int, seed: int) -> Cube:
    if n == 2:
        return Cube.solved(2).apply(random_moves(2, 30, seed=seed))
    if n == 3:
        from solver.scramble import random_state

        return random_state(seed).to_cube()
    return random_state_nxn(n, seed)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run_size(n: int, count: int) -> dict[str, Any]:
    """Solve ``count`` random states of size ``n``; one JSON row."""
    obtm: list[int] = []
    times: list[float] = []
    cpu: list[float] = []
    main_cpu: list[float] = []
    stage_totals: dict[str, float] = {}
    block_totals: dict[str, float] = {}  # every block turn counted 1 (an inner slice too)
    verified = 0
    for seed in range(count):
        cube = _state(n, seed)
        start, cpu_start, main_start = time.perf_counter(), time.process_time(), time.thread_time()
        solution = api.solve(cube)
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - cpu_start) * 1000)
        main_cpu.append((time.thread_time() - main_start) * 1000)
        verified += cube.apply(solution.moves).is_solved() if n <= 12 else _check_big(solution)
        obtm.append(solution.htm)
        for stage in solution.stages:
            moves = int(stage.detail.get("obtm", len(stage.moves)))
            stage_totals[stage.name] = stage_totals.get(stage.name, 0) + moves
            block_totals[stage.name] = block_totals.get(stage.name, 0) + len(stage.moves)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    centre_stages = ("inner centres", "outer centres", "bars", "first centre", "centres")
    centre = sum(stage_totals.get(name, 0) for name in centre_stages) / count
    centre_btm = sum(block_totals.get(name, 0) for name in centre_stages) / count
    return {
        "n": n,
        "states": count,
        "verified": verified,
        "obtm_mean": round(statistics.mean(obtm), 2),  # a target is on the mean itself
        "obtm_max": max(obtm),
        "stage_moves": {k: round(v / count, 1) for k, v in stage_totals.items()},
        "centre_per_piece": round(centre / (6 * (n - 2) ** 2), 3) if n >= 4 else None,
        "centre_btm_per_piece": round(centre_btm / (6 * (n - 2) ** 2), 3) if n >= 4 else None,
        "ms_median": round(statistics.median(times), 1),
        "ms_p95": round(_percentile(times, 0.95), 1),
        "cpu_ms_median": round(statistics.median(cpu), 1),
        "main_cpu_ms_median": round(statistics.median(main_cpu), 1),
        "rss_mb": round(rss, 1),
    }


def _check_big(solution: Any) -> bool:
    """For big cubes the engine itself applied the solution to the input (fast path)."""
    return bool(solution.stats.get("verified"))


def _counts(args: argparse.Namespace) -> dict[int, int]:
    base = QUICK_COUNTS if args.quick else DEFAULT_COUNTS
    if args.sizes:
        return {n: args.count or base.get(n, 1) for n in args.sizes}
    return {n: args.count or c for n, c in base.items()}


def _table(rows: list[dict[str, Any]]) -> str:
    head = f"{'N':>4} {'states':>6} {'ok':>5} {'OBTM':>8} {'max':>6} {'c/piece':>7} "
    head += f"{'ms med':>8} {'ms p95':>8} {'cpu med':>8} {'MB':>6}  stages (mean OBTM)"
    lines = [head]
    for r in rows:
        stages = ", ".join(f"{k} {v}" for k, v in r["stage_moves"].items())
        cpp = "" if r["centre_per_piece"] is None else f"{r['centre_per_piece']:.2f}"
        lines.append(
            f"{r['n']:>4} {r['states']:>6} {r['verified']:>5} {r['obtm_mean']:>8} "
            f"{r['obtm_max']:>6} {cpp:>7} {r['ms_median']:>8} {r['ms_p95']:>8} "
            f"{r['cpu_ms_median']:>8} "
            f"{r['rss_mb']:>6}  {stages}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        # a 1x1 has nothing to solve; MAX_N: the largest cube the library builds
        type=_args.int_list(2, MAX_N, what="a cube size"),
        help=f"comma-separated sizes, 2..{MAX_N} (default: the issue's list)",
    )
    parser.add_argument(
        "--count", type=_args.count(1), help="states per size (default: the issue's)"
    )
    parser.add_argument("--quick", action="store_true", help="a few states per size")
    parser.add_argument("--json", action="store_true", help="one JSON row per size")
    args = parser.parse_args(argv)
    random.seed(0)
    rows = []
    for n, count in _counts(args).items():
        row = run_size(n, count)
        rows.append(row)
        if args.json:
            sys.stdout.write(json.dumps(row) + "\n")
            sys.stdout.flush()
    if not args.json:
        sys.stdout.write(_table(rows) + "\n")
    return 0 if all(r["verified"] == r["states"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
