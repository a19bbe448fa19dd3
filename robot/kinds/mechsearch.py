"""The two-phase search with a mechanism's planned time as its objective (3x3).

The robot time of a turntable or two-gripper solution is dominated by what the machine does
*between* face turns (a turntable flips and spins the cube so that the next face is down), not
by the turns themselves, and which face is cheap next depends on how the cube sits after the
last one. So the search carries the machine's state: after a face turn the machine is in one
of ``k`` states (the face just turned is where the mechanism turns it, the rest of the cube
rotated one of 4 ways about it, the parts at one of their positions: 12 for a CUBOTino-like
turntable, 16 with a stepper table, 72 for two grippers), and each node of the search holds
the least planned time into each of them (a vector, the planner's dynamic programming cut to
the states a turn can end in). A move is a min-plus product with a ``k x k`` matrix (free
actions, then the turn, from :meth:`KindPlanner.way_matrix`), so ``g`` is the exact planned
time of the moves so far and the search keeps the solution whose planned time is least; it
bounds each branch by the least, over the end states, of ``g`` into the state plus the least
time of the moves still needed (the pruning tables' count) from it
(:attr:`MechanismCosts.rest1`, ``rest2``), tries the children cheapest bound first, and looks
at most ``length_slack`` moves beyond the shortest solution found.

The search is the C kernel's face-turn search with a cost (:func:`mech_search` in
``solver/engines/twophase/_twophase.c``), run on the cube seen along each of its three axes
(conjugated directions: their moves mapped to the cube's own frame, and their phase-2 bounds
made of their own phase-2 moves) and on the inverses of these, one worker thread per pair of
directions, sharing the best time and the shortest length found. An inverse direction's moves
are the solution read backwards, so each move it adds is placed *before* the ones found so far:
its vector holds the least time from each end state of the first move to the end, and its
bounds are tables of the least time from the start through n moves into each move. Turns of
two opposite faces in a row commute: the vector also holds the end states of the other order,
so the search's time is the planner's exactly (which the tests check).
"""

from __future__ import annotations

import logging
import struct
import threading
import time
import weakref
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from robot.errors import PlanError
from robot.kinds.planner import KindPlanner
from solver.cube.cubie import CubieCube
from solver.cube.facelets import Cube
from solver.cube.notation import Move
from solver.engines.twophase import coord as C
from solver.engines.twophase._twophase import mech_search as _mech_search
from solver.engines.twophase.engine import ALL_FACES, get_solver
from solver.errors import NoSolutionError
from solver.solution import Solution

__all__ = [
    "DEFAULT_LENGTH_SLACK",
    "DEFAULT_PHASE2_SLACK",
    "MechanismCosts",
    "costs_for",
    "costs_from_state",
    "least_time",
    "mechanism_costs",
    "search_fastest",
]

log = logging.getLogger(__name__)

#: phase-2 lengths tried beyond the shortest one (a longer phase 2 of cheap moves can win)
DEFAULT_PHASE2_SLACK = 3
#: solutions may be this many moves longer than the shortest found
DEFAULT_LENGTH_SLACK = 1
#: the longest phase 2 tried
DEFAULT_PHASE2_MAX = 12
#: give up when no solution at all is found after this long
DEFAULT_TIMEOUT_S = 30.0
#: the C kernel's "impossible"
_IMPOSSIBLE = 1e30
#: the kernel's limit on end states per face (MECH_MAX_K)
MAX_END_STATES = 96
#: rows of the kernel's bound tables (MAX_DEPTH + 2)
ROWS = 33
#: the moves of phase 2 (U, U2, U', R2, F2, D, D2, D', L2, B2)
PHASE2_MOVES = (0, 1, 2, 4, 7, 9, 10, 11, 13, 16)


