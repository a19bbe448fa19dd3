"""Kociemba's two-phase engine on the coordinates of :mod:`solver.engines.twophase.coord`.

Phase 1 brings the cube into the subgroup H = <U, D, R2, F2, L2, B2> (corners and edges
oriented, the four slice edges in the slice) with IDA* on ``twist``, ``flip`` and the slice
position, pruned by the symmetry-reduced flipslice x twist table; every phase-1 solution is
continued by an IDA* phase 2 inside H (corner and U/D-edge permutation, slice order) pruned by
the corner-class x ud_edges and corners x slice tables. Phase-1 depths grow one at a time, so
the total length falls as the search goes on.

Six searches run interleaved, depth by depth: the cube itself, the cube seen along the other
two axes (conjugated by the 120° rotation about the URF-DBL diagonal), and the inverses of these
three. A solution of a conjugate or inverse is mapped back, and the best one wins.

Objective: without a cost model the shortest solution (HTM) found within the budget; with a
cost model the search keeps going and returns the solution with the smallest estimated robot
time (:class:`~solver.cost.CostModel`: simultaneous opposite faces, half turns slower). The
robot search ("groups", the default) counts what the robot does in one go, a group: one face
turn, or both faces of an axis turned together (45 groups in phase 1, 21 in phase 2). It runs
the same two phases over groups, pruned by tables in that metric
(:func:`solver.engines.twophase.tables.load_axial_tables`, built on its first use), and bounds
every branch by its robot time so far plus the cheapest group for each group still needed.
``"moves"`` instead runs the face-turn search and keeps the fastest solution it meets (no extra
tables). Without
``max_length`` the robot search allows 26 face turns: the fastest solution is often longer.

The search loop is C (``solver/engines/twophase/_twophase.c``, built by the package install); the
tables come from :func:`solver.engines.twophase.tables.load_tables`. Engine options
(``solve(..., name=value)``):

``cache_dir``   table cache folder (default: see :mod:`solver.engines.twophase.tables`)
``timeout_s``   give up when no solution at all is found after this long (default 30 s)
``phase2_max``  longest phase-2 part tried (default 10 moves; 10 groups in the robot search)
``directions``  1, 2, 3 or 6 searches (default 6; 1 = the cube only, 2 = cube and inverse)
``robot_search`` with a cost model: ``"groups"`` (default) or ``"moves"`` (see above)
``threads``     worker threads sharing the directions when there is a budget (default: one
                per core, at most six)
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Collection, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from solver.cost import DEFAULT_COST_MODEL, CostModel
from solver.cube.cubie import CubieCube
from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import Move, invert
from solver.engines.twophase import coord as C
from solver.engines.twophase._twophase import search as _c_search
from solver.engines.twophase.tables import (
    AxialTables,
    Progress,
    TwoPhaseTables,
    load_axial_tables,
    load_tables,
)
from solver.errors import NoSolutionError, UnsupportedError
from solver.solution import Solution

__all__ = [
    "DEFAULT_MAX_LENGTH",
    "TwoPhaseSolver",
    "get_solver",
    "scramble_moves",
    "solve_twophase",
]

log = logging.getLogger(__name__)

DEFAULT_MAX_LENGTH = 20
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_PHASE2_MAX = 10
DEFAULT_PHASE2_MAX_ROBOT = 12
DEFAULT_PHASE2_MAX_GROUPS = 10
DEFAULT_MAX_LENGTH_ROBOT = 26
ROBOT_SEARCHES = ("groups", "moves")
#: worker threads for a search with a budget: one per core, at most one per direction
MAX_THREADS = 6
DEFAULT_THREADS = min(MAX_THREADS, os.cpu_count() or 1)
MAX_LENGTH_LIMIT = 30
ALL_FACES = frozenset(Face)

#: one search direction for the C kernel: twist, flip, slice_sorted, u_edges, d_edges, corners,
#: allowed-move mask
Start = tuple[int, int, int, int, int, int, int]


def _sym_cube(s: int) -> CubieCube:
    cp, co, ep, eo = C.sym_arrays()
    return CubieCube(
        tuple(int(x) for x in cp[s]),
        tuple(int(x) for x in co[s]),
        tuple(int(x) for x in ep[s]),
        tuple(int(x) for x in eo[s]),
    )


class TwoPhaseSolver:
    """The engine with its tables; thread-safe (the search holds no shared state and releases
    the GIL)."""

    def __init__(self, tables: TwoPhaseTables) -> None:
        self.tables = tables
        self._arrays = tables.search_arrays()
        self._conj = tables.conj_move.astype(int)
        self._urf3 = _sym_cube(16)
        self._urf3_inv = _sym_cube(32)
        self._axial: AxialTables | None = None
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def _workers(self) -> ThreadPoolExecutor:
        """The worker threads of budgeted searches, started once (starting threads per solve
        would cost milliseconds of a 10 ms budget)."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(MAX_THREADS, thread_name_prefix="twophase")
            return self._pool

    def axial_tables(self, progress: Progress | None = None) -> AxialTables:
        """The robot-metric tables, loaded (or built) on first use."""
        with self._lock:
            if self._axial is None:
                self._axial = load_axial_tables(self.tables, progress=progress)
            return self._axial

    def _directions(
        self, cube: CubieCube, faces: frozenset[Face], count: int
    ) -> list[tuple[int, bool, Start]]:
        rots = {1: (0,), 2: (0,), 3: (0, 1, 2), 6: (0, 1, 2)}[count]
        invs = (False, True) if count in (2, 6) else (False,)
        out: list[tuple[int, bool, Start]] = []
        seen: set[Start] = set()
        cubes: list[CubieCube] = []
        keys: list[tuple[int, bool, int]] = []
        for rot in rots:
            if rot == 0:
                base = cube
            elif rot == 1:
                base = self._urf3_inv * cube * self._urf3
            else:
                base = self._urf3 * cube * self._urf3_inv
            allowed = 0
            for m in range(C.N_MOVE):
                if Face(int(self._conj[16 * rot, m]) // 3) in faces:
                    allowed |= 1 << m
            for inv in invs:
                cubes.append(base.inverse() if inv else base)
                keys.append((rot, inv, allowed))
        for (rot, inv, allowed), k in zip(keys, C.coordinates_many(cubes), strict=True):
            start: Start = (
                k["twist"],
                k["flip"],
                k["slice_sorted"],
                k["u_edges"],
                k["d_edges"],
                k["corners"],
                allowed,
            )
            if start in seen:
                continue
            seen.add(start)
            out.append((rot, inv, start))
        return out

    def solve(
        self,
        cube: CubieCube,
        *,
        max_length: int | None = None,
        budget_s: float = 0.0,
        cost_model: CostModel | None = None,
        faces: Collection[Face] | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        phase2_max: int | None = None,
        directions: int = 6,
        robot_search: str = "groups",
        progress: Progress | None = None,
        threads: int = DEFAULT_THREADS,
    ) -> Solution:
        """Solve a (valid) cubie state; see the module docstring for the options."""
        called = time.perf_counter()
        if robot_search not in ROBOT_SEARCHES:
            raise UnsupportedError(
                f"robot_search must be one of {ROBOT_SEARCHES}, got {robot_search!r}"
            )
        groups = cost_model is not None and robot_search == "groups"
        default_length = DEFAULT_MAX_LENGTH_ROBOT if groups else DEFAULT_MAX_LENGTH
        length = default_length if max_length is None else int(max_length)
        if not 0 <= length <= MAX_LENGTH_LIMIT:
            raise UnsupportedError(f"max_length must be 0..{MAX_LENGTH_LIMIT}, got {max_length}")
        if not budget_s >= 0:
            raise UnsupportedError(f"budget must be >= 0 seconds, got {budget_s!r}")
        if directions not in (1, 2, 3, 6):
            raise UnsupportedError(f"directions must be 1, 2, 3 or 6, got {directions}")
        if threads < 1:
            raise UnsupportedError(f"threads must be at least 1, got {threads}")
        face_set = ALL_FACES if faces is None else frozenset(faces)
        if not face_set:
            raise UnsupportedError("at least one face must be allowed to turn")
        p2 = phase2_max
        if p2 is None:
            p2 = DEFAULT_PHASE2_MAX_ROBOT if cost_model is not None else DEFAULT_PHASE2_MAX
            if groups:
                p2 = DEFAULT_PHASE2_MAX_GROUPS
        axial = self.axial_tables(progress).search_arrays() if groups else None
        cost = (
            None
            if cost_model is None
            else (
                cost_model.quarter_turn_s,
                cost_model.half_turn_s,
                cost_model.pair_extra_s,
                cost_model.settle_s,
                cost_model.simultaneous,
            )
        )
        dirs = self._directions(cube, face_set, directions)
        model = cost_model or DEFAULT_COST_MODEL
        # With a budget the directions are shared out over worker threads (the C search
        # releases the GIL); the first-solution mode keeps one interleaved search, which
        # answers soonest.
        workers = max(1, min(threads, len(dirs))) if budget_s > 0 else 1
        chunks = [dirs[i::workers] for i in range(workers)]
        # set by the first worker to find a solution: the budget then ends the others too
        found_flag = bytearray(1)

        # the budget counts from the call: what preparing the search took comes off it
        search_budget = budget_s
        if budget_s > 0:
            search_budget = max(budget_s - (time.perf_counter() - called), 1e-6)

        def run(chunk: list[tuple[int, bool, Start]]) -> tuple[int, list[int], dict[str, Any]]:
            found: tuple[int, list[int], dict[str, Any]] = _c_search(
                self._arrays,
                [d[2] for d in chunk],
                length,
                float(search_budget),
                float(max(timeout_s, budget_s)),
                int(p2),
                cost,
                99,
                axial,
                found_flag,
            )
            return found

        results = [run(dirs)] if workers == 1 else list(self._workers().map(run, chunks))
        elapsed = time.perf_counter() - called
        stats = _merge_stats([r[2] for r in results])
        best: tuple[float, tuple[Move, ...], int, bool, int] | None = None
        for chunk, (index, raw, part) in zip(chunks, results, strict=True):
            if index < 0:
                continue
            rot, inv, _ = chunk[index]
            moves = list(raw)
            if inv:
                moves = [3 * (m // 3) + (2 - m % 3) for m in reversed(moves)]
            candidate = tuple(C.move_of_index(int(self._conj[16 * rot, m])) for m in moves)
            score = model.estimate(candidate) if cost_model is not None else float(len(candidate))
            if best is None or score < best[0]:
                best = (score, candidate, rot, inv, int(part["first_length"]))
        if best is None:
            names = "".join(f.name for f in sorted(face_set))
            if stats["timed_out"]:
                raise NoSolutionError(
                    f"no solution of at most {length} moves with faces {names} found in "
                    f"{elapsed:.1f} s; allow more moves (max_length), more faces or a longer "
                    "timeout_s"
                )
            raise NoSolutionError(
                f"the two-phase search found no solution of at most {length} moves with faces "
                f"{names}; allow more moves (max_length) or more faces"
            )
        _, result, rot, inv, first_length = best
        info: dict[str, Any] = dict(stats)
        info.update(
            {
                "first_length": first_length,
                "objective": "robot_time" if cost_model is not None else "length",
                "metric": "groups" if groups else "moves",
                "directions": len(dirs),
                "threads": workers,
                "direction": {"axis": ("UD", "RL", "FB")[rot], "inverse": inv},
                "budget_s": budget_s,
                "solve_s": elapsed,
            }
        )
        return Solution(result, "twophase", 3, model.estimate(result), (), info)


def _merge_stats(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One statistics record for searches run side by side."""
    merged = dict(parts[0])
    if len(parts) == 1:
        return merged
    for key in ("solutions_seen", "nodes_phase1", "nodes_phase2", "phase1_solutions"):
        merged[key] = sum(p[key] for p in parts)
    merged["improvements"] = sum(p["improvements"] for p in parts)
    firsts = [p["first_solution_s"] for p in parts if p["first_solution_s"] >= 0]
    merged["first_solution_s"] = min(firsts) if firsts else -1.0
    merged["search_s"] = max(p["search_s"] for p in parts)
    merged["phase1_depth"] = max(p["phase1_depth"] for p in parts)
    merged["min_phase1_depth"] = min(p["min_phase1_depth"] for p in parts)
    merged["timed_out"] = all(p["timed_out"] for p in parts)
    merged["exhausted"] = all(p["exhausted"] for p in parts)
    return merged


_SOLVERS: dict[Path | None, TwoPhaseSolver] = {}
_LOCK = threading.Lock()


def get_solver(
    cache_dir: str | Path | None = None, *, progress: Progress | None = None
) -> TwoPhaseSolver:
    """The process-wide solver for a table cache, loading (or building) its tables once."""
    key = None if cache_dir is None else Path(cache_dir).expanduser().resolve()
    with _LOCK:
        solver = _SOLVERS.get(key)
        if solver is None:
            solver = TwoPhaseSolver(load_tables(key, progress=progress))
            _SOLVERS[key] = solver
        return solver


def solve_twophase(cube: Cube, options: Any) -> Solution:
    """Engine entry point for :func:`solver.api.solve` (``options`` is a ``SolveOptions``)."""
    if cube.n != 3:
        raise UnsupportedError(f"the two-phase engine solves 3x3 cubes, not {cube.n}x{cube.n}")
    extra: Mapping[str, Any] = options.extra
    known = {
        "cache_dir",
        "timeout_s",
        "phase2_max",
        "directions",
        "progress",
        "robot_search",
        "threads",
    }
    unknown = set(extra) - known
    if unknown:
        raise UnsupportedError(f"unknown two-phase option(s): {', '.join(sorted(unknown))}")
    solver = get_solver(extra.get("cache_dir"), progress=extra.get("progress"))
    return solver.solve(
        CubieCube.from_cube(cube),
        max_length=options.max_length,
        budget_s=options.budget_s,
        cost_model=options.cost_model,
        faces=options.faces,
        timeout_s=float(extra.get("timeout_s", DEFAULT_TIMEOUT_S)),
        phase2_max=extra.get("phase2_max"),
        directions=int(extra.get("directions", 6)),
        robot_search=str(extra.get("robot_search", "groups")),
        progress=extra.get("progress"),
        threads=int(extra.get("threads", DEFAULT_THREADS)),
    )


def scramble_moves(state: CubieCube, *, budget_s: float = 0.0) -> list[Move]:
    """A random-state scramble: moves (at most 20) that make ``state`` from the solved cube,
    the inverse of a solution."""
    return invert(list(get_solver().solve(state, budget_s=budget_s).moves))


def move_list(moves: Collection[Move]) -> list[int]:
    """Table indices of outer face turns (for tests and tools)."""
    return [C.move_index(m) for m in moves]
