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
tables). Without ``max_length`` the robot search allows 26 face turns: the fastest solution is
often longer.

With a scorer (``score=f``, no cost model) the face-turn search collects every distinct
solution within ``min(max_length, shortest + score_slack)`` moves and returns the one ``f``
scores lowest; the C workers hand candidates over in batches and the calling thread scores them
while the search goes on (:mod:`solver.engines.twophase.candidates`).

Reuse (what an anytime caller relies on): :func:`get_solver` returns one solver per table
cache for the whole process; its tables are loaded once and its worker threads started once,
so each :meth:`TwoPhaseSolver.solve` from a new state pays only for the search. ``budget_s``
counts from the call (preparing the search comes off it) and the search stops at that
deadline once it holds a solution; ``timeout_s`` is the hard deadline when it has none (it
then raises :class:`~solver.errors.NoSolutionError`): with ``timeout_s == budget_s`` a call
returns or raises within the budget, plus the time to hand back the answer (and, with a
scorer, to score one candidate). Calls from several threads at once are safe.

Restarts (:meth:`TwoPhaseSolver.session`, a :class:`SearchSession`): an anytime caller that
searches again and again, each time from a new state and until a new deadline, checks its
options, loads the robot-metric tables and starts the worker threads once, in the session;
each :meth:`SearchSession.search` then pays for the new state's coordinates and the search
alone. It takes an absolute deadline (the caller's clock, :func:`time.monotonic`, so a
worker thread that starts late does not overrun), and a bound: only a solution the cost model
says is faster than it is returned (the search prunes with it from its first node on, as with
a solution of its own), else ``None``.

The search loop is C (``solver/engines/twophase/_twophase.c``, built by the package install); the
tables come from :func:`solver.engines.twophase.tables.load_tables`. Engine options
(``solve(..., name=value)``: ``cache_dir``, ``timeout_s``, ``phase2_max``, ``directions``,
``robot_search``, ``threads``, ``progress``, ``score``, ``score_slack``, ``score_descent``) are
described and checked in :mod:`solver.engines.twophase.settings`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from solver.cost import DEFAULT_COST_MODEL, CostModel
from solver.cube.cubie import CubieCube, inverse_state, multiply_states
from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import Move, invert
from solver.engines.twophase import coord as C
from solver.engines.twophase._twophase import search as _c_search
from solver.engines.twophase.candidates import CandidatePool
from solver.engines.twophase.settings import (
    DEFAULT_DIRECTIONS,
    DEFAULT_SCORE_SLACK,
    DEFAULT_THREADS,
    DEFAULT_TIMEOUT_S,
    MAX_LENGTH_LIMIT,
    MAX_THREADS,
    Scorer,
    TwoPhaseSettings,
)
from solver.engines.twophase.tables import (
    AxialTables,
    Progress,
    TwoPhaseTables,
    load_axial_tables,
    load_tables,
)
from solver.engines.twophase.tables.loader import RESERVE_MB, available_mb
from solver.errors import NoSolutionError, OptionError, UnsupportedError
from solver.options import SolveOptions
from solver.solution import Solution

if TYPE_CHECKING:
    from solver.engines.twophase.session import SearchSession

__all__ = [
    "DEFAULT_MAX_LENGTH",
    "SearchSession",
    "TwoPhaseSolver",
    "get_solver",
    "scramble_moves",
    "solve_twophase",
]

log = logging.getLogger(__name__)

DEFAULT_MAX_LENGTH = 20
DEFAULT_PHASE2_MAX = 10
DEFAULT_PHASE2_MAX_ROBOT = 12
DEFAULT_PHASE2_MAX_GROUPS = 10
DEFAULT_MAX_LENGTH_ROBOT = 26
#: the C kernel's ``phase2_slack`` (with a cost: phase-2 lengths tried beyond the shortest
#: one): more than any phase-2 length, so every length is tried
PHASE2_SLACK_ALL = 99
#: the least search time a budgeted search is given when preparing it used up its budget
_MIN_SEARCH_S = 1e-6
ALL_FACES = frozenset(Face)
#: the axis a search direction sees the cube along, by its power of ROT_URF3
_AXES = ("UD", "RL", "FB")