@dataclass(frozen=True, eq=False)
class MechanismCosts:
    """A mechanism's cost tables for the search, in the two-phase engine's move order
    (``3 * face + k``, faces U R F D L B, k = quarter, half, anticlockwise)."""

    k: int
    #: [6 faces a][18 moves b][i][j]: least time from end state i of a turn of face a into
    #: end state j of move b
    trans: npt.NDArray[np.float64]
    #: [18 moves b][j]: least time from the mechanism's start into end state j of move b
    first: npt.NDArray[np.float64]
    #: the end states (planner state indices) of a turn of each face
    ends: tuple[tuple[int, ...], ...]
    #: [n][face a][i]: least time of n more moves from end state i of a turn of face a, and
    #: [n] of n moves from the start: the search's bounds
    rest1: npt.NDArray[np.float64]
    #: [axis][n][face a][i]: the same with phase-2 moves only, for the search direction that
    #: sees the cube along each axis (its phase-2 moves as moves of the cube's own frame)
    rest2: npt.NDArray[np.float64]
    start1: npt.NDArray[np.float64]
    #: [n][move b][i]: least time from the start through at least n moves, then b into its
    #: end state i (the bounds of the inverse directions, which place their moves first), and
    #: [axis][n][b][i] with phase-2 moves only
    brest1: npt.NDArray[np.float64]
    brest2: npt.NDArray[np.float64]


