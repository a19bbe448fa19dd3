"""One builder per table group: ``(moves group's arrays, progress) -> the group's arrays``.

``moves`` needs nothing (:mod:`.moves`); every other group is computed from the ``moves``
arrays with the breadth-first builders of :mod:`.bfs`. The robot-metric groups (``axial1``,
``axial2``) count a group of turns of one axis as one move: their move tables are the face-turn
tables composed over the 45 groups of :data:`~solver.engines.twophase.coord.AXIAL_MOVES`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

import numpy as np

from solver.engines.twophase import coord as C
from solver.engines.twophase.tables.bfs import (
    UNSET,
    exact_bfs,
    group_masks,
    move_masks,
    pack_axes,
    pack_mod3,
    pack_nibbles,
    sym_bfs,
)
from solver.engines.twophase.tables.cache import Array
from solver.engines.twophase.tables.moves import UNDEFINED, build_moves
from solver.engines.twophase.tables.progress import Progress

__all__ = ["BUILDERS", "Builder", "build_timed", "compose", "slice_move"]

log = logging.getLogger(__name__)

Arrays = dict[str, Array]
Builder = Callable[[Arrays, Progress], Arrays]


def compose(table: Array, moves: Sequence[int] | None = None) -> Array:
    """A move table ``(n, 18)`` extended to the 45 robot groups (columns ``moves`` only; the
    others are :data:`~.moves.UNDEFINED`)."""
    t = np.asarray(table, dtype=np.int64)
    n = t.shape[0]
    out = np.full((n, C.N_AXIAL), UNDEFINED, dtype=np.int64)
    base = np.arange(n)
    for k in range(C.N_AXIAL) if moves is None else moves:
        m1, m2 = C.AXIAL_MOVES[k]
        x = base if m1 < 0 else t[base, m1]
        if m2 >= 0:
            x = t[x, m2]
        out[:, k] = x
    return out


def slice_move(slice_sorted_move: Array) -> Array:
    """The move table ``(495, 18)`` of the slice position alone."""
    table: Array = (
        slice_sorted_move.astype(np.int64)[np.arange(C.N_SLICE) * C.N_PERM_4] // C.N_PERM_4
    )
    return table


def _build_phase1(a: Arrays, report: Progress) -> Arrays:
    rep = a["flipslice_rep"].astype(np.int64)
    slc, flp = rep // C.N_FLIP, rep % C.N_FLIP
    ssm = a["slice_sorted_move"].astype(np.int64)
    fm = a["flip_move"].astype(np.int64)
    raw_new = (ssm[slc * C.N_PERM_4] // C.N_PERM_4) * C.N_FLIP + fm[flp]  # (64430, 18)
    class_move = a["flipslice_classidx"][raw_new]
    class_sym = a["flipslice_sym"][raw_new]
    depth = sym_bfs(
        "phase 1 pruning",
        C.N_FLIPSLICE_CLASS,
        C.N_TWIST,
        class_move,
        class_sym,
        a["twist_move"],
        a["twist_conj"],
        a["flipslice_stab"].astype(np.int64),
        range(C.N_MOVE),
        report,
    )
    axes = [m // 3 % 3 for m in range(C.N_MOVE)]
    packed = pack_axes(
        depth, class_move, class_sym, a["twist_move"], a["twist_conj"], C.N_TWIST, axes
    )
    return {"phase1_axes": packed}


def _corner_bfs(
    a: Arrays,
    name: str,
    coord: str,
    size: int,
    moves: Sequence[int],
    report: Progress,
    start: Array | None = None,
) -> Array:
    """Exact depths of corner permutation class x ``coord`` (``size`` values, its move and
    conjugation tables ``{coord}_move`` / ``{coord}_conj``) under ``moves`` (to the solved
    state, or to the nearest ``start`` entry: see :func:`~.bfs.sym_bfs`)."""
    raw_new = a["corners_move"].astype(np.int64)[a["corner_rep"].astype(np.int64)]  # (2768, 18)
    return sym_bfs(
        name,
        C.N_CORNER_CLASS,
        size,
        a["corner_classidx"][raw_new],
        a["corner_sym"][raw_new],
        a[f"{coord}_move"],
        a[f"{coord}_conj"],
        a["corner_stab"].astype(np.int64),
        moves,
        report,
        start,
    )


def _build_phase2(a: Arrays, report: Progress) -> Arrays:
    depth = _corner_bfs(a, "phase 2 pruning", "ud_edges", C.N_UD_EDGES, C.PHASE2_MOVES, report)
    return {"phase2_prun": pack_mod3(depth, in_place=True)}


def _build_cornertwist(a: Arrays, report: Progress) -> Arrays:
    """Exact depth (all 18 face turns) of the corners alone, corner permutation class x
    twist, 4 bits each (2768 x 2187 entries, 3 MB): a lower bound on the rest of any
    solution, which the phase-1 search tests against the length it must beat."""
    depth = _corner_bfs(a, "corner pruning", "twist", C.N_TWIST, range(C.N_MOVE), report)
    return {"corner_twist_depth": pack_nibbles(depth, in_place=True)}


#: the most face turns any corner state needs (the largest entry of ``corner_twist_depth``)
CORNER_MAX_DEPTH = 11
#: rows of ``corner_goal_depth``: phase-2 lengths 1..GOAL_ROWS (the kernel's ``GOAL_ROWS``)
GOAL_ROWS = 8


def _phase2_corner_depth(corners_move: Array, columns: Sequence[int] = C.PHASE2_MOVES) -> Array:
    """Exact phase-2 distance of each corner permutation alone: in phase-2 turns (0..13), or
    with a 45-column table and ``C.PHASE2_AXIAL`` in phase-2 groups."""
    table = np.asarray(corners_move, dtype=np.int64)[:, list(columns)]
    depth = np.full(C.N_CORNERS, UNSET, dtype=np.uint8)
    depth[0] = 0
    frontier = np.zeros(1, dtype=np.int64)
    d = 0
    while len(frontier):
        d += 1
        nxt = np.unique(table[frontier].ravel())
        frontier = nxt[depth[nxt] == UNSET]
        depth[frontier] = d
    return depth


def _build_cornergoal(a: Arrays, report: Progress) -> Arrays:
    """Row ``p - 1`` (p = 1..:data:`GOAL_ROWS`): the exact distance (all 18 face turns) from
    corner class x twist to the nearest corner state with twist 0 whose corner permutation
    phase 2 solves within ``p`` turns, 4 bits each (3 MB a row). A phase-1 end that phase 2
    may finish in ``p`` turns has such corners, so a node needs at least its entry of
    phase-1 turns still: a bound on the phase-1 length the search is at, stronger than the
    corners' own distance (``cornertwist``, row 0) less ``p``. ``corner_goal_max[p]`` is
    the largest entry of row ``p`` (row 0 included)."""
    p2 = _phase2_corner_depth(a["corners_move"])
    # the goal states' entries: class c's representative with twist 0 (every member of a
    # class has the representative's phase-2 distance: the 16 symmetries keep phase 2's
    # turns)
    rep_depth = p2[a["corner_rep"].astype(np.int64)]
    rows = np.zeros((GOAL_ROWS, (C.N_CORNER_CLASS * C.N_TWIST + 1) // 2), dtype=np.uint8)
    most = np.zeros(GOAL_ROWS + 1, dtype=np.uint8)
    most[0] = CORNER_MAX_DEPTH
    for p in range(1, GOAL_ROWS + 1):
        start = np.nonzero(rep_depth <= p)[0] * C.N_TWIST
        depth = _corner_bfs(
            a, f"corner goal {p} pruning", "twist", C.N_TWIST, range(C.N_MOVE), report, start
        )
        most[p] = depth.max()
        rows[p - 1] = pack_nibbles(depth, in_place=True)
    return {"corner_goal_depth": rows, "corner_goal_max": most}


def _build_cornslice(a: Arrays, report: Progress) -> Arrays:
    """Exact phase-2 depths of corners x slice order and of ud_edges x slice order (small
    tables that reject most phase-2 starts before the big table is walked)."""
    total = C.N_CORNERS * C.N_PERM_4
    report("phase 2 slice tables", 0, 2 * total)
    out = {}
    for k, (name, table) in enumerate(
        (("cornslice_depth", a["corners_move"]), ("edgeslice_depth", a["ud_edges_move"]))
    ):
        out[name] = exact_bfs(table, a["slice_sorted_move"], C.N_PERM_4, C.PHASE2_MOVES)
        report("phase 2 slice tables", (k + 1) * total, 2 * total)
    return out


def _build_slicepair(a: Arrays, report: Progress) -> Arrays:
    """Exact phase-1 depths of slice x twist and slice x flip with the turns that change them
    (:func:`~.bfs.move_masks`, 4 MB each): they reject most children before the big phase-1
    table is read; the face-turn search reads a node's two entries and takes only the moves
    both allow, without computing the other children. The depths alone are the masks' top
    byte (:func:`~.sets.mask_depth`, derived when the tables load)."""
    report("phase 1 slice tables", 0, 2)
    sm = slice_move(a["slice_sorted_move"])
    out = {}
    for k, (coord, n) in enumerate((("twist", C.N_TWIST), ("flip", C.N_FLIP))):
        depth = exact_bfs(sm, a[f"{coord}_move"], n)
        out[f"slice_{coord}_mask"] = move_masks(depth, sm, a[f"{coord}_move"], n)
        report("phase 1 slice tables", k + 1, 2)
    return out


def _build_axial1(a: Arrays, report: Progress) -> Arrays:
    rep = a["flipslice_rep"].astype(np.int64)
    sm = compose(slice_move(a["slice_sorted_move"]))
    fm = compose(a["flip_move"])
    tm = compose(a["twist_move"])
    raw_new = sm[rep // C.N_FLIP] * C.N_FLIP + fm[rep % C.N_FLIP]
    class_move = a["flipslice_classidx"][raw_new]
    class_sym = a["flipslice_sym"][raw_new]
    depth = sym_bfs(
        "robot phase 1 pruning",
        C.N_FLIPSLICE_CLASS,
        C.N_TWIST,
        class_move,
        class_sym,
        tm,
        a["twist_conj"],
        a["flipslice_stab"].astype(np.int64),
        range(C.N_AXIAL),
        report,
    )
    # the axis of each group: its first face's (AXIAL_MOVES, one axis's 15 groups in a row)
    axes = [(m1 if m1 >= 0 else m2) // 3 % 3 for m1, m2 in C.AXIAL_MOVES]
    packed = pack_axes(depth, class_move, class_sym, tm, a["twist_conj"], C.N_TWIST, axes)
    slice_twist = exact_bfs(sm, tm, C.N_TWIST)
    slice_flip = exact_bfs(sm, fm, C.N_FLIP)
    return {
        "axial1_axes": packed,
        # the exact slice x twist and slice x flip depths with the groups that change them
        # (8 MB each): a node reads which children the small tables pass instead of computing
        # all of them
        "axial_slice_twist_mask": group_masks(slice_twist, sm, tm, C.N_TWIST),
        "axial_slice_flip_mask": group_masks(slice_flip, sm, fm, C.N_FLIP),
    }


def _build_axial2(a: Arrays, report: Progress) -> Arrays:
    moves = C.PHASE2_AXIAL
    cm = compose(a["corners_move"], moves)
    um = compose(a["ud_edges_move"], moves)
    sm = compose(a["slice_sorted_move"][: C.N_PERM_4], moves)
    raw_new = cm[a["corner_rep"].astype(np.int64)]
    defined = np.where(raw_new == UNDEFINED, 0, raw_new)
    depth = sym_bfs(
        "robot phase 2 pruning",
        C.N_CORNER_CLASS,
        C.N_UD_EDGES,
        a["corner_classidx"][defined],
        a["corner_sym"][defined],
        um,
        a["ud_edges_conj"],
        a["corner_stab"].astype(np.int64),
        moves,
        report,
    )
    return {
        "axial2_depth": pack_nibbles(depth, in_place=True),
        "axial_cornslice": exact_bfs(cm, sm, C.N_PERM_4, moves),
        "axial_edgeslice": exact_bfs(um, sm, C.N_PERM_4, moves),
    }


#: the phase-2 group counts the robot corner goal has rows for (the kernel's ``AX_GOAL_FIRST``
#: and ``AX_GOAL_LAST``): fewer take the first row (a weaker bound), more the last with slack
AX_GOAL_FIRST, AX_GOAL_LAST = 3, 8


def _build_axialgoal(a: Arrays, report: Progress) -> Arrays:
    """The robot search's corner goal: for p = :data:`AX_GOAL_FIRST`..:data:`AX_GOAL_LAST`,
    the exact distance in groups (all 45) from corner class x twist to the nearest corner state
    with twist 0 whose permutation phase 2 solves within p groups, as ``cornergoal`` is for
    face turns. A state within p + 1 groups of solved is one group from one within p, so each
    row is the next one's entry or one more: one byte an entry holds them all (6 MB against
    3 MB a row), the last row's distance in bits 0-2 (at most 7) and in bit p (p < 8) whether
    row p is one more than row p + 1. Row p's entry of byte e is then ``(e & 7)`` plus the bits
    set in ``e >> p``. ``axial_corner_goal_max[p]`` is row p's largest entry."""
    cm = compose(a["corners_move"])
    p2 = _phase2_corner_depth(cm, C.PHASE2_AXIAL)
    rep_depth = p2[a["corner_rep"].astype(np.int64)]
    grouped = dict(a, corners_move=cm, twist_move=compose(a["twist_move"]))
    packed = np.zeros(C.N_CORNER_CLASS * C.N_TWIST, dtype=np.uint8)
    most = np.zeros(AX_GOAL_LAST + 1, dtype=np.uint8)
    after: Array | None = None
    for p in range(AX_GOAL_LAST, AX_GOAL_FIRST - 1, -1):
        start = np.nonzero(rep_depth <= p)[0] * C.N_TWIST
        row = _corner_bfs(
            grouped, f"robot corner goal {p}", "twist", C.N_TWIST, range(C.N_AXIAL), report, start
        )
        most[p] = row.max()
        if after is None:
            if most[p] > 7:
                raise ValueError(f"robot corner goal {p}: an entry of {most[p]} needs 4 bits")
            packed |= row
        else:
            step = row.astype(np.int16) - after
            if step.min() < 0 or step.max() > 1:
                raise ValueError(f"robot corner goal {p}: rows {p} and {p + 1} differ by over 1")
            packed |= step.astype(np.uint8) << p
        after = row.astype(np.int16)
    return {"axial_corner_goal": packed, "axial_corner_goal_max": most}


BUILDERS: dict[str, Builder] = {
    "moves": lambda _a, report: build_moves(report),
    "phase1axes": _build_phase1,
    "phase2": _build_phase2,
    "cornslice": _build_cornslice,
    "slicepair": _build_slicepair,
    "cornertwist": _build_cornertwist,
    "cornergoal": _build_cornergoal,
    "axial1": _build_axial1,
    "axial2": _build_axial2,
    "axialgoal": _build_axialgoal,
}


def build_timed(group: str, arrays: Arrays, report: Progress, build_s: dict[str, float]) -> Arrays:
    """Build ``group`` from the ``moves`` arrays, recording its time in ``build_s``."""
    t0 = time.perf_counter()
    out = BUILDERS[group](arrays, report)
    build_s[group] = time.perf_counter() - t0
    log.info("built two-phase table group %s in %.1f s", group, build_s[group])
    return out
