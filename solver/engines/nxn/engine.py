"""The big-cube engine (N ≥ 4): reduction to a 3x3.

Stages, each a :class:`~solver.solution.Stage` of the result:

1. ``first centre``: the U and D centres (:func:`solver.engines.nxn.centres.first_centres`):
   for N ≤ 8 with every centre piece of the cube counted, for N ≥ 9 as a pair by plain and
   twin block commutators (:mod:`solver.engines.nxn.twins`).
2. ``wing parity``: one inner slice quarter turn of the U axis (it keeps the U and D centres)
   for each wing orbit whose wings are in an odd permutation
   (:func:`solver.engines.nxn.wings.parity_fixes`). Everything later is even on the wings
   (commutators, conjugates of outer turns), so this is what removes OLL parity for every N.
2b. ``centres``: the other faces (:func:`solver.engines.nxn.centres.finish_centres`; all of
   them at once for N ≤ 8, F and B then R and L for N ≥ 9).

A 4x4 and a 5x5 have one ``centres`` stage instead of these three: the staged search of
:mod:`solver.engines.nxn.staged` (4x4) or :mod:`solver.engines.nxn.staged5` (5x5; exact
tables; both also make the wings even), its three stage lengths in the stage's ``stages``
detail (engine option ``centres``: ``auto``, ``staged`` or ``commutators``). A 6x6 and a 7x7
get an ``inner centres`` stage: the inner ring of centres, a 4x4's or 5x5's centres
under ``Rw`` -> ``3Rw``, by that staged search (:mod:`solver.engines.nxn.ring`), then ``bars``
(the obliques paired into bars, :mod:`solver.engines.nxn.bars`) and ``centres`` (the
outer centres and bars as a 5x5's centres, by :mod:`solver.engines.nxn.staged5`); with
``centres="rings"`` the rings, then the stages above for the other orbits.
3. ``edges``, before the 3x3: first slice–replace–unslice pairing
   (:mod:`solver.engines.nxn.pairing`: greedy on a 4x4, a beam search that finishes each of
   its pairings for 5 ≤ N ≤ 9; on a 6x6 and 7x7 in two passes, :data:`TWO_PASS`: the
   innermost wing orbit first, then the outer one onto it; the 7x7's first pass runs before
   its outer centres, as a ``tredges`` stage, see :data:`.ring.EARLY_PASS`), then
   centre-keeping 3-cycles
   (:mod:`solver.engines.nxn.wings`) for the wings it left. Even N: every orbit is paired
   into the same dedges (any edge, any flip: fewest wings of all orbits moved), with even
   total flip and a dedge permutation of the corners' parity, so neither OLL nor PLL parity
   reaches the 3x3 (PLL parity is fixed by :func:`pll_parity` when that is shorter than the
   3-cycles). Odd N: every wing beside the middle edge now in its edge.
4. ``3x3``: the corners and the middle edges (odd N) or dedges (even N) read as a 3x3, solved
   by the two-phase engine through :func:`solver.api.solve` (its outer turns keep centres and
   paired edges): a first solution of each reduction kept, then on a 6x6 and 7x7 a short
   search of the best few (:data:`.reduced.THREE_EFFORT`, the engine's default effort).

Before returning, the optimised sequence (:func:`solver.optimize.optimize`) is applied to the
input and must solve it. Colours are relabelled after the centres so that face ``f`` carries
colour ``f`` (a relabelling by a rotation of the cube, which keeps every parity).

The centre stages are run on the cube as given and on whole-cube rotations of it
(:data:`ROTATIONS`, :func:`centre_tries` of them unless the engine option ``centre_tries``
says otherwise); on small cubes the edges are solved after the best :func:`edge_tries` of
them too (4x4 and 5x5: the shortest staged centre solutions); an edge try stops as soon as it is
longer than the best one. The rotation with the shortest centres (+ edges) is kept and every
move found on it is mapped back to the faces of the cube as given (a rotation only renames
faces).

Engine options: ``stages_only`` (stop after the centres; for tests and timing of the centre
stages), ``centre_tries``, ``centres``, ``cache_dir`` (folder of the 4x4 and 5x5 tables),
``progress`` (a ``(task, done, total)`` callback that shows a table build taking over 2 s).
``budget_s`` and ``cost_model`` go to the 3x3 stage (a budget longer than the engine's own
3x3 effort, or a cost model, replaces that effort); ``max_length`` (OBTM) is checked on the
result. ``faces`` short of all six is refused at once (:class:`NoSolutionError`): every stage
turns every face.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from functools import cache, partial
from typing import Any

import numpy as np
import numpy.typing as npt

from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import Metric, Move, count
from solver.engines.nxn import ring, staged5
from solver.engines.nxn.centres import (
    ORDER,
    centre_targets,
    finish_centres,
    first_centres,
)
from solver.engines.nxn.pairing import MAX_N, Beam, beam_pairings, pair_edges, paired_count
from solver.engines.nxn.reduced import corner_parity, pick_3x3, reduced_3x3
from solver.engines.nxn.sim import face_map, geometry
from solver.engines.nxn.staged import staged_centres
from solver.engines.nxn.tables import Progress
from solver.engines.nxn.wings import dedge_targets, midge_targets, parity_fixes, solve_wings
from solver.errors import NoSolutionError, OptionError, UnsupportedError
from solver.optimize import optimize
from solver.solution import Solution, Stage

__all__ = ["reduce_centres", "reduced_3x3", "solve_nxn"]

log = logging.getLogger(__name__)

Colours = npt.NDArray[np.uint8]
#: a centre solution: (OBTM, rotation, state after it relabelled, stages in the rotated frame)
_Reduced = tuple[int, str, Colours, list[Stage]]


def _timed(stages: list[Stage], name: str, moves: list[Move], start: float, n: int) -> None:
    ms = round((time.perf_counter() - start) * 1000, 2)
    stages.append(Stage(name, tuple(moves), {"obtm": count(moves, Metric.HTM, n), "ms": ms}))


def reduce_centres(cube: Cube) -> tuple[Colours, list[Stage], tuple[int, ...]]:
    """Stages 1-3 on a copy of ``cube``: the relabelled state (face f has colour f), the
    stages, and the colour each face got."""
    n = cube.n
    state = cube.flat.copy()
    stages: list[Stage] = []
    start = time.perf_counter()
    targets = centre_targets(state, n)
    first = first_centres(state, n, targets)
    _timed(stages, "first centre", first, start, n)
    start = time.perf_counter()
    _timed(stages, "wing parity", parity_fixes(state, n, ORDER[0]), start, n)
    start = time.perf_counter()
    _timed(stages, "centres", finish_centres(state, n, targets, ORDER[:1]), start, n)
    relabel = np.zeros(6, dtype=np.uint8)
    for face, colour in enumerate(targets):
        relabel[colour] = face
    state = relabel[state]
    return state, stages, targets


#: whole-cube rotations tried for the centre stage (each puts another face first; the first
#: three put each axis first: N <= 8 finishes U and D together in the first stage)
ROTATIONS = ("", "x", "z", "x'", "z'", "x2", "y", "x y", "z y")


def centre_tries(n: int) -> int:
    """How many of :data:`ROTATIONS` the centre stage tries by default: the centre cost
    varies a lot with the face solved first, and a try costs more as N grows."""
    return 8 if n == 4 else 5 if n == 5 else 3 if n <= 7 else 1


def edge_tries(n: int) -> int:
    """Of the best centre rotations, how many also get their edges solved (the shortest
    centres + edges is kept): edges are cheap to try on small cubes."""
    if n in EDGE_TRIES_BARS:
        return EDGE_TRIES_BARS[n]
    return EDGE_TRIES_4 if n == 4 else EDGE_TRIES_5 if n == 5 else centre_tries(n) if n <= 7 else 1


#: 4x4: the shortest staged centre solutions that get their edges paired (40 before the beam
#: search: 61.2 OBTM at 1.28 s of CPU per state against 61.7 at 0.83 s with 16, 20 states)
EDGE_TRIES_4 = 16
#: 5x5: the shortest staged centre solutions that get their edges paired
EDGE_TRIES_5 = 12
#: 6x6, 7x7: the centre solutions that get their edges paired: the shortest that end in
#: different states of those the bar route gives (the edges' cost varies by 10 OBTM or more
#: between centre solutions of about the same length, so more tries pay, until the time
#: target: about 0.33 s a 7x7 try). Since the 7x7's first edge pass runs before its outer
#: centres (:data:`.ring.EARLY_PASS`) a try is its second pass alone, 6 ranked by the outer
#: wings already paired (:data:`EARLY_WING`): 214.40 on seeds 100-159, 8 -0.2 more for more
#: time. The measurements behind each setting: docs/benchmarks.md, "Big cubes" and after
EDGE_TRIES_BARS = {6: 20, 7: 6}


def _unrotate(moves: tuple[Move, ...], rotation: str) -> tuple[Move, ...]:
    fmap = face_map(rotation)
    return tuple(dataclasses.replace(m, face=fmap[m.face]) for m in moves)


#: the sizes with a staged centre search (:mod:`.staged`, :mod:`.staged5`)
STAGED_SIZES = (4, 5)
#: 6x6, 7x7: how many of the inner ring's shortest staged solutions are each finished (7x7:
#: its outer ring, then the commutators) on every rotation tried. Seeds 0-5, OBTM / CPU
#: median at load 7-8: 6x6 1 x 3 rotations 294.7 / 0.96 s, 3 x 3 287.0 / 1.91 s; 7x7 (both
#: rings) 2 x 3 380.7 / 2.51 s, 3 x 3 371.5 / 3.37 s, 4 x 2 370.0 / 3.65 s, 4 x 3 370.0 / 4.5 s
RINGS = {6: 3, 7: 3}
#: 6x6, 7x7 (the default route, rings and bars): how many of the inner ring's shortest staged
#: solutions get their bars paired and their outer centres solved (6x6 seeds 100-111: 3
#: rings 161.5 OBTM, 4 the same to 1 move for 1.2x the CPU; 7x7 seeds 100-107: 1 ring 226.75,
#: 2 rings 224.0, 3 rings 223.6 for ~1.7x the CPU of 1; seeds 100-115 with 15 edge tries: 3
#: rings 222.1, 4 rings 221.8 with 20 tries for 1.2x the CPU)
BAR_RINGS = {6: 3, 7: 3}


def _staged(
    cube: Cube, keep: int, cache_dir: str | None, progress: Progress | None = None
) -> list[_Reduced]:
    """4x4 and 5x5: the ``keep`` shortest centre solutions of the staged search, each as the
    rotation-free (OBTM, "", state after them relabelled, [centres stage])."""
    start = time.perf_counter()
    search = staged_centres if cube.n == 4 else staged5.staged_centres
    found = search(cube.flat, keep, cache_dir, progress)
    ms = round((time.perf_counter() - start) * 1000, 2)
    out: list[_Reduced] = []
    for option in found:
        state = cube.flat.copy()
        geometry(cube.n).apply(state, option.moves)
        relabel = np.zeros(6, dtype=np.uint8)
        for face, colour in enumerate(option.targets):
            relabel[colour] = face
        detail = {"obtm": option.length, "ms": ms, "stages": [len(s) for s in option.stages]}
        out.append((option.length, "", relabel[state], [Stage("centres", option.moves, detail)]))
    return out


def _best_centres(
    cube: Cube, tries: int, keep: int, options: Any, early: bool = False
) -> list[_Reduced]:
    """The ``keep`` rotations (of the first ``tries``) whose centre stages are shortest, each
    as (OBTM, rotation, state after them in the rotated frame and relabelled, stages with
    moves in the rotated frame), shortest first. A 4x4 and a 5x5 get the staged search instead
    (engine option ``centres``: ``staged`` or ``commutators``; ``auto`` picks by N). ``early``
    (N in :data:`.ring.EARLY_PASS`, the bar route): the first edge pass runs before the outer
    centres, a ``tredges`` stage among the centre stages (:func:`_early_first_pass`)."""
    method = str(options.extra.get("centres", "auto"))
    if method not in ("auto", "staged", "rings", "commutators"):
        raise UnsupportedError(
            f"nxn option centres={method!r}: use 'auto', 'staged' (4x4 to 7x7), 'rings' (6x6 "
            "and 7x7) or 'commutators'"
        )
    if method == "rings" and cube.n not in ring.SIZES:
        raise UnsupportedError(f"the ring centre route is for 6x6 and 7x7, not {cube.n}x{cube.n}")
    if method == "staged" and cube.n not in STAGED_SIZES + ring.SIZES:
        raise UnsupportedError(
            f"the staged centre search is for 4x4 to 7x7 cubes, not {cube.n}x{cube.n}"
        )
    cache_dir, progress = options.extra.get("cache_dir"), options.extra.get("progress")
    if method != "commutators" and cube.n in STAGED_SIZES:
        return _staged(cube, keep, cache_dir, progress)
    if method == "rings" and cube.n in ring.SIZES:  # the rings staged, commutators for the rest
        rotations = ROTATIONS[: max(1, tries)]
        return ring.ring_centres(
            cube.flat, cube.n, rotations, keep, RINGS[cube.n], cache_dir, progress
        )
    if method != "commutators" and cube.n in ring.SIZES:  # inner ring, bars, outer centres
        first = None
        if early and cube.n in ring.EARLY_PASS:
            first = partial(_early_first_pass, n=cube.n)
        return ring.bar_centres(
            cube.flat, cube.n, keep, BAR_RINGS[cube.n], cache_dir, progress, first
        )
    found = []
    for rotation in ROTATIONS[: max(1, tries)]:
        state, stages, _ = reduce_centres(cube.apply(rotation) if rotation else cube)
        cost = sum(count(stage.moves, Metric.HTM, cube.n) for stage in stages)
        found.append((cost, rotation, state, stages))
    found.sort(key=lambda item: item[0])
    return found[: max(1, keep)]


@cache
def pll_parity(n: int) -> tuple[Move, ...]:
    """Even N: ``Rw2 U2 Rw2 Uw2 r2 Uw2`` with ``Rw``/``Uw`` the outer half of the cube
    (layers 1..N/2) and ``r`` its inner layers 2..N/2 (7 OBTM; the all-inner-slice
    ``r2 U2 r2 Uw2 r2 Uw2`` costs 9). It keeps centres, paired dedges and every wing orbit's
    parity and turns the corners by an even permutation, but exchanges two dedges: it flips
    the dedges' permutation parity against the corners' (PLL parity) for far less than the
    two wing 3-cycles it otherwise costs."""
    h = n // 2
    wide_r2 = Move.block(Face.R, 1, h, 2)
    wide_u2 = Move.block(Face.U, 1, h, 2)
    return (
        wide_r2,
        Move.outer(Face.U, 2),
        wide_r2,
        wide_u2,
        Move.block(Face.R, 2, h, 2),
        wide_u2,
    )


def _finish(state: Colours, n: int, orbits: list[int] | None = None) -> list[Move]:
    """The wing 3-cycles after pairing (turns ``state``; ``orbits``: of these only)."""
    if n % 2 == 0:  # the edges of the reduced 3x3 are dedges: no OLL/PLL parity left
        targets = dedge_targets(state, n, corner_parity(state, n), orbits)
    else:  # every wing beside the middle edge now in its edge
        targets = midge_targets(state, n)
    return solve_wings(state, n, targets, orbits)


def _edges(state: Colours, n: int, limit: int | None = None) -> list[Move] | None:
    """Freeslice pairing, then 3-cycles for the rest (turns ``state``): the shortest of
    :func:`_edge_ends`, None when it has none."""
    ends = _edge_ends(state, n, limit)
    if not ends:
        return None
    state[:] = ends[0][2]
    return ends[0][1]


#: an edge solution: (OBTM, moves, state after them)
_End = tuple[int, list[Move], Colours]


def _edge_ends(state: Colours, n: int, limit: int | None = None, keep: int = 1) -> list[_End]:
    """Freeslice pairing, then 3-cycles for the rest: up to ``keep`` solutions that end in
    different states, shortest first (``state`` is not changed). Even N: also tried with
    :func:`pll_parity` first; the shorter finish is kept. 5 ≤ N ≤ ``MAX_N``: the pairing is a
    beam search (:func:`~solver.engines.nxn.pairing.beam_pairings`) that finishes each of its
    pairings this way (4x4: one greedy pairing). Only those shorter than ``limit`` (OBTM; a 4x4's
    pairing alone)."""
    if n in TWO_PASS:
        return _two_pass_edges(state, n, limit, keep)
    if 5 <= n <= MAX_N:
        return beam_pairings(state, n, lambda end: _best_finish(end, n), None, limit, keep)
    end = state.copy()
    edges = pair_edges(end, n, limit)
    if edges is None:
        return []
    edges += _best_finish(end, n)
    return [(count(edges, Metric.HTM, n), edges, end)]


#: 6x6, 7x7: the best macros of each partial pairing that the edge beams expand (below)
PER_NODE = {6: 12, 7: 8}
#: 6x6 and 7x7: the edges in two passes, as dwalton76's solver does them (each pass a 4x4's
#: or 5x5's edge pairing): first the innermost wing orbit (7x7: onto the middle edges, making
#: tredges; 6x6: into dedges), by slices through the middle layers; then the outer orbit onto
#: those, by slices of layers 1-2 only (they keep the inner groups whole). Beam settings of
#: each pass: 64 wide (the scoring is in C), the twist macros ``s A C' B A' C s'`` in both,
#: the second pass also with ``s A B C A' s'`` (``both_ends``); a pairing that stalls is
#: finished only if none completes (``finish_stalled``). What each setting was measured at:
#: docs/benchmarks.md, "6x6 and 7x7 edges" and the 7x7 sections after them
TWO_PASS = {
    n: (
        Beam(
            64,
            PER_NODE[n],
            flips=False,
            blocks=((1, 3), (2, 3), (3, 3)),
            counted=tuple(range(1, n - 3)),
            twists=True,
            finish_stalled=False,
        ),
        Beam(
            64,
            PER_NODE[n],
            flips=False,
            blocks=((1, 2),),
            both_ends=True,
            twists=True,
            finish_stalled=False,
        ),
    )
    for n in (6, 7)
}


def _inner_finish(state: Colours, n: int) -> list[Move]:
    """The innermost wing orbit's 3-cycles after the first pass (turns ``state``). 6x6: its
    dedges already get the corners' permutation parity (with :func:`pll_parity` when that is
    shorter): the second pass moves them whole by turns that change both parities alike, so
    this is where PLL parity is settled (seeds 100-115: edges 77.1 -> 74.8 OBTM against
    dedges of either parity)."""
    return _best_finish(state, n, [(n - 2) // 2])


#: 6x6, 7x7: the first pass's shortest pairings (different ends) that get a second pass (3
#: cut a 6x6's edges by ~2 on one centre solution, nothing once every centre solution gets
#: its edges: 1)
FIRST_PASS_KEEP = {6: 1, 7: 1}


def _early_first_pass(state: Colours, n: int) -> list[_End]:
    """:data:`TWO_PASS`' first pass on ``state`` (not changed), its
    :data:`.ring.EARLY_PASS` shortest ends: run by :func:`.ring.bar_centres` after the bars
    and before the outer centres."""
    first = TWO_PASS[n][0]
    return beam_pairings(
        state, n, lambda end: _inner_finish(end, n), first, None, ring.EARLY_PASS[n]
    )


#: 7x7 with the first edge pass before the outer centres: how many of the centre solutions
#: (distinct states) are ranked by :func:`_early_ranked` for the second pass
EARLY_POOL = 1000
#: the OBTM an outer wing already paired onto its tredge is worth when the centre solutions
#: after the first pass are ranked for the second (a least-squares fit of the second pass's
#: length on the wings already paired, seeds 100-111, 983 centre solutions: -1.85 OBTM a
#: wing). On those solutions, the best centres + edges of the 6 ranked first: 201.83 OBTM
#: by length alone (10: the same), 201.17 with 1.5-3 OBTM a wing, 201.08 the best of all;
#: whole solves of seeds 100-159 with the kept pool: 1.5 214.42, 2 214.40, 2.5 214.40)
EARLY_WING = {7: 2.0}


def _early_ranked(found: list[_Reduced], n: int) -> list[_Reduced]:
    """The centre solutions that end with the first edge pass done (a ``tredges`` stage),
    ranked for the second pass: by their OBTM less :data:`EARLY_WING` per outer wing already
    paired (the second pass's length falls by about that much per wing), the shorter first
    among equals."""

    def rank(item: _Reduced) -> tuple[float, int]:
        return item[0] - EARLY_WING[n] * paired_count(item[2], n), item[0]

    return sorted(found, key=rank)


def _second_pass_edges(state: Colours, n: int, limit: int | None, keep: int = 1) -> list[_End]:
    """:data:`TWO_PASS`' second pass alone (the first ran before the outer centres)."""
    second = TWO_PASS[n][1]
    return beam_pairings(state, n, lambda end: _best_finish(end, n), second, limit, keep)


def _two_pass_edges(state: Colours, n: int, limit: int | None, keep: int = 1) -> list[_End]:
    """:data:`TWO_PASS`: the second pass after each of the :data:`FIRST_PASS_KEEP` shortest
    first passes; the ``keep`` shortest wholes that end in different states, shortest first
    (``state`` is not changed), those shorter than ``limit`` (OBTM) only."""
    first, second = TWO_PASS[n]
    inners = beam_pairings(
        state, n, lambda end: _inner_finish(end, n), first, limit, FIRST_PASS_KEEP[n]
    )
    found: dict[bytes, _End] = {}
    bound = limit
    for used, inner, after in inners:
        outers = beam_pairings(
            after,
            n,
            lambda end: _best_finish(end, n),
            second,
            None if bound is None else bound - used,
            keep,
        )
        for cost, outer, end in outers:
            key = end.tobytes()
            if key not in found or found[key][0] > used + cost:
                found[key] = (used + cost, inner + outer, end)
        ranked = sorted(found.values(), key=lambda item: item[0])[:keep]
        found = {item[2].tobytes(): item for item in ranked}
        if len(ranked) == keep:
            bound = ranked[-1][0]
    return sorted(found.values(), key=lambda item: item[0])


def _best_finish(state: Colours, n: int, orbits: list[int] | None = None) -> list[Move]:
    """:func:`_finish`, on even N also after :func:`pll_parity`: the shorter (turns
    ``state``). Nothing to do (a pairing the beam completed) is kept without trying the
    parity: the beam finishes many such pairings, and the 3-cycles after a parity algorithm
    were a fifth of a 6x6's edge time."""
    best: tuple[int, list[Move], Colours] | None = None
    for prefix in ([], list(pll_parity(n))) if n % 2 == 0 else ([],):
        if best is not None and best[0] == 0:
            break
        trial = state.copy()
        geometry(n).apply(trial, prefix)
        moves = prefix + _finish(trial, n, orbits)
        cost = count(moves, Metric.HTM, n)
        if best is None or cost < best[0]:
            best = (cost, moves, trial)
    assert best is not None
    state[:] = best[2]
    return best[1]


#: 4x4: of the staged centre solutions, how many get their edges again by the beam search
#: (:func:`~solver.engines.nxn.pairing.beam_pair_edges`) after the greedy pairing of every
#: one ranked them (shortest greedy total first): the beam is 3-4x the time of a greedy try
BEAM_TRIES_4 = 2


#: the centres + edges that go on to the 3x3 stage, per N: (``keep``, ``slack``): the
#: edges of a centre solution may end in ``keep`` different states, and every reduction
#: shorter than the shortest + ``slack`` (OBTM; 0: the shortest alone) has its 3x3 solved
#: (budget 0, about 1 ms each); the shortest whole is kept (:func:`_pick_3x3`). 6x6 seeds
#: 100-111 (6 distinct centre solutions): (1, 0) 165.7 OBTM, (4, 2) 165.3 (3x3 19.8 -> 19.7)
ENDS = {6: (4, 2), 7: (4, 2)}
#: at most this many reductions get a 3x3 search
MAX_ENDS = 24


def _best_reductions(cube: Cube, tries: int, edge_tries: int, options: Any) -> list[_Reduced]:
    """Centres on the best rotations, edges on the ``edge_tries`` best of them: the
    reductions (OBTM, rotation, state, stages: centres, edges) whose centres + edges are
    shortest (:data:`ENDS`), shortest first. 4x4: the :data:`BEAM_TRIES_4` best are paired
    once more by the beam search."""
    n = cube.n
    keep, slack = ENDS.get(n, (1, 0))
    done: list[_Reduced] = []

    def limit(cost: int) -> int | None:  # edges must be shorter than this to be kept
        return None if not done else done[0][0] + slack - cost

    def add(cost: int, rotation: str, stages: list[Stage], ends: list[_End], ms: float) -> None:
        for used, edges, end in ends:
            stage = Stage("edges", tuple(edges), {"obtm": used, "ms": ms})
            done.append((cost + used, rotation, end, [*stages, stage]))
        done.sort(key=lambda item: item[0])

    #: (total, centre OBTM, rotation, state and stages before the edges)
    tried: list[tuple[int, int, str, Colours, list[Stage]]] = []
    early = n in ring.EARLY_PASS and str(options.extra.get("centres", "auto")) != "rings"
    centres = _best_centres(cube, tries, EARLY_POOL if early else edge_tries, options, early)
    if early and not centres:  # no first pass kept the inner rings and bars: the usual route
        centres = _best_centres(cube, tries, edge_tries, options)
    if centres and any(stage.name == "tredges" for stage in centres[0][3]):
        centres = _early_ranked(centres, n)
    centres = centres[:edge_tries]
    for cost, rotation, state, stages in centres:
        start = time.perf_counter()
        if any(stage.name == "tredges" for stage in stages):
            ends = _second_pass_edges(state, n, limit(cost), keep)
        else:
            ends = _edge_ends(state, n, limit(cost), keep)
        if not ends:  # already longer than the best
            continue
        add(cost, rotation, stages, ends, round((time.perf_counter() - start) * 1000, 2))
        tried.append((cost + ends[0][0], cost, rotation, state, stages))
    assert done
    if n == 4:
        tried.sort(key=lambda item: item[0])
        for _, cost, rotation, state, stages in tried[:BEAM_TRIES_4]:
            start = time.perf_counter()
            ends = beam_pairings(state, n, partial(_best_finish, n=n), None, limit(cost), keep)
            add(cost, rotation, stages, ends, round((time.perf_counter() - start) * 1000, 2))
    best = done[0][0]
    return [item for item in done if item[0] < best + slack or item[0] == best][:MAX_ENDS]


def _solved(state: Colours, n: int) -> bool:
    faces = state.reshape(6, -1)
    return bool(np.all(faces == faces[:, :1]))


def _check_options(extra: dict[str, Any]) -> None:
    """The engine options' types: an :class:`OptionError` naming the option, before any search
    (a wrong type used to fail deep inside it, or was taken silently)."""
    cache_dir, progress = extra.get("cache_dir"), extra.get("progress")
    if cache_dir is not None and not isinstance(cache_dir, (str, os.PathLike)):
        raise OptionError("cache_dir", f"cache_dir must be a folder path, got {cache_dir!r}")
    if progress is not None and not callable(progress):
        raise OptionError(
            "progress", f"progress must be a (task, done, total) callable, got {progress!r}"
        )
    stages_only = extra.get("stages_only", False)
    if not isinstance(stages_only, bool):
        raise OptionError("stages_only", f"stages_only must be True or False, got {stages_only!r}")
    tries = extra.get("centre_tries", 1)
    if isinstance(tries, bool) or not isinstance(tries, int) or tries < 1:
        raise OptionError(
            "centre_tries", f"centre_tries must be a whole number >= 1, got {tries!r}"
        )
    if not isinstance(extra.get("centres", "auto"), str):
        raise OptionError("centres", f"centres must be a string, got {extra['centres']!r}")


def solve_nxn(cube: Cube, options: Any) -> Solution:
    """Engine entry point for :func:`solver.api.solve` (``options`` is a ``SolveOptions``)."""
    n = cube.n
    if n < 4:
        raise UnsupportedError(f"the nxn engine solves cubes of size 4 and up, not {n}x{n}x{n}")
    unknown = set(options.extra) - {
        "stages_only",
        "centre_tries",
        "centres",
        "cache_dir",
        "progress",
    }
    if unknown:
        raise UnsupportedError(f"unknown nxn option(s): {', '.join(sorted(unknown))}")
    _check_options(options.extra)
    if options.faces is not None and len(set(options.faces)) < len(Face):
        missing = "".join(f.name for f in Face if f not in options.faces)
        raise NoSolutionError(
            f"the {n}x{n}x{n} reduction turns every face (its centre and edge stages turn "
            f"{missing} as well as the others), so it cannot avoid {missing}: allow all six "
            "faces (a robot's planner replaces the outer turns of a face without a motor)"
        )
    start = time.perf_counter()
    tries = int(options.extra.get("centre_tries", centre_tries(n)))
    if options.extra.get("stages_only"):
        _, rotation, state, stages = _best_centres(cube, tries, 1, options)[0]
    else:
        reductions = _best_reductions(cube, tries, edge_tries(n), options)
        t0 = time.perf_counter()
        rotation, state, stages, small = pick_3x3(reductions, n, options)
        geometry(n).apply(state, small.moves)
        _timed(stages, "3x3", list(small.moves), t0, n)
    stages = [dataclasses.replace(st, moves=_unrotate(st.moves, rotation)) for st in stages]
    raw = [m for stage in stages for m in stage.moves]
    moves = tuple(optimize(raw, n))
    check = cube.flat.copy()
    geometry(n).apply(check, moves)
    verified = _solved(check, n)
    if not options.extra.get("stages_only") and not verified:  # pragma: no cover
        raise AssertionError(f"the {n}x{n}x{n} solution does not solve the cube")
    obtm = count(moves, Metric.HTM, n)
    if options.max_length is not None and obtm > options.max_length:
        raise NoSolutionError(
            f"the {n}x{n}x{n} solution has {obtm} moves (OBTM), more than max_length "
            f"{options.max_length}; drop max_length for big cubes"
        )
    return Solution(
        moves=moves,
        engine="nxn",
        n=n,
        stages=tuple(stages),
        stats={
            "obtm": obtm,
            "verified": verified,
            "centre_pieces": 6 * (n - 2) ** 2,
            "ms": round((time.perf_counter() - start) * 1000, 2),
        },
    )
