"""6x6 and 7x7: the rings of centres by the smaller cube's staged search, then the rest by the
commutator method.

The stickers of an N cube at coordinates :func:`inner_coords` along both axes of every face
(6x6: 0, 2, 3, 5; 7x7: 0, 2, 3, 4, 6) form a cube of size N - 2 under the moves that turn
depth 0, 2 and (odd N) the middle together or not at all: its outer turn ``R`` is the N cube's
``R`` and its wide turn ``Rw`` the N cube's ``3Rw`` (depths 0-2: depth 1 holds none of those
stickers). Its centres are the N cube's inner ring (6x6: the inner x-centres; 7x7: the inner
x- and t-centres), its wings the N cube's wing orbit 2, its corners and (7x7) middle edges
the same. So the staged search of the smaller cube (:mod:`.staged` for the 4x4,
:mod:`.staged5` for the 5x5, exact tables) solves the inner ring, leaves wing orbit 2 even, and
costs what a 4x4's or 5x5's centres cost.

7x7: the stickers at :func:`outer_coords` (0, 1, 3, 5, 6) form a 5x5 as well, its ``Rw`` the
N cube's ``2Rw``, its centres the outer x- and t-centres, its wings orbit 1. The same search
solves them after the inner ring and keeps it (:data:`OUTER_RING_SIZES`): depth 1 holds none
of the inner ring, and a face turn turns a one-colour face.

By default (:func:`bar_centres`) the other orbits then go by bars (:mod:`.bars`): the
obliques (7x7: with the outer t-centres) paired into bars that keep the inner ring, then the
outer x-centres and the bars solved as a 5x5's centres by the same search. With
:func:`ring_centres` (engine option ``centres="rings"``, and the fallback when the bars are not
paired) the other orbits (6x6: outer x-centres and obliques, 72 pieces; 7x7 after its outer
ring: the obliques, 48) are solved as before (:func:`.centres.first_centres`, wing parity fixes,
:func:`.centres.finish_centres`): their commutators put the rings' pieces back when they move
them, and a face colour is the colour of its inner ring.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cache

import numpy as np
import numpy.typing as npt

from solver.cube.geometry import Face
from solver.cube.notation import Metric, Move, count, parse
from solver.engines.nxn import bars, staged, staged5
from solver.engines.nxn.centres import ORDER, finish_centres, first_centres
from solver.engines.nxn.sim import face_map, geometry
from solver.engines.nxn.tables import Progress
from solver.engines.nxn.twins import thread_count
from solver.engines.nxn.wings import parity_fixes, wing_parity
from solver.errors import NoSolutionError, UnsupportedError
from solver.solution import Stage

__all__ = [
    "OUTER_RING_SIZES",
    "SIZES",
    "bar_centres",
    "inner_coords",
    "outer_coords",
    "project",
    "ring_centres",
    "to_big",
]

log = logging.getLogger(__name__)

Colours = npt.NDArray[np.uint8]
#: the sizes whose inner ring is a smaller cube with a staged search (4x4, 5x5)
SIZES = (6, 7)


def inner_coords(n: int) -> tuple[int, ...]:
    """The coordinates of the N cube's stickers that form the smaller cube of its inner ring,
    per face axis."""
    if n not in SIZES:
        raise UnsupportedError(f"the inner-ring centre search is for N in {SIZES}, not {n}")
    return (0, *range(2, n - 2), n - 1)


def outer_coords(n: int) -> tuple[int, ...]:
    """The same for the outer ring (7x7: 0, 1, 3, 5, 6; 6x6: 0, 1, 4, 5)."""
    if n not in SIZES:
        raise UnsupportedError(f"the inner-ring centre search is for N in {SIZES}, not {n}")
    return (0, 1, *range(3, n - 3), n - 2, n - 1)


@cache
def _picks(n: int, coords: tuple[int, ...]) -> npt.NDArray[np.int64]:
    """For each sticker of the smaller cube, the flat index of its N-cube sticker."""
    m = len(coords)
    return np.array(
        [
            f * n * n + coords[r] * n + coords[c]
            for f in range(6)
            for r in range(m)
            for c in range(m)
        ],
        dtype=np.int64,
    )


def project(state: Colours, n: int, coords: tuple[int, ...] | None = None) -> Colours:
    """The smaller cube that the N cube ``state`` (flat colours) holds at ``coords`` (by
    default :func:`inner_coords`)."""
    return state[_picks(n, coords or inner_coords(n))].copy()


def to_big(moves: tuple[Move, ...], width: int = 3) -> tuple[Move, ...]:
    """The smaller cube's outer and wide turns as the N cube's, ``Rw`` as ``width`` layers
    (``3Rw`` for the inner ring, ``2Rw`` for the outer)."""
    out = []
    for move in moves:
        if move.lo != 1 or move.hi not in (1, 2):  # pragma: no cover - the searches' moves
            raise AssertionError(f"the staged search gave {move}, not an outer or wide turn")
        out.append(Move.block(move.face, 1, 1 if move.hi == 1 else width, move.turns))
    return tuple(out)


def _in_frame(moves: tuple[Move, ...], rotation: str) -> tuple[Move, ...]:
    """Moves on the cube as given, as moves in the frame of ``rotation``."""
    back = {g: Face(f) for f, g in enumerate(face_map(rotation))}
    return tuple(dataclasses.replace(m, face=back[m.face]) for m in moves)


def _stage(name: str, moves: list[Move], start: float, n: int) -> Stage:
    ms = round((time.perf_counter() - start) * 1000, 2)
    return Stage(name, tuple(moves), {"obtm": count(moves, Metric.HTM, n), "ms": ms})


def _ring_stage(
    name: str,
    moves: tuple[Move, ...],
    option: staged.StagedCentres,
    ms: float,
    n: int,
) -> Stage:
    detail = {
        "obtm": count(list(moves), Metric.HTM, n),
        "ms": round(ms, 2),
        "stages": [len(s) for s in option.stages],
    }
    return Stage(name, moves, detail)


#: the sizes whose outer ring is solved by the staged search too, after the inner one
#: (its ``2Rw`` and outer turns keep a solved inner ring: depth 1 holds none of it, a face
#: turn turns a one-colour face). Not the 6x6: its outer x-centres cost the commutators
#: almost nothing once the inner ones are done (measured by hand, 3 states).
OUTER_RING_SIZES = (7,)

#: a centre solution as the engine keeps it: (OBTM, rotation, state after it relabelled,
#: stages with moves in the rotated frame)
Reduced = tuple[int, str, Colours, list[Stage]]


def ring_centres(
    state: Colours,
    n: int,
    rotations: tuple[str, ...],
    keep: int,
    rings: int = 1,
    cache_dir: str | None = None,
    progress: Progress | None = None,
) -> list[Reduced]:
    """Centre solutions of the N cube ``state`` (not changed): the ``rings`` shortest staged
    solutions of its inner ring, (7x7) each followed by the shortest of its outer ring, each
    finished by the commutator method on every rotation of ``rotations``; the ``keep``
    shortest, shortest first."""
    start = time.perf_counter()
    search = staged.staged_centres if n == 6 else staged5.staged_centres
    options = search(project(state, n), max(1, rings), cache_dir, progress)
    ring_ms = (time.perf_counter() - start) * 1000 / len(options)
    found: list[Reduced] = []
    for option in options:
        inner = _ring_stage("inner centres", to_big(option.moves), option, ring_ms, n)
        found += _commutators(state, n, inner, rotations, cache_dir, progress)
    return _distinct(found, keep)


def _commutators(
    state: Colours,
    n: int,
    inner: Stage,
    rotations: tuple[str, ...],
    cache_dir: str | None,
    progress: Progress | None,
) -> list[Reduced]:
    """After the inner ring ``inner`` on ``state`` (not changed): (7x7) the outer ring's
    shortest staged solution, then the commutator method on every rotation of ``rotations``."""
    g = geometry(n)
    mid = inner_coords(n)[1]  # an inner-ring cell of every face: (2, 2)
    rings_done = [inner]
    after = state.copy()
    g.apply(after, inner.moves)
    if n in OUTER_RING_SIZES:
        search = staged.staged_centres if n == 6 else staged5.staged_centres
        t0 = time.perf_counter()
        outer = search(project(after, n, outer_coords(n)), 1, cache_dir, progress)[0]
        ms = (time.perf_counter() - t0) * 1000
        rings_done.append(_ring_stage("outer centres", to_big(outer.moves, 2), outer, ms, n))
        g.apply(after, rings_done[1].moves)
    found: list[Reduced] = []
    for rotation in rotations:
        turned = after.copy()
        g.apply(turned, parse(rotation))
        targets = tuple(int(turned[f * n * n + mid * n + mid]) for f in range(6))
        stages = [dataclasses.replace(st, moves=_in_frame(st.moves, rotation)) for st in rings_done]
        t0 = time.perf_counter()
        first = first_centres(turned, n, targets)
        stages.append(_stage("first centre", first, t0, n))
        t0 = time.perf_counter()
        stages.append(_stage("wing parity", parity_fixes(turned, n, ORDER[0]), t0, n))
        t0 = time.perf_counter()
        stages.append(_stage("centres", finish_centres(turned, n, targets, ORDER[:1]), t0, n))
        relabel = np.zeros(6, dtype=np.uint8)
        for face, colour in enumerate(targets):
            relabel[colour] = face
        cost = sum(int(st.detail["obtm"]) for st in stages)
        found.append((cost, rotation, relabel[turned], stages))
    return found


#: 6x6, 7x7 with bars: how many of the outer 5x5 search's shortest solutions that end in
#: different states are kept per bar pairing (each gets its edges paired by the engine), of
#: the :data:`OUTER_ASK` shortest it gives (6 cost no more than 3: what its stage-3 searches
#: give anyway). Many end in the same state (6x6 seeds 100-105, 3 rings: 11 distinct of 18),
#: whose edges would be paired alike. 6x6 seeds 100-111 (edges on every one kept; main 166.4
#: OBTM): 3 kept of 6 165.3, 5 of 6 163.8, 8 of 12 162.8 (7.8 s CPU at load 10-13), with 3
#: inner rings 161.5 (7.4 s); 7x7 seeds 100-107: 5 of 6 233.5 (main 235.8); 7x7 with 3
#: inner rings and 15 edge tries (seeds 100-115): all of 12 222.1 against 224.0 with 5 of 6
#: and 2 rings (:data:`.engine.EDGE_TRIES_BARS`)
#: 7x7 since its first edge pass runs before the outer centres (:data:`EARLY_PASS`): the
#: 192 shortest of 12 stage-3 searches x 16 solutions each (:data:`OUTER_SEARCHES`), for the
#: engine's ranking by the outer wings already paired to choose from (whole solves, seeds
#: 100-159, mean OBTM / wall median: 12 x 1 216.32 / 2.51 s, 12 x 2 215.50 / 2.64 s, 12 x 4
#: 215.12 / 2.76 s, 12 x 8 214.78 / 2.79 s, 12 x 16 214.40 / 2.95 s, 12 x 32 214.07 / 3.27 s,
#: 6 x 32 214.48 / 3.50 s; 48 searches x 1 215.83 / 3.13 s)
OUTER_KEEP = {6: 8, 7: 192}
OUTER_ASK = {6: 12, 7: 192}
#: per N, the outer search's stage-3 searches (None: one per solution asked) and the
#: shortest stage-3 solutions each gives
OUTER_SEARCHES: dict[int, tuple[int | None, int]] = {7: (12, 16)}
#: 6x6, 7x7: how many of the bar beam's shortest pairings (different paths) get their outer
#: centres solved, per inner-ring solution (6x6, 2 with 5 outer solutions each: no better than
#: 1 with 8 on 5 states, more CPU; 7x7, 2: ~1.5x the CPU; again with the bars scored in C,
#: seeds 100-107: 226.9 OBTM against 226.75 with 1, where a second inner ring gives 224.0)
BAR_KEEP = {6: 1, 7: 1}


#: an edge pass's result: (OBTM, moves, state after them)
PassEnd = tuple[int, list[Move], Colours]


def bar_centres(
    state: Colours,
    n: int,
    keep: int,
    rings: int = 1,
    cache_dir: str | None = None,
    progress: Progress | None = None,
    first_pass: Callable[[Colours], list[PassEnd]] | None = None,
) -> list[Reduced]:
    """Centre solutions of the N cube ``state`` (not changed) by rings and bars: the
    ``rings`` shortest staged solutions of its inner ring, each followed by the obliques
    paired into bars (:func:`.bars.pair_bars`) and the outer centres and bars solved as a
    5x5's centres (:mod:`.staged5` on :func:`.bars.bar_coords`); the ``keep`` shortest,
    shortest first (rotation ``""``). An inner-ring solution whose bars the beam does not pair
    is finished by :func:`ring_centres`' commutators instead. The inner-ring solutions are
    finished side by side on :func:`.twins.thread_count` threads (the bar beam's kernel and
    the 5x5 search run without the GIL); the solutions do not depend on the threads.

    ``first_pass`` (7x7, :data:`EARLY_PASS`): the edge pass that pairs the inner wings onto
    the middle edges, run after the bars and before the outer centres (its macros keep the
    inner ring and the bars, and the outer search's outer turns and ``2Rw`` keep the tredges
    it makes): each of its ends (a ``tredges`` stage) gets its outer centres, so that the
    outer solutions are chosen with that pass's cost known. The state is relabelled (face f
    colour f) before it."""
    start = time.perf_counter()
    search = staged.staged_centres if n == 6 else staged5.staged_centres
    options = search(project(state, n), max(1, rings), cache_dir, progress)
    ring_ms = (time.perf_counter() - start) * 1000 / len(options)
    g = geometry(n)
    cells = bars.bar_cells(n).reshape(-1)
    # the 5x5 search's shortest solutions often reach the same state (7x7 seeds 100-119: the
    # second the first's in 5 of 20) or the same bars (5 more), which the beam pairs alike
    states: set[bytes] = set()
    rings_done: list[tuple[Stage, Colours]] = []
    for option in options:
        inner = _ring_stage("inner centres", to_big(option.moves), option, ring_ms, n)
        after = state.copy()
        g.apply(after, inner.moves)
        if after.tobytes() in states:  # a longer way to the same state: the same solutions
            continue
        states.add(after.tobytes())
        rings_done.append((inner, after))
    same_bars: dict[bytes, list[int]] = {}
    for i, (_, after) in enumerate(rings_done):
        same_bars.setdefault(after[cells].tobytes(), []).append(i)

    def finish(indices: list[int]) -> list[tuple[int, list[Reduced]]]:
        """The rings ``indices`` (the same bars: paired once), each with its solutions."""
        t0 = time.perf_counter()
        try:
            pairings = bars.bar_pairings(rings_done[indices[0]][1], n, BAR_KEEP[n], cache_dir)
        except NoSolutionError:
            pairings = []
        ms = (time.perf_counter() - t0) * 1000 / max(1, len(pairings))
        out: list[tuple[int, list[Reduced]]] = []
        for i in indices:
            inner, after = rings_done[i]
            if not pairings:
                log.warning("%dx%d bars not paired: commutators for the other centres", n, n)
                out.append((i, _commutators(state, n, inner, ("",), cache_dir, progress)))
                continue
            mine: list[Reduced] = []
            for paired in pairings:
                detail = {"obtm": count(paired, Metric.HTM, n), "ms": round(ms, 2)}
                bar_stage = Stage("bars", tuple(paired), detail)
                if first_pass is None:
                    mine += _outer_centres(after, n, [inner, bar_stage], cache_dir, progress)
                    continue
                mine += _early_pass(after, n, [inner, bar_stage], first_pass, cache_dir, progress)
            out.append((i, mine))
        return out

    # the tables once, before any thread reads them: the bars', and the 5x5 search's (a 6x6's
    # inner ring was the 4x4 search: its first outer centres would load them in a thread)
    bars.load(n, cache_dir, progress)
    staged5.load_tables(cache_dir, progress)
    threads = min(thread_count(), len(same_bars))
    if threads > 1:
        with ThreadPoolExecutor(threads, thread_name_prefix="nxn-bars") as pool:
            parts = list(pool.map(finish, same_bars.values()))
    else:
        parts = [finish(indices) for indices in same_bars.values()]
    by_ring = dict(item for part in parts for item in part)
    found = [solution for i in range(len(rings_done)) for solution in by_ring[i]]
    return _distinct(found, keep)


def _relabelled(state: Colours, n: int) -> Colours:
    """``state`` with each face's inner-ring colour renamed to the face's own number."""
    mid = inner_coords(n)[1]
    relabel = np.zeros(6, dtype=np.uint8)
    for face in range(6):
        relabel[int(state[face * n * n + mid * n + mid])] = face
    out: Colours = relabel[state]
    return out


def _centres_kept(before: Colours, after: Colours, n: int) -> bool:
    """Whether ``after`` has every face's inner ring one colour and every bar paired, as
    ``before`` had (an edge pass's wing 3-cycles, when it needs them, may not keep them)."""
    blocks = _inner_ring_cells(n)
    rings_ok = bool(np.all(after[blocks] == after[blocks[:, :1]]))
    return rings_ok and bars.paired(after[bars.bar_cells(n).reshape(-1)], n) == bars.paired(
        before[bars.bar_cells(n).reshape(-1)], n
    )


@cache
def _inner_ring_cells(n: int) -> npt.NDArray[np.int64]:
    inner = np.arange(2, n - 2)
    one = (inner[:, None] * n + inner[None, :]).reshape(-1)
    out: npt.NDArray[np.int64] = np.arange(6)[:, None] * n * n + one[None, :]
    return out


#: the sizes whose first edge pass runs before the outer centres (:func:`bar_centres`'s
#: ``first_pass``), and how many of that pass's shortest ends (different states) get their
#: outer centres. 7x7 whole solves, seeds 100-159 (main 217.93 OBTM, wall median 2.45 s),
#: with the outer search's 12 solutions a state and edges on the 6 shortest: 1 end 217.57
#: (10 second passes, 2.25 s), 3 ends 217.55 (2.57 s); ranked by the outer wings already
#: paired (:data:`.engine.EARLY_WING`): 3 ends 216.32 (2.51 s), 5 ends 215.92 (3.28 s)
EARLY_PASS = {7: 3}


def _early_pass(
    state: Colours,
    n: int,
    before: list[Stage],
    first_pass: Callable[[Colours], list[PassEnd]],
    cache_dir: str | None,
    progress: Progress | None,
) -> list[Reduced]:
    """After the inner ring (``state``, not changed) and the bars (the last of ``before``):
    the first edge pass, then each of its ends' outer centres (:func:`_outer_centres`; ends
    whose outer centres read the same share one search)."""
    g = geometry(n)
    after = state.copy()
    g.apply(after, before[-1].moves)
    after = _relabelled(after, n)
    t0 = time.perf_counter()
    ends = first_pass(after)
    ms = round((time.perf_counter() - t0) * 1000 / max(1, len(ends)), 2)
    searched: dict[bytes, list[staged.StagedCentres]] = {}
    mine: list[Reduced] = []
    for used, moves, end in ends:
        if not _centres_kept(after, end, n):
            continue
        stage = Stage("tredges", tuple(moves), {"obtm": used, "ms": ms})
        mine += _outer_centres(end, n, [*before, stage], cache_dir, progress, searched, True)
    return _distinct(mine, OUTER_KEEP[n] * len(ends))


def _outer_search(
    state: Colours,
    n: int,
    cache_dir: str | None,
    progress: Progress | None,
    searched: dict[bytes, list[staged.StagedCentres]] | None = None,
) -> list[staged.StagedCentres]:
    """The outer 5x5 search's shortest solutions for ``state`` (:data:`OUTER_ASK`), looked up
    first in ``searched`` by what the search reads (the 5x5's centres, its wings' parity)."""
    small = project(state, n, bars.bar_coords(n))
    key = b""
    if searched is not None:
        centres = small.reshape(6, 5, 5)[:, 1:4, 1:4]
        key = centres.tobytes() + bytes([wing_parity(small, 5, 1)])
        hit = searched.get(key)
        if hit is not None:
            return hit
    ask = max(OUTER_ASK[n], OUTER_KEEP[n])
    searches, paths = OUTER_SEARCHES.get(n, (None, staged5.STAGE3_PATHS))
    found = staged5.staged_centres(small, ask, cache_dir, progress, searches, paths)
    if searched is not None:
        searched[key] = found
    return found


def _outer_centres(
    state: Colours,
    n: int,
    before: list[Stage],
    cache_dir: str | None,
    progress: Progress | None,
    searched: dict[bytes, list[staged.StagedCentres]] | None = None,
    applied: bool = False,
) -> list[Reduced]:
    """After the inner ring (``state``, not changed) and the stages ``before`` (the inner
    ring, the bars; ``applied``: already applied to ``state``, else the last of them is
    applied here): the :data:`OUTER_KEEP` shortest outer centre solutions that end in
    different states."""
    g = geometry(n)
    after = state.copy()
    if not applied:
        g.apply(after, before[-1].moves)
    t0 = time.perf_counter()
    outers = _outer_search(after, n, cache_dir, progress, searched)
    ms = (time.perf_counter() - t0) * 1000 / len(outers)
    mid = inner_coords(n)[1]
    targets = tuple(int(after[f * n * n + mid * n + mid]) for f in range(6))
    relabel = np.zeros(6, dtype=np.uint8)
    for face, colour in enumerate(targets):
        relabel[colour] = face
    mine: list[Reduced] = []
    for outer in outers:
        outer_stage = _ring_stage("centres", to_big(outer.moves, 2), outer, ms, n)
        done = after.copy()
        g.apply(done, outer_stage.moves)
        stages = [*before, outer_stage]
        cost = sum(int(st.detail["obtm"]) for st in stages)
        mine.append((cost, "", relabel[done], stages))
    return _distinct(mine, OUTER_KEEP[n])


def _distinct(found: list[Reduced], keep: int) -> list[Reduced]:
    """The ``keep`` shortest of ``found`` that end in different states (their edges would
    be paired alike), shortest first."""
    found.sort(key=lambda item: item[0])
    out: list[Reduced] = []
    seen: set[bytes] = set()
    for item in found:
        key = item[2].tobytes()
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out[: max(1, keep)]