#: one search direction for the C kernel: twist, flip, slice_sorted, u_edges, d_edges, corners,
#: allowed-move mask
Start = tuple[int, int, int, int, int, int, int]
#: a search direction: power of ROT_URF3, inverted or not, its start
Direction = tuple[int, bool, Start]
#: what the C kernel returns: index of the direction solved (-1: none), moves, statistics
Found = tuple[int, list[int], dict[str, Any]]
CostTuple = tuple[float, float, float, float, bool]


def _sym_cube(s: int) -> CubieCube:
    cp, co, ep, eo = C.sym_arrays()
    return CubieCube(
        tuple(int(x) for x in cp[s]),
        tuple(int(x) for x in co[s]),
        tuple(int(x) for x in ep[s]),
        tuple(int(x) for x in eo[s]),
    )


def _cost_tuple(cost_model: CostModel | None) -> CostTuple | None:
    if cost_model is None:
        return None
    return (
        cost_model.quarter_turn_s,
        cost_model.half_turn_s,
        cost_model.pair_extra_s,
        cost_model.settle_s,
        cost_model.simultaneous,
    )


@dataclass(frozen=True)
class _Plan:
    """One solve's search, checked and prepared."""

    length: int
    phase2_max: int
    groups: bool  # the robot search over groups
    faces: frozenset[Face]


def _plan(options: SolveOptions, settings: TwoPhaseSettings) -> _Plan:
    """Check the generic options against this engine's limits and fill in the defaults."""
    groups = options.cost_model is not None and settings.robot_search == "groups"
    default_length = DEFAULT_MAX_LENGTH_ROBOT if groups else DEFAULT_MAX_LENGTH
    max_length = options.max_length
    length = default_length if max_length is None else int(max_length)
    if not 0 <= length <= MAX_LENGTH_LIMIT:
        raise OptionError(
            "max_length", f"max_length must be 0..{MAX_LENGTH_LIMIT}, got {max_length}"
        )
    if not options.budget_s >= 0:
        raise OptionError("budget_s", f"budget must be >= 0 seconds, got {options.budget_s!r}")
    if settings.score is not None and options.cost_model is not None:
        raise OptionError(
            "score", "give either a score or a cost_model: the cost model is a score of its own"
        )
    faces = ALL_FACES if options.faces is None else frozenset(options.faces)
    if not faces:
        raise UnsupportedError("at least one face must be allowed to turn")
    p2 = settings.phase2_max
    if p2 is None:
        p2 = DEFAULT_PHASE2_MAX_ROBOT if options.cost_model is not None else DEFAULT_PHASE2_MAX
        if groups:
            p2 = DEFAULT_PHASE2_MAX_GROUPS
    return _Plan(length, p2, groups, faces)


