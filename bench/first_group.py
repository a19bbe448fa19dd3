"""Offline: how good a first motion group the anytime head start chooses, variants side by side.

    python bench/first_group.py [--states 200] [--seed 2026] [--heads 0.005,0.009]
                                [--head-directions 6] [--remainder 0.08]
                                [--every-group 0] [--json]

Anytime solving executes the head start's first motion group, then what a search from the
state after it finds while that group turns (about 80 ms on a quiet machine), then the later
refinements: the first group is the one choice only the head start makes. For uniformly random
3x3 states (``CubieCube.random`` with the seed) each variant, a head start of each length of
``--heads`` on each count of ``--head-directions`` (two threads through an engine search
session, going on until its first solution, as the daemon runs it), is planned by the bundled
``simulated`` profile's planner; its first group is kept and the rest searched afresh for
``--remainder`` seconds (two threads, as anytime's first search), and ``whole_s`` is the first
group, the settle after it and the better of the fresh remainder and the head start's own.
The variants take turns state by state (the order reversed every other state), so that a
change of the machine's load falls on all of them; the first variant is the reference, and
each other one's mean difference to it is given with one standard error of the per-state
differences (``d_whole_s``, ``se_s``).

``--every-group N``: for the first N states also every one of the 45 first groups (one face
or both faces of an axis) with the same remainder search: ``oracle_s`` the best of them
(``oracle_reference_s`` the reference's ``whole_s`` in those states), and ``reference_rank``
where the reference's first group ranks among them (0: the best). That
shows what a perfect choice of the first group is worth, at 45 remainder searches a state.

Per variant (``--json``: one row each): ``head_ms`` the head start's median wall time,
``head_s`` its plan's robot time, ``whole_s``, ``landed`` in how many states the fresh
remainder was faster than the head start's.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# run as a script, bench/ comes first on sys.path and bench/vision.py would shadow the
# vision package (robot.config reads files with vision.imagefile): the checkout's root first
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _args

from robot.bundled import bundled_path, load_profile
from robot.planner import MotorProgram, Planner
from solver.cost import CostModel
from solver.cube.cubie import CubieCube
from solver.cube.facelets import Cube
from solver.cube.notation import Move, parse
from solver.engines.twophase.engine import get_solver
from solver.engines.twophase.session import SearchSession
from solver.engines.twophase.settings import DIRECTIONS

#: the longest head start a profile may give (``[solver] head_start_s``), in seconds
MAX_HEAD_START_S = 1.0

#: The 45 motion groups of the robot: one face or both faces of an axis, each 0-3 quarter turns.
AXES = (("U", "D"), ("R", "L"), ("F", "B"))
GROUPS = tuple(
    " ".join(t for t in (a, b) if t)
    for first, second in AXES
    for a in ("", first, first + "2", first + "'")
    for b in ("", second, second + "2", second + "'")
    if a or b
)


@dataclass(frozen=True)
class Variant:
    """A head start: its length (seconds) and search directions."""

    head_s: float
    directions: int

    @property
    def name(self) -> str:
        return f"{1000 * self.head_s:g} ms, {self.directions} dirs"


def first_group(program: MotorProgram) -> int:
    """How many of ``program``'s moves its first motion group holds."""
    return next(i + 1 for i, m in enumerate(program.moves) if not m.simultaneous_with_next)


def kept_then_remainder(
    cube: Cube,
    group: list[Move],
    own_rest: list[Move] | None,
    refine: SearchSession,
    planner: Planner,
    cost: CostModel,
    remainder_s: float,
) -> tuple[float, bool]:
    """Robot time of ``group``, its settle, then the better of ``own_rest`` and a fresh
    ``remainder_s`` search from the state after ``group`` (``None``: the fresh one alone), and
    whether the fresh one was the better. Raises when the moves do not solve ``cube``."""
    state = cube.apply(group)
    began = time.monotonic()
    found = refine.search(state, began + remainder_s, timeout_at=began + 1.0)
    if found is None and own_rest is None:
        raise RuntimeError(f"no remainder in 1 s after {group}: {cube.to_facelets()}")
    rest: tuple[Move, ...] = () if own_rest is None else tuple(own_rest)
    rest_s = _robot_s(planner, rest)
    landed = False
    if found is not None:
        fresh_s = _robot_s(planner, found.moves)
        if own_rest is None or fresh_s < rest_s - 1e-9:
            rest, rest_s, landed = found.moves, fresh_s, own_rest is not None
    if not state.apply(rest).is_solved():
        raise RuntimeError(f"the remainder does not solve: {cube.to_facelets()}")
    return cost.estimate(group) + cost.settle_s + rest_s, landed