def mechanism_costs(planner: KindPlanner) -> MechanismCosts:
    """The cost tables of ``planner``'s mechanism (3x3; :class:`PlanError` when it cannot make
    every face turn or has more end states per face than the kernel takes)."""
    if planner.mechanism.n != 3:
        raise PlanError("the mechanism search solves 3x3 cubes only")
    matrices: list[npt.NDArray[np.float64]] = []
    for m in range(C.N_MOVE):
        matrix = planner.way_matrix(C.move_of_index(m))
        if matrix is None:
            raise PlanError(
                f"this {type(planner.mechanism).__name__} cannot make {C.move_of_index(m)}: "
                "the mechanism search needs every face turn"
            )
        matrices.append(matrix)
    ends: list[tuple[int, ...]] = []
    for face in range(6):
        reached = np.zeros(matrices[0].shape[1], dtype=bool)
        for m in range(3 * face, 3 * face + 3):
            reached |= np.isfinite(matrices[m]).any(axis=0)
        ends.append(tuple(np.flatnonzero(reached).tolist()))
    k = max(len(e) for e in ends)
    if k > MAX_END_STATES:
        raise PlanError(
            f"this {type(planner.mechanism).__name__} ends a face turn in {k} states, more than "
            f"the search's {MAX_END_STATES}"
        )
    trans = np.full((6, C.N_MOVE, k, k), np.inf)
    first = np.full((C.N_MOVE, k), np.inf)
    start = planner.start_state()
    for m, matrix in enumerate(matrices):
        cols = np.array(ends[m // 3], dtype=np.intp)
        first[m, : len(cols)] = matrix[start, cols]
        for a in range(6):
            rows = np.array(ends[a], dtype=np.intp)
            trans[a, m, : len(rows), : len(cols)] = matrix[rows[:, None], cols[None, :]]
    rest1, start1 = _rest(trans, first, range(C.N_MOVE))
    solver = get_solver()
    phase2 = [[solver._conj_move(rot, m) for m in PHASE2_MOVES] for rot in range(3)]
    rest2 = np.array([_rest(trans, first, moves)[0] for moves in phase2])
    brest1 = _before(trans, first, range(C.N_MOVE))
    brest2 = np.array([_before(trans, first, moves) for moves in phase2])
    trans[~np.isfinite(trans)] = _IMPOSSIBLE
    first[~np.isfinite(first)] = _IMPOSSIBLE
    return MechanismCosts(
        k,
        np.ascontiguousarray(trans),
        np.ascontiguousarray(first),
        tuple(ends),
        np.ascontiguousarray(rest1),
        np.ascontiguousarray(rest2),
        np.ascontiguousarray(start1),
        np.ascontiguousarray(brest1),
        np.ascontiguousarray(brest2),
    )


def _before(
    trans: npt.NDArray[np.float64], first: npt.NDArray[np.float64], moves: Iterable[int]
) -> npt.NDArray[np.float64]:
    """``[n][b][i]``: the least time from the start through at least n moves among ``moves``
    (no face twice in a row), then move b into its end state i (forwards: ``reach[a]`` the
    least time into each end state of a after n moves ending with a; then a suffix minimum over
    n, since one more move before b may cost less than one fewer)."""
    allowed = list(moves)
    k = first.shape[1]
    out = np.full((ROWS, C.N_MOVE, k), np.inf)
    out[0] = first
    reach = {a: first[a].copy() for a in allowed}
    for n in range(1, ROWS):
        for b in range(C.N_MOVE):
            best = np.full(k, np.inf)
            for a in allowed:
                if a // 3 != b // 3:
                    np.minimum(best, (reach[a][:, None] + trans[a // 3, b]).min(axis=0), out=best)
            out[n, b] = best
        reach = {a: out[n, a] for a in allowed}
    out = np.minimum.accumulate(out[::-1], axis=0)[::-1]
    out[~np.isfinite(out)] = _IMPOSSIBLE
    return np.ascontiguousarray(out)


def _rest(
    trans: npt.NDArray[np.float64], first: npt.NDArray[np.float64], moves: Iterable[int]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The least time of n more moves among ``moves`` (no face twice in a row) from each end
    state of each face, ``[n][a][i]``, and from the start, ``[n]``, for n = 0..ROWS - 1
    (backwards: the first of the n moves, then the least time of n - 1 from where it ends)."""
    allowed = list(moves)
    k = first.shape[1]
    rest = np.zeros((ROWS, 6, k))
    for n in range(1, ROWS):
        # after[b][j]: move b into end state j, then n - 1 more moves
        after = np.array([rest[n - 1, m // 3] for m in range(C.N_MOVE)])
        for a in range(6):
            best = np.full(k, np.inf)
            for b in allowed:
                if b // 3 != a:
                    np.minimum(best, (trans[a, b] + after[b][None, :]).min(axis=1), out=best)
            rest[n, a] = best
    start = _start_times(first, rest, allowed)
    rest[~np.isfinite(rest)] = _IMPOSSIBLE
    return rest, start


def _start_times(
    first: npt.NDArray[np.float64], rest: npt.NDArray[np.float64], moves: Iterable[int]
) -> npt.NDArray[np.float64]:
    """``[n]``: the least time of n moves among ``moves`` from the start (``first``), given
    ``rest`` (:func:`_rest`'s, of n moves from each end state of each face)."""
    allowed = list(moves)
    start = np.zeros(ROWS)
    for n in range(1, ROWS):
        start[n] = min(float((first[b] + rest[n - 1, b // 3]).min()) for b in allowed)
    if not np.isfinite(start).all() or (start >= _IMPOSSIBLE).any():
        raise PlanError("the mechanism cannot make some face turns from its start")
    return start


_COSTS: weakref.WeakKeyDictionary[KindPlanner, MechanismCosts | None] = weakref.WeakKeyDictionary()
_COSTS_LOCK = threading.Lock()


def costs_for(planner: KindPlanner) -> MechanismCosts | None:
    """:func:`mechanism_costs` of ``planner``, built once per planner; None when the search
    cannot take its mechanism (not a 3x3, a face turn it cannot make, too many states)."""
    with _COSTS_LOCK:
        if planner not in _COSTS:
            try:
                _COSTS[planner] = mechanism_costs(planner)
            except PlanError as exc:
                log.info("no mechanism search: %s", exc)
                _COSTS[planner] = None
        return _COSTS[planner]


def costs_from_state(planner: KindPlanner, state: int) -> MechanismCosts:
    """:func:`costs_for` ``planner`` with the search starting in the planner's ``state`` (an
    orientation of the cube in the machine and the parts' state, numbered as
    :meth:`KindPlanner.way_matrix` numbers them) instead of the mechanism's start: the cube
    part-way through a plan (:attr:`robot.kinds.planner.ActionPlan.move_ends`), its moves
    still in the plan's frame. Only the tables that depend on the start are made again
    (:class:`PlanError` when the search cannot take the mechanism, or ``state`` is none of
    its states)."""
    base = costs_for(planner)
    if base is None:
        raise PlanError(
            f"no mechanism search for this {type(planner.mechanism).__name__} (see the log)"
        )
    states = planner.way_matrix(C.move_of_index(0))
    assert states is not None  # costs_for made every move's matrix
    if not 0 <= state < states.shape[0]:
        raise PlanError(f"no planner state {state} (0..{states.shape[0] - 1})")
    if state == planner.start_state():
        return base
    first = np.full((C.N_MOVE, base.k), np.inf)
    for m in range(C.N_MOVE):
        matrix = planner.way_matrix(C.move_of_index(m))
        assert matrix is not None
        cols = np.array(base.ends[m // 3], dtype=np.intp)
        first[m, : len(cols)] = matrix[state, cols]
    trans = np.where(base.trans >= _IMPOSSIBLE, np.inf, base.trans)
    start1 = _start_times(first, base.rest1, range(C.N_MOVE))
    solver = get_solver()
    phase2 = [[solver._conj_move(rot, m) for m in PHASE2_MOVES] for rot in range(3)]
    brest1 = _before(trans, first, range(C.N_MOVE))
    brest2 = np.array([_before(trans, first, moves) for moves in phase2])
    first[~np.isfinite(first)] = _IMPOSSIBLE
    return replace(
        base,
        first=np.ascontiguousarray(first),
        start1=np.ascontiguousarray(start1),
        brest1=np.ascontiguousarray(brest1),
        brest2=np.ascontiguousarray(brest2),
    )


@cache
def _pool() -> ThreadPoolExecutor:
    """The worker threads (one per direction), started once."""
    return ThreadPoolExecutor(3, thread_name_prefix="mechsearch")


def search_fastest(
    cube: Cube | CubieCube,
    costs: MechanismCosts,
    budget_s: float,
    max_length: int,
    *,
    phase2_slack: int = DEFAULT_PHASE2_SLACK,
    length_slack: int = DEFAULT_LENGTH_SLACK,
    phase2_max: int = DEFAULT_PHASE2_MAX,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    threads: int = 3,
    beat: tuple[float, int] | None = None,
    inverse: bool = True,
) -> Solution | None:
    """The solution of at most ``max_length`` face turns with the least planned time the
    search finds in ``budget_s`` seconds (0: the first one); ``robot_time_s`` is that time
    (the moves in the order searched), ``stats`` the search's figures.

    The search runs on the cube seen along each of its three axes and (``inverse``) on their
    inverses, whose moves are placed before the ones found so far.

    ``beat`` = (planned seconds, moves) of a solution the caller holds: only faster solutions
    are searched for, at most ``length_slack`` moves longer than it, within ``budget_s``; None
    when none is found. Without ``beat``, :class:`NoSolutionError` when no solution is found
    within ``timeout_s``."""
    called = time.perf_counter()
    cubie = cube if isinstance(cube, CubieCube) else CubieCube.from_cube(cube)
    solver = get_solver()
    arrays = solver.tables.search_arrays()
    directions = solver._directions(cubie, ALL_FACES, 6 if inverse else 3)
    # a direction's move as a move of the cube's own frame (an inverse direction's: of the
    # solution read backwards, each turn the other way)
    maps = [
        bytes(
            solver._conj_move(rot, 3 * (m // 3) + 2 - m % 3 if inv else m) for m in range(C.N_MOVE)
        )
        for rot, inv, _ in directions
    ]
    workers = max(1, min(threads, len(directions))) if budget_s > 0 else 1
    chunks = [list(range(i, len(directions), workers)) for i in range(workers)]
    shared = bytearray(16)
    if beat is not None:
        # a solution is held (the budget ends the search), its length and time bound it
        shared[0], shared[1] = 1, min(beat[1], 255)
        shared[8:16] = struct.pack("=d", beat[0])
    search_budget = max(budget_s - (time.perf_counter() - called), 1e-6) if budget_s > 0 else 0.0

    def run(chunk: list[int]) -> tuple[int, list[int], dict[str, Any]]:
        mech = (
            costs.k,
            costs.trans,
            costs.first,
            b"".join(maps[i] for i in chunk),
            costs.rest1,
            np.ascontiguousarray(costs.rest2[[directions[i][0] for i in chunk]]),
            costs.start1,
            bytes(int(directions[i][1]) for i in chunk),
            costs.brest1,
            np.ascontiguousarray(costs.brest2[[directions[i][0] for i in chunk]]),
        )
        found: tuple[int, list[int], dict[str, Any]] = _mech_search(
            arrays,
            [directions[i][2] for i in chunk],
            max_length,
            float(search_budget),
            float(max(timeout_s, budget_s)),
            phase2_max,
            phase2_slack,
            length_slack,
            mech,
            shared,
        )
        return found

    results = [run(chunks[0])] if workers == 1 else list(_pool().map(run, chunks))
    best: tuple[float, tuple[Move, ...], int] | None = None
    for chunk, (index, raw, stats) in zip(chunks, results, strict=True):
        if index < 0:
            continue
        direction = chunk[index]
        backwards = directions[direction][1]
        moves = tuple(
            C.move_of_index(maps[direction][m]) for m in (reversed(raw) if backwards else raw)
        )
        seconds = float(stats["robot_time_s"])
        if best is None or seconds < best[0]:
            best = (seconds, moves, direction)
    if best is None and beat is not None:
        return None
    if best is None:
        raise NoSolutionError(
            f"the mechanism search found no solution of at most {max_length} moves in "
            f"{time.perf_counter() - called:.1f} s; allow more moves or a longer timeout"
        )
    seconds, moves, direction = best
    info: dict[str, Any] = {
        key: sum(r[2][key] for r in results)
        for key in ("solutions_seen", "nodes_phase1", "nodes_phase2", "improvements")
    }
    info.update(
        {
            "objective": "planned_time",
            "planned_s": seconds,
            "directions": len(directions),
            "direction": {
                "axis": ["UD", "RL", "FB"][directions[direction][0]],
                "inverse": directions[direction][1],
            },
            "threads": workers,
            "phase1_depth": max(r[2]["phase1_depth"] for r in results),
            "exhausted": all(r[2]["exhausted"] for r in results),
            "budget_s": budget_s,
            "solve_s": time.perf_counter() - called,
        }
    )
    return Solution(moves, "twophase", 3, seconds, (), info)


def least_time(
    cube: Cube | CubieCube,
    costs: MechanismCosts,
    max_length: int,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> Solution:
    """The solution of at most ``max_length`` face turns whose planned time is least, by an
    exhaustive search: every phase-1 length and every phase-2 length up to ``max_length``
    (every move sequence splits into a phase 1 that ends with a move leaving phase 2's group
    and a phase 2), each branch cut only by its admissible time bound. For short scrambles
    (tens of milliseconds at 8 moves, seconds at 12); ``stats["exhausted"]`` is False when
    ``timeout_s`` cut it short (the best found so far is returned). :class:`NoSolutionError`
    when no solution is that short."""
    found = search_fastest(
        cube,
        costs,
        timeout_s,
        max_length,
        phase2_slack=max_length,
        length_slack=max_length,
        phase2_max=max_length,
        timeout_s=timeout_s,
        threads=1,
        inverse=False,
    )
    assert found is not None  # without ``beat`` the search raises instead
    return found
