"""Benchmark: two-phase search kernels against each other, per CPU second, in one process.

    python bench/twophase_kernel.py [KERNEL.so ...] [--mode first:19] [--states 40] [--seed 4]

Each kernel (a built ``_twophase`` extension file; none given: the installed one) is loaded
under its own name and its ``search()`` called directly: one thread, the six directions, the
tables' huge-page copies, the kernels taking turns on each state (the order reversed every
other state) so that they share the machine's load alike. Thread CPU time, not wall time, so
the figures hold on a machine shared with other work. Modes:

* ``first:L``: budget 0 and ``max_length`` L: the whole tree up to the first solution of at
  most L moves. Deterministic: kernels that keep the tree visit the same nodes.
* ``exhaustive:L``: the same with an L that no state reaches (13 or 14): every phase-1
  length up to L, searched to the end (slow above 14).
* ``budget:S``: a wall budget of S seconds (``max_length`` 20): ``ends_per_cpu_s`` (phase-1
  ends a second) compares kernels that keep the tree.

``--robot``: the robot (group) search with the default cost model instead (``max_length`` 26
in ``budget`` mode, at most 10 phase-2 groups), the search behind the robot-time objective;
``robot_s_mean`` is then the default cost model's time of its solutions (a direction's moves
take as long as the cube's own: the cost model is the same along every axis and backwards),
what a faster robot kernel buys in ``budget`` mode.

A kernel built before the corner goal rows (``corner_goal_depth``, ``corner_goal_max``)
is given the tables without them, and a robot kernel before the robot corner goal
(``axialgoal``) the robot tables without it; one built before the tables' ``flipslice_classsym``
(commit 4ede873) takes the class and the symmetry as two arrays: it is given them so.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import json
import random
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import _args

from solver.cost import DEFAULT_COST_MODEL
from solver.cube.cubie import CubieCube
from solver.engines.twophase import _twophase
from solver.engines.twophase.coord import move_of_index
from solver.engines.twophase.engine import (
    ALL_FACES,
    DEFAULT_MAX_LENGTH_ROBOT,
    DEFAULT_PHASE2_MAX_GROUPS,
    _cost_tuple,
    get_solver,
)
from solver.engines.twophase.settings import MAX_LENGTH_LIMIT
from solver.engines.twophase.tables.hugepages import huge_page_copy

_LENGTH = _args.count(1, MAX_LENGTH_LIMIT, what="a length in moves")
_BUDGET = _args.seconds()


def load_kernel(path: str, loaded: dict[Path, ModuleType]) -> ModuleType:
    """The extension at ``path`` as a module of its own, loaded once per file (a second
    init of the same file would set up its types again): the installed one as imported."""
    key = Path(path).resolve()
    loaded.setdefault(Path(str(_twophase.__file__)).resolve(), _twophase)
    if key in loaded:
        return loaded[key]
    name = "solver.engines.twophase._twophase"
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    if spec is None:
        raise SystemExit(f"{path}: not a loadable extension")
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    loaded[key] = module
    return module


def parse_mode(text: str) -> tuple[str, float]:
    """``--mode``: ``first:L`` or ``exhaustive:L`` (L moves, 1..``MAX_LENGTH_LIMIT``: the
    kernel's longest) or ``budget:S`` (S seconds); the kind and its L or S."""
    kind, _, value = text.partition(":")
    try:
        if kind in ("first", "exhaustive"):
            return kind, _LENGTH(value)
        if kind == "budget":
            return kind, _BUDGET(value)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None
    raise argparse.ArgumentTypeError(
        f"expected first:L, exhaustive:L (L 1..{MAX_LENGTH_LIMIT} moves) or budget:S "
        f"(S 0..{_args.MAX_BUDGET_S:g} seconds), got {text!r}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kernels", nargs="*", help="built _twophase extension files")
    parser.add_argument(
        "--mode", type=parse_mode, default="first:19", help="first:L, exhaustive:L or budget:S"
    )
    parser.add_argument("--states", type=_args.count(1), default=40)
    parser.add_argument("--seed", type=int, default=4)
    parser.add_argument("--robot", action="store_true", help="the robot (group) search")
    args = parser.parse_args()
    kind, value = args.mode
    paths = args.kernels or [str(_twophase.__file__)]
    for path in paths:
        if not Path(path).is_file():
            parser.error(f"{path}: no such kernel file")
    loaded: dict[Path, ModuleType] = {}
    kernels = [load_kernel(p, loaded) for p in paths]
    solver = get_solver()
    tables = solver.tables
    arrays = tables.search_arrays(huge_pages=True)
    # the tuple of a kernel from before the children's classes by their parent's row (the
    # last three arrays), of one from before the corner goal rows (the two before those), and
    # of one from before flipslice_classsym too: class and symmetry apart
    apart = (huge_page_copy(tables.flipslice_classidx), huge_page_copy(tables.flipslice_sym))
    tuples = [arrays, arrays[:-3], arrays[:-5], (*arrays[:10], *apart, *arrays[11:-5])]
    cost = _cost_tuple(DEFAULT_COST_MODEL) if args.robot else None
    axial = solver.axial_tables().search_arrays() if args.robot else None
    most = DEFAULT_MAX_LENGTH_ROBOT if args.robot else 20
    phase2_max = DEFAULT_PHASE2_MAX_GROUPS if args.robot else 10
    # a robot kernel from before the children's classes by their parent's (the last two
    # axial arrays) is given the axial tables without them, one from before the robot corner
    # goal (the two before those) without it too
    extras = [(cost, 99, axial)] + (
        [(cost, 99, axial[:-2]), (cost, 99, axial[:-4])] if axial is not None else []
    )
    rng = random.Random(args.seed)
    cubes = [CubieCube.random(rng) for _ in range(args.states)]
    totals: list[dict[str, Any]] = [
        {"kernel": p, "cpu_s": 0.0, "nodes1": 0, "nodes2": 0, "ends": 0, "htm": 0, "robot_s": 0.0}
        for p in paths
    ]
    given: list[tuple[tuple[Any, ...], tuple[Any, ...]] | None] = [None] * len(kernels)
    for number, cube in enumerate(cubes):
        starts = [d[2] for d in solver._directions(cube, ALL_FACES, 6)]
        order = list(range(len(kernels)))
        if number % 2:
            order.reverse()
        for k in order:
            length = most if kind == "budget" else int(value)
            budget = value if kind == "budget" else 0.0
            started = time.thread_time()
            if given[k] is None:
                for candidate, extra in ((t, e) for e in extras for t in tuples):
                    try:
                        started = time.thread_time()
                        found = kernels[k].search(
                            candidate, starts, length, budget, 1e4, phase2_max, *extra
                        )
                    except ValueError:
                        continue
                    given[k] = (candidate, extra)
                    break
                else:
                    raise SystemExit(f"{paths[k]}: takes none of the table tuples known")
            else:
                chosen = given[k]
                assert chosen is not None
                candidate, extra = chosen
                found = kernels[k].search(
                    candidate, starts, length, budget, 1e4, phase2_max, *extra
                )
            total = totals[k]
            total["cpu_s"] += time.thread_time() - started
            total["nodes1"] += found[2]["nodes_phase1"]
            total["nodes2"] += found[2]["nodes_phase2"]
            total["ends"] += found[2]["phase1_solutions"]
            total["htm"] += len(found[1]) if found[0] >= 0 else 0
            if args.robot and found[0] >= 0:
                total["robot_s"] += DEFAULT_COST_MODEL.estimate(move_of_index(m) for m in found[1])
    for total in totals:
        cpu = max(total["cpu_s"], 1e-9)
        total["cpu_s"] = round(total["cpu_s"], 3)
        total["mnodes1_per_cpu_s"] = round(total["nodes1"] / cpu / 1e6, 3)
        total["ends_per_cpu_s"] = round(total["ends"] / cpu)
        htm = total.pop("htm")
        total["htm_mean"] = htm / len(cubes) if kind != "exhaustive" else None
        robot_s = total.pop("robot_s")
        if args.robot and kind != "exhaustive":
            total["robot_s_mean"] = round(robot_s / len(cubes), 4)
        print(json.dumps(total))


if __name__ == "__main__":
    main()