class TwoPhaseSolver:
    """The engine with its tables; thread-safe (the search holds no shared state and releases
    the GIL)."""

    def __init__(self, tables: TwoPhaseTables) -> None:
        self.tables = tables
        self._arrays = tables.search_arrays()
        self._hot_started = False
        self._conj = tables.conj_move.astype(int)
        self._urf3 = _sym_cube(C.SYM_URF3)
        self._urf3_inv = _sym_cube(C.SYM_URF3_INV)
        #: the moves allowed along each direction for a set of faces (:meth:`_allowed`)
        self._allowed_masks: dict[tuple[int, frozenset[Face]], int] = {}
        self._axial: AxialTables | None = None
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def _start_hot_copies(self) -> None:
        """On the first search with a budget: make the hot tables' huge-page copies (about
        90 MB, 0.1-0.3 s of CPU) in the background. No call waits for them; searches started
        once they are there use them. A first-solution search (no budget) takes milliseconds
        and gains little from them, so a process that only makes those never copies."""
        with self._lock:
            if self._hot_started:
                return
            self._hot_started = True
        threading.Thread(target=self._copy_hot_tables, name="twophase-tables", daemon=True).start()

    def _copy_hot_tables(self) -> None:
        """Switch the search to private huge-page copies of its hottest tables
        (:mod:`~solver.engines.twophase.tables.hugepages`), unless the machine's available
        memory would keep less than :data:`~.tables.loader.RESERVE_MB` beside them (a Pi with
        little memory: the copies would push the mapped tables' own pages out, and every
        search would read them from the card again)."""
        need, free = self.tables.hot_mb, available_mb()
        if free is not None and free < need + RESERVE_MB:
            log.warning(
                "two-phase tables stay in ordinary pages: %d MB of memory available, the "
                "huge-page copies take %d MB and %d MB are kept for the rest",
                free,
                need,
                RESERVE_MB,
            )
            return
        try:
            arrays = self.tables.search_arrays(huge_pages=True)
        except (OSError, MemoryError) as exc:
            log.warning("two-phase tables stay in ordinary pages: %s", exc)
            return
        self._arrays = arrays

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

    def _allowed(self, rot: int, faces: frozenset[Face]) -> int:
        """The moves (bit m: move m) of ``faces`` seen along direction ``rot``; computed once
        for each (a head start is timed from before this preparation)."""
        key = (rot, faces)
        allowed = self._allowed_masks.get(key)
        if allowed is None:
            allowed = 0
            for m in range(C.N_MOVE):
                if Face(self._conj_move(rot, m) // 3) in faces:
                    allowed |= 1 << m
            self._allowed_masks[key] = allowed
        return allowed

    def _conj_move(self, rot: int, m: int) -> int:
        """Move ``m`` seen along direction ``rot``: ``ROT_URF3^rot m ROT_URF3^-rot``."""
        return int(self._conj[C.SYM_URF3 * rot, m])

    def _directions(self, cube: CubieCube, faces: frozenset[Face], count: int) -> list[Direction]:
        rots = {1: (0,), 2: (0,), 3: (0, 1, 2), 6: (0, 1, 2)}[count]
        invs = (False, True) if count in (2, 6) else (False,)
        out: list[Direction] = []
        seen: set[Start] = set()
        state = cube.state
        urf3, urf3_inv = self._urf3.state, self._urf3_inv.state
        for rot in rots:
            # (plain tuples, not CubieCube: this is on the way to a robot's first move)
            if rot == 0:
                base = state
            elif rot == 1:
                base = multiply_states(multiply_states(urf3_inv, state), urf3)
            else:
                base = multiply_states(multiply_states(urf3, state), urf3_inv)
            allowed = self._allowed(rot, faces)
            for inv in invs:
                start: Start = (
                    *C.start_coordinates(*(inverse_state(base) if inv else base)),
                    allowed,
                )
                if start not in seen:
                    seen.add(start)
                    out.append((rot, inv, start))
        return out

    def session(
        self,
        *,
        max_length: int | None = None,
        cost_model: CostModel | None = None,
        faces: Collection[Face] | None = None,
        phase2_max: int | None = None,
        directions: int = DEFAULT_DIRECTIONS,
        robot_search: str = "groups",
        threads: int = DEFAULT_THREADS,
        progress: Progress | None = None,
        nice: int = 0,
    ) -> SearchSession:
        """A :class:`SearchSession` with these options (as :meth:`solve`'s), checked and
        prepared once for many searches. ``nice`` > 0: the session's own worker threads run
        at that lower scheduling priority (Linux thread niceness; elsewhere as is), so that a
        caller's latency-bound threads (an event loop) get a core at once when they wake."""
        options = SolveOptions(
            max_length, 1.0, cost_model, None if faces is None else frozenset(faces)
        )
        settings = TwoPhaseSettings(
            phase2_max=phase2_max,
            directions=directions,
            robot_search=robot_search,
            threads=threads,
            progress=progress,
        )
        from solver.engines.twophase.session import SearchSession

        return SearchSession(self, options, settings, nice=nice)

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
        directions: int = DEFAULT_DIRECTIONS,
        robot_search: str = "groups",
        progress: Progress | None = None,
        threads: int = DEFAULT_THREADS,
        score: Scorer | None = None,
        score_slack: int = DEFAULT_SCORE_SLACK,
        score_descent: float = 0.0,
    ) -> Solution:
        """Solve a (valid) cubie state; the keywords are those of :class:`SolveOptions` and
        :class:`~solver.engines.twophase.settings.TwoPhaseSettings`."""
        options = SolveOptions(
            max_length, budget_s, cost_model, None if faces is None else frozenset(faces)
        )
        settings = TwoPhaseSettings(
            timeout_s=timeout_s,
            phase2_max=phase2_max,
            directions=directions,
            robot_search=robot_search,
            threads=threads,
            progress=progress,
            score=score,
            score_slack=score_slack,
            score_descent=score_descent,
        )
        return self.run(cube, options, settings)

    def run(self, cube: CubieCube, options: SolveOptions, settings: TwoPhaseSettings) -> Solution:
        """Solve a (valid) cubie state with checked options (see the module docstring)."""
        called = time.perf_counter()
        plan = _plan(options, settings)
        if options.budget_s > 0 and not self._hot_started:
            self._start_hot_copies()
        dirs = self._directions(cube, plan.faces, settings.directions)
        # with a budget the directions are shared out over worker threads (the C search
        # releases the GIL); the first-solution mode keeps one interleaved search, which
        # answers soonest
        workers = max(1, min(settings.threads, len(dirs))) if options.budget_s > 0 else 1
        chunks = [dirs[i::workers] for i in range(workers)]
        pool = None
        if settings.score is not None:
            pool = CandidatePool(
                settings.score,
                lambda c, d, raw: self._map_back(chunks[c][d], raw),
                plan.length,
                settings.score_slack,
                settings.score_descent * options.budget_s,
            )
        results = self._search(plan, chunks, options, settings, called, pool)
        elapsed = time.perf_counter() - called
        if pool is None:
            solution = self._best(chunks, results, options.cost_model)
        else:
            solution = self._scored(chunks, results, pool)
        stats = _merge_stats([r[2] for r in results])
        if solution is None:
            raise _no_solution(plan, bool(stats["timed_out"]), elapsed)
        result, rot, inv, first_length = solution
        info: dict[str, Any] = dict(stats)
        if pool is not None:
            info.update(_pool_info(pool))
        info.update(
            {
                "first_length": first_length,
                "objective": _objective(options, settings),
                "metric": "groups" if plan.groups else "moves",
                "directions": len(dirs),
                "threads": len(chunks),
                "direction": {"axis": _AXES[rot], "inverse": inv},
                "budget_s": options.budget_s,
                "solve_s": elapsed,
            }
        )
        model = options.cost_model or DEFAULT_COST_MODEL
        return Solution(result, "twophase", 3, model.estimate(result), (), info)

    def _search(
        self,
        plan: _Plan,
        chunks: list[list[Direction]],
        options: SolveOptions,
        settings: TwoPhaseSettings,
        called: float,
        pool: CandidatePool | None,
    ) -> list[Found]:
        """Run the C search over the directions, one chunk per worker thread: what each
        chunk's search found (with a pool, its candidates are scored in this thread
        meanwhile)."""
        axial = self.axial_tables(settings.progress).search_arrays() if plan.groups else None
        budget_s = options.budget_s
        # byte 0 set by the first worker to find a solution: the budget then ends the others
        # too; byte 1 the shortest length any worker holds (the shortest-solution search
        # of each worker looks only for shorter ones); bytes 8..15 the least robot time any
        # worker holds (a double: the robot searches prune with it)
        found_flag = bytearray(16)
        # the budget counts from the call: what preparing the search took comes off it
        search_budget = budget_s
        if budget_s > 0:
            search_budget = max(budget_s - (time.perf_counter() - called), _MIN_SEARCH_S)
        cost = _cost_tuple(options.cost_model)
        collector = None if pool is None else pool.collector

        def run_chunk(number: int) -> Found:
            chunk = chunks[number]
            found: Found = _c_search(
                self._arrays,
                [d[2] for d in chunk],
                plan.length,
                float(search_budget),
                float(max(settings.timeout_s, budget_s)),
                int(plan.phase2_max),
                cost,
                PHASE2_SLACK_ALL,
                axial,
                found_flag,
                collector,
                number,
            )
            return found

        workers = len(chunks)
        if pool is None:
            if workers == 1:
                return [run_chunk(0)]
            return list(self._workers().map(run_chunk, range(workers)))
        if workers == 1:
            results = [run_chunk(0)]
            pool.score_while(lambda: False, called + budget_s)
            return results
        futures = [self._workers().submit(run_chunk, i) for i in range(workers)]
        pool.score_while(lambda: not all(f.done() for f in futures), called + budget_s)
        return [f.result() for f in futures]

    def _map_back(self, direction: Direction, raw: Sequence[int]) -> tuple[Move, ...]:
        """A solution found in ``direction``'s frame as moves of the cube's own frame."""
        rot, inv, _ = direction
        moves = list(raw)
        if inv:
            moves = [3 * (m // 3) + (2 - m % 3) for m in reversed(moves)]
        conj = self._conj[C.SYM_URF3 * rot]
        return tuple(C.move_of_index(int(conj[m])) for m in moves)

    def _scored(
        self, chunks: list[list[Direction]], results: list[Found], pool: CandidatePool
    ) -> tuple[tuple[Move, ...], int, bool, int] | None:
        """The candidate the caller's score chose, as :meth:`_best` returns it."""
        best = pool.best
        if best is None:
            return None
        rot, inv, _ = chunks[best.chunk][best.direction]
        first = min(int(r[2]["first_length"]) for r in results if r[0] >= 0)
        return best.moves, rot, inv, first

    def _best(
        self,
        chunks: list[list[Direction]],
        results: list[Found],
        cost_model: CostModel | None,
    ) -> tuple[tuple[Move, ...], int, bool, int] | None:
        """The best solution the workers found, mapped back to the cube's own frame, with its
        direction and the length of the first solution that worker found."""
        best: tuple[float, tuple[Move, ...], int, bool, int] | None = None
        for chunk, (index, raw, part) in zip(chunks, results, strict=True):
            if index < 0:
                continue
            rot, inv, _ = chunk[index]
            candidate = self._map_back(chunk[index], raw)
            score = cost_model.estimate(candidate) if cost_model is not None else len(candidate)
            if best is None or score < best[0]:
                best = (score, candidate, rot, inv, int(part["first_length"]))
        return None if best is None else best[1:]


def _objective(options: SolveOptions, settings: TwoPhaseSettings) -> str:
    if settings.score is not None:
        return "score"
    return "robot_time" if options.cost_model is not None else "length"


def _pool_info(pool: CandidatePool) -> dict[str, Any]:
    """What the scored search adds to the solution's info."""
    stats = pool.stats()
    return {
        "candidates_received": stats["received"],
        "candidates_dropped": stats["dropped"],
        "candidates_scored": pool.scored,
        "score": None if pool.best is None else pool.best.score,
        "score_s": pool.score_s,
    }


def _no_solution(plan: _Plan, timed_out: bool, elapsed: float) -> NoSolutionError:
    names = "".join(f.name for f in sorted(plan.faces))
    if timed_out:
        return NoSolutionError(
            f"no solution of at most {plan.length} moves with faces {names} found in "
            f"{elapsed:.1f} s; allow more moves (max_length), more faces or a longer "
            "timeout_s"
        )
    return NoSolutionError(
        f"the two-phase search found no solution of at most {plan.length} moves with faces "
        f"{names}; allow more moves (max_length) or more faces"
    )


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


def solve_twophase(cube: Cube, options: SolveOptions) -> Solution:
    """Engine entry point for :func:`solver.api.solve`; ``options.extra`` holds the
    :class:`~solver.engines.twophase.settings.TwoPhaseSettings`."""
    if cube.n != 3:
        raise UnsupportedError(f"the two-phase engine solves 3x3 cubes, not {cube.n}x{cube.n}")
    settings = TwoPhaseSettings.from_extra(options.extra)
    solver = get_solver(settings.cache_dir, progress=settings.progress)
    return solver.run(CubieCube.from_cube(cube), options, settings)


def scramble_moves(state: CubieCube, *, budget_s: float = 0.0) -> list[Move]:
    """A random-state scramble: moves (at most 20) that make ``state`` from the solved cube,
    the inverse of a solution."""
    return invert(list(get_solver().solve(state, budget_s=budget_s).moves))