def _robot_s(planner: Planner, moves: Sequence[Move]) -> float:
    """The planned robot time of ``moves`` (none: 0)."""
    return planner.plan(moves).estimate_s if moves else 0.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=_args.count(1), default=200)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument(
        "--heads",
        type=_args.seconds_list(0.0, MAX_HEAD_START_S, unique=True),
        default="0.005",
        help="head-start lengths, seconds",
    )
    ap.add_argument(
        "--head-directions",
        type=_args.int_list(1, what="search directions", choices=DIRECTIONS, unique=True),
        default="6",
        help="search directions: 1, 2, 3 or 6",
    )
    ap.add_argument("--remainder", type=_args.seconds(), default=0.08, help="seconds")
    ap.add_argument(
        "--every-group", type=_args.count(0), default=0, help="states with all 45 tried"
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    config = load_profile(bundled_path("simulated"))
    cost = config.cost_model
    planner = Planner(config.motors, cost)
    solver = get_solver()
    refine = solver.session(cost_model=cost, threads=2)
    variants = [Variant(h, d) for h in args.heads for d in args.head_directions]
    sessions = {
        d: solver.session(cost_model=cost, threads=2, directions=d)
        for d in {v.directions for v in variants}
    }
    rng = random.Random(args.seed)
    cubes = [CubieCube.random(rng).to_cube() for _ in range(args.states)]
    for session in (refine, *sessions.values()):  # the tables load, the threads start
        session.search(cubes[0], time.monotonic() + 0.002)
    samples: dict[Variant, list[dict[str, float]]] = {v: [] for v in variants}
    oracle: list[tuple[float, int, float]] = []
    for n, cube in enumerate(cubes):
        groups: dict[Variant, str] = {}
        for variant in variants if n % 2 == 0 else variants[::-1]:
            began = time.monotonic()
            head = sessions[variant.directions].search(
                cube, began + variant.head_s, timeout_at=began + 1.0
            )
            took = time.monotonic() - began
            if head is None:
                raise RuntimeError(f"no head start solution in 1 s: {cube.to_facelets()}")
            program = planner.plan(head.moves)
            k = first_group(program)
            moves = [m.as_move() for m in program.moves]
            whole, landed = kept_then_remainder(
                cube, moves[:k], moves[k:], refine, planner, cost, args.remainder
            )
            groups[variant] = " ".join(sorted(str(m) for m in moves[:k]))
            samples[variant].append(
                {
                    "head_ms": 1000 * took,
                    "head_s": program.estimate_s,
                    "whole_s": whole,
                    "landed": float(landed),
                }
            )
        if n < args.every_group:
            scores = {
                " ".join(sorted(g.split())): kept_then_remainder(
                    cube, list(parse(g)), None, refine, planner, cost, args.remainder
                )[0]
                for g in GROUPS
            }
            ranked = sorted(scores, key=lambda g: scores[g])
            reference_whole = samples[variants[0]][-1]["whole_s"]
            oracle.append((scores[ranked[0]], ranked.index(groups[variants[0]]), reference_whole))
    reference = samples[variants[0]]
    rows: list[dict[str, Any]] = []
    for variant, items in samples.items():
        diffs = [a["whole_s"] - b["whole_s"] for a, b in zip(items, reference, strict=True)]
        row: dict[str, Any] = {
            "variant": variant.name,
            "head_start_s": variant.head_s,
            "head_directions": variant.directions,
            "states": len(items),
            "head_ms": round(statistics.median(i["head_ms"] for i in items), 2),
            "head_s": round(statistics.fmean(i["head_s"] for i in items), 4),
            "whole_s": round(statistics.fmean(i["whole_s"] for i in items), 4),
            "landed": int(sum(i["landed"] for i in items)),
            "d_whole_s": round(statistics.fmean(diffs), 4),
            "se_s": round(statistics.stdev(diffs) / len(diffs) ** 0.5, 4) if len(diffs) > 1 else 0,
        }
        if oracle and variant is variants[0]:
            row["oracle_states"] = len(oracle)
            row["oracle_s"] = round(statistics.fmean(o[0] for o in oracle), 4)
            row["oracle_reference_s"] = round(statistics.fmean(o[2] for o in oracle), 4)
            row["reference_rank"] = round(statistics.fmean(o[1] for o in oracle), 1)
        rows.append(row)
    if args.json:
        for r in rows:
            print(json.dumps(r))
        return 0
    print(f"{'variant':>16}{'head_ms':>9}{'head_s':>8}{'whole_s':>9}{'landed':>9}{'d_whole_s':>18}")
    for r in rows:
        print(
            f"{r['variant']:>16}{r['head_ms']:>9.2f}{r['head_s']:>8.3f}{r['whole_s']:>9.3f}"
            f"{r['landed']:>5}/{r['states']:<3}{r['d_whole_s']:>+11.4f} ± {r['se_s']:.4f}"
        )
    if oracle:
        r = rows[0]
        print(
            f"every first group, {r['oracle_states']} states: the best {r['oracle_s']:.3f} s "
            f"against the reference's {r['oracle_reference_s']:.3f}; its first group ranks "
            f"{r['reference_rank']:.1f} of 45 on average"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
