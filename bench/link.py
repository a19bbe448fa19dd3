"""Benchmark of the firmware link: time overhead over the motors, and a fault-injection soak.

    python bench/link.py                 # table: overhead (5 runs) + soak (1000 runs)
    python bench/link.py --runs 100      # a shorter soak
    python bench/link.py --json          # the same figures as JSON

Overhead: a 20-move solution executed through the link (simulated firmware on a real pty, line
paced at 115200 baud, realistic motor timing: 97.5 ms a quarter turn, 157.5 ms a half turn)
against the sum of the motor times; the target is ≤ 2 %. ``host_gaps_ms_max`` is the longest
time the motors waited for the host between two move groups (the target is no such gap).

Soak: ``--runs`` seeded random-length move streams (1..60 moves, some simultaneous opposite-face
pairs) through injected faults: byte error (bit flip) rate 1e-3, dropped bytes 2e-4, duplicated
frames 0.5 %, line stalls, a firmware reset in 20 % of runs and a vanishing port in 3 %. After a
reset the host must report exactly the moves executed and interrupted; it then acknowledges and
resends the rest. Every run must end with the virtual cube (the solver's facelet model) exactly
where the host believes it is. Exit status 1 if anything was lost, duplicated or wrong.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _args

from firmware_protocol.moves import Move, format_moves, parse_moves
from firmware_protocol.sim.harness import OverheadResult, overhead_run, random_moves, soak_run
from robot.simcube import SolverCube
from solver.cube.facelets import Cube

#: The superflip in 20 face turns (God's number in HTM): a worst-case solution length.
SUPERFLIP = "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2"
#: line speeds the benchmark takes (baud): at 600 and 300 the link gave up (no IDENT after six
#: HELLOs), 1200 ran (at 570 % overhead); 4 Mbaud is past the boards (a 16 MHz AVR: 2 Mbaud)
MIN_BAUD, MAX_BAUD = 1200, 4_000_000


def _expected_facelets(moves: Sequence[Move]) -> str:
    text = format_moves(moves).replace("+", " ").replace("2'", "2")
    return Cube.solved(3).apply(text).to_facelets()


def _solver_cube() -> SolverCube:
    return SolverCube(Cube.solved(3))


async def _overhead(runs: int, baud: int, seed: int) -> list[OverheadResult]:
    rng = random.Random(seed)
    sequences = [parse_moves(SUPERFLIP)] + [random_moves(rng, 20) for _ in range(runs - 1)]
    return [await overhead_run(moves, baud=baud) for moves in sequences]


async def _soak(runs: int, seed: int, progress: bool) -> dict[str, Any]:
    totals: dict[str, Any] = {
        "runs": 0,
        "moves": 0,
        "lost": 0,
        "duplicated": 0,
        "wrong": 0,
        "resets": 0,
        "resets_reported_exactly": 0,
        "cube_mismatches": 0,
        "failed_runs": [],
    }
    began = time.monotonic()
    for k in range(runs):
        result = await soak_run(
            seed + k, cube_factory=_solver_cube, expected_facelets=_expected_facelets
        )
        totals["runs"] += 1
        totals["moves"] += result.moves
        totals["lost"] += result.lost
        totals["duplicated"] += result.duplicated
        totals["wrong"] += result.wrong
        totals["resets"] += result.resets
        totals["resets_reported_exactly"] += result.resets_reported_exactly
        totals["cube_mismatches"] += 0 if result.cube_matches else 1
        if not result.ok:
            totals["failed_runs"].append({"seed": result.seed, "problems": result.problems[:5]})
        if progress and (k + 1) % 100 == 0:
            print(f"  soak {k + 1}/{runs} runs, {time.monotonic() - began:.0f} s", file=sys.stderr)
    totals["soak_s"] = round(time.monotonic() - began, 1)
    return totals


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--runs", type=_args.count(1), default=1000, help="soak runs (default 1000)"
    )
    parser.add_argument(
        "--overhead-runs", type=_args.count(1), default=5, help="20-move runs (default 5)"
    )
    parser.add_argument(
        "--baud",
        type=_args.count(MIN_BAUD, MAX_BAUD, what="a line speed in baud"),
        default=115200,
        help=f"line speed of the overhead runs ({MIN_BAUD}..{MAX_BAUD}; default 115200)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.CRITICAL)  # faults are the point: keep the log quiet

    overheads = asyncio.run(_overhead(args.overhead_runs, args.baud, args.seed))
    soak = asyncio.run(_soak(args.runs, args.seed, progress=not args.json))
    overhead_pct = max(o.overhead_pct for o in overheads)
    figures: dict[str, Any] = {
        "runs": soak["runs"],
        "moves": soak["moves"],
        "lost": soak["lost"],
        "duplicated": soak["duplicated"],
        "wrong": soak["wrong"],
        "resets": soak["resets"],
        "resets_reported_exactly": soak["resets_reported_exactly"],
        "cube_mismatches": soak["cube_mismatches"],
        "failed_runs": soak["failed_runs"],
        "soak_s": soak["soak_s"],
        "overhead_pct": round(overhead_pct, 3),
        "overhead_pct_mean": round(sum(o.overhead_pct for o in overheads) / len(overheads), 3),
        "overhead_runs": len(overheads),
        "motor_s_mean": round(sum(o.motor_s for o in overheads) / len(overheads), 4),
        "link_s_mean": round(sum(o.elapsed_s for o in overheads) / len(overheads), 4),
        "host_gaps_ms_max": round(1000 * max(o.host_gap_max_s for o in overheads), 3),
        "baud": args.baud,
    }
    ok = (
        figures["lost"] == figures["duplicated"] == figures["wrong"] == 0
        and figures["resets"] == figures["resets_reported_exactly"]
        and figures["cube_mismatches"] == 0
        and not figures["failed_runs"]
    )
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0 if ok else 1
    rows = [
        ("overhead, worst of runs", f"{figures['overhead_pct']:.2f} %", "≤ 2 %"),
        ("overhead, mean", f"{figures['overhead_pct_mean']:.2f} %", ""),
        ("20 moves: motor time (mean)", f"{figures['motor_s_mean']:.3f} s", ""),
        ("20 moves: through the link", f"{figures['link_s_mean']:.3f} s", ""),
        ("host gaps between moves, max", f"{figures['host_gaps_ms_max']:.3f} ms", "0"),
        ("soak runs", str(figures["runs"]), ""),
        ("soak moves", str(figures["moves"]), ""),
        ("lost", str(figures["lost"]), "0"),
        ("duplicated", str(figures["duplicated"]), "0"),
        ("wrong", str(figures["wrong"]), "0"),
        ("resets injected", str(figures["resets"]), ""),
        ("resets reported exactly", str(figures["resets_reported_exactly"]), "all"),
        ("cube mismatches", str(figures["cube_mismatches"]), "0"),
        ("soak time", f"{figures['soak_s']} s", ""),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"firmware link benchmark at {args.baud} baud")
    print(f"{'figure'.ljust(width)}  {'value':>12}  target")
    print(f"{'-' * width}  {'-' * 12}  ------")
    for name, value, target in rows:
        print(f"{name.ljust(width)}  {value:>12}  {target}")
    for failed in figures["failed_runs"]:
        print(f"FAILED seed {failed['seed']}: {failed['problems']}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
