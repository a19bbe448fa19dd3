"""The freeslice macros of the edge pairing (:mod:`solver.engines.nxn.pairing`), built once per
N as sticker permutations, and how a state's edges are scored.

A macro is ``s P s'``: ``s`` a block of inner layers (with or without its outer layer) of one
half of the cube, any turn; ``P`` one of: a turn of an axis face; ``A B A'`` (``A`` a ring
face, ``B`` an axis face turn); with ``both_ends`` ``A B C A'`` (``B``, ``C`` turns of both
axis faces); with ``flips`` the edge flip ``A B A' C A' C' A`` (``C`` a ring face beside
``A``); with ``twists`` ``A C' B A' C`` (the same ``C``: the edge ``A B A'`` would bring in
comes the other way round, 5 moves against the flip's 7). Macros that move the wings alike
are kept once (the cheapest).

An edge's score is the wings paired in it: those that match the middle edge (odd N) or the
most common of the two innermost wings (even N), at the positions counted. A macro is scored
on the edges it mixes only (:func:`_effects`), in C (``_pairing.gains``, arguments from
:func:`_kernel_args`).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import numpy.typing as npt

from solver.cube.cubie import cubie_layout
from solver.cube.geometry import FACE_FRAMES, Face
from solver.cube.notation import Metric, Move, count
from solver.engines.nxn.sim import IntArray, geometry

__all__ = ["Blocks", "Counted"]

Colours = npt.NDArray[np.uint8]
#: blocks ``(lo, hi)`` of layers (1 the outer one) that a macro's slice may turn
Blocks = tuple[tuple[int, int], ...]
#: positions along an edge (0 .. N-3) whose wings are counted as paired
Counted = tuple[int, ...]


def _ring(axis: Face) -> list[Face]:
    na = np.array(FACE_FRAMES[axis][0])
    return [f for f in Face if int(np.array(FACE_FRAMES[f][0]) @ na) == 0]


def _adjacent(a: Face, c: Face) -> bool:
    return int(np.array(FACE_FRAMES[a][0]) @ np.array(FACE_FRAMES[c][0])) == 0


def _replacements(
    axis: Face, flips: bool = True, both_ends: bool = False, twists: bool = False
) -> list[list[Move]]:
    ends = (axis, Face((axis + 3) % 6))
    ring = _ring(axis)
    out: list[list[Move]] = [[Move.outer(b, t)] for b in ends for t in (1, 2, -1)]
    for a in ring:
        for da in (1, 2, -1):
            for b in ends:
                for t in (1, 2, -1):
                    out.append([Move.outer(a, da), Move.outer(b, t), Move.outer(a, -da)])
            if both_ends:  # A (B C) A': an edge of each axis layer into the slice at once
                for t in (1, 2, -1):
                    for u in (1, 2, -1):
                        near, far = Move.outer(ends[0], t), Move.outer(ends[1], u)
                        out.append([Move.outer(a, da), near, far, Move.outer(a, -da)])
        if not flips:
            continue
        for c in (c for c in ring if _adjacent(a, c)):
            for da in (1, -1):
                for dc in (1, -1):
                    for b in ends:
                        for t in (1, -1):
                            A, Ai = Move.outer(a, da), Move.outer(a, -da)
                            C, Ci = Move.outer(c, dc), Move.outer(c, -dc)
                            out.append([A, Move.outer(b, t), Ai, C, Ai, Ci, A])
    if twists:
        out += _twists(ends, ring)
    return out


def _twists(ends: tuple[Face, Face], ring: list[Face]) -> list[list[Move]]:
    """``A C' B A' C``: ``A``, ``C`` ring faces side by side (each turned a net zero), ``B``
    an axis face turn. ``A B A'`` swaps an edge of the axis layer into the slice; with ``C``
    turned away before and back after, the edge that comes in is the one beside it, the
    other way round (a 5x5's ``Dw R F' U R' F Dw'``)."""
    out: list[list[Move]] = []
    for a in ring:
        for c in (c for c in ring if _adjacent(a, c)):
            for da in (1, 2, -1):
                for dc in (1, -1):
                    for b in ends:
                        for t in (1, 2, -1):
                            out.append(
                                [
                                    Move.outer(a, da),
                                    Move.outer(c, -dc),
                                    Move.outer(b, t),
                                    Move.outer(a, -da),
                                    Move.outer(c, dc),
                                ]
                            )
    return out


def _slices(
    n: int, axis: Face, wide_only: bool = False, blocks: Blocks | None = None
) -> list[Move]:
    half = (n - 1) // 2 if n % 2 else n // 2
    out = []
    for lo in range(1, 2 if wide_only else half + 1):
        for hi in range(max(lo, 2), half + 1):
            if blocks is not None and (lo, hi) not in blocks:
                continue
            for t in (1, 2, -1):
                out.append(Move.block(axis, lo, hi, t))
    return out


def _perm(n: int, moves: list[Move]) -> IntArray:
    g = geometry(n)
    perm = np.arange(6 * n * n, dtype=np.int64)
    for move in moves:
        step = np.arange(6 * n * n, dtype=np.int64)
        lo, hi = move.layers(n)
        for layer in range(lo, hi + 1):
            dst, src = g.layer_turn(move.face, layer, move.quarter_turns)
            step[dst] = src
        perm = perm[step]
    return perm


@cache
def _macros(
    n: int,
    wide_only: bool = False,
    flips: bool = True,
    blocks: Blocks | None = None,
    both_ends: bool = False,
    twists: bool = False,
) -> tuple[npt.NDArray[np.int32], tuple[tuple[Move, ...], ...], IntArray]:
    """(for each macro, the sticker each first-side edge sticker gets, (M, 12, N-2); move
    sequences; OBTM costs). A wing's two stickers move together, so the first side names the
    wing (see :func:`_wing_codes`). ``wide_only``: slices that include their outer layer only;
    ``flips``: with the 7-move edge flips; ``blocks``: only slices of these layers;
    ``both_ends``: with ``A B C A'`` (``B``, ``C`` turns of both axis faces); ``twists``: with
    ``A C' B A' C`` (:func:`_twists`)."""
    edge = _edge_cells(n)[:, 0, :].reshape(-1)
    perms, seqs, costs = [], [], []
    for axis in Face:
        reps = _replacements(axis, flips, both_ends, twists)
        for s in _slices(n, axis, wide_only, blocks):
            for p in reps:
                seq = [s, *p, s.inverse()]
                perms.append(_perm(n, seq)[edge])
                seqs.append(tuple(seq))
                costs.append(count(seq, Metric.HTM, n))
    out = np.array(perms, dtype=np.int32).reshape(len(perms), 12, n - 2)
    cost = np.array(costs, dtype=np.int64)
    # Many macros move the wings alike (4x4: 7,416 macros, 4,338 effects): keep the cheapest
    # (then earliest) of each, in the original order, so the choice is the same, made sooner.
    by_cost = np.argsort(cost, kind="stable")
    _, first = np.unique(out[by_cost].reshape(len(out), -1), axis=0, return_index=True)
    keep = np.sort(by_cost[first])
    return out[keep], tuple(seqs[k] for k in keep), cost[keep]


@cache
def _edge_cells(n: int) -> IntArray:
    """(12, 2, N-2) stickers of the twelve edges: both faces, positions 1..N-2 in order."""
    edges = cubie_layout(n).edges
    cells = np.array([[list(w) for w in wings] for wings in edges], dtype=np.int64)
    return cells.transpose(0, 2, 1).copy()


@cache
def _partner(n: int) -> IntArray:
    """For every sticker, the other sticker of its wing (itself off the edges)."""
    out = np.arange(6 * n * n, dtype=np.int64)
    cells = _edge_cells(n)
    out[cells[:, 0, :]] = cells[:, 1, :]
    out[cells[:, 1, :]] = cells[:, 0, :]
    return out


def _wing_codes(state: Colours, n: int) -> npt.NDArray[np.uint8]:
    """Per sticker, its colour and its wing partner's colour as one code (``6 a + b``)."""
    codes: npt.NDArray[np.uint8] = state * np.uint8(6) + state[_partner(n)]
    return codes


def _score(
    codes: npt.NDArray[np.uint8], n: int, counted: Counted | None = None
) -> npt.NDArray[np.int64]:
    """Paired wings per candidate; ``codes`` is (candidates, 12, N-2) wing codes (first side)."""
    total: npt.NDArray[np.int64] = _edge_score(codes, n, counted).sum(axis=-1, dtype=np.int64)
    return total


def _edge_score(
    codes: npt.NDArray[np.uint8], n: int, counted: Counted | None = None
) -> npt.NDArray[np.int16]:
    """Paired wings per edge; ``codes`` is (..., N-2) wing codes (first side) of edges. The
    same for an edge moved whole, flipped or not (the reference wings are in the middle).
    ``counted``: the positions counted (default all; symmetric about the middle)."""
    k = n - 2
    refs = [k // 2] if n % 2 else [k // 2 - 1, k // 2]
    best: npt.NDArray[np.int16] | None = None
    for r in refs:  # (a sum over the short last axis is slow in numpy: added slice by slice)
        ref = codes[..., r]
        same = np.zeros(codes.shape[:-1], dtype=np.int16)
        for i in range(k) if counted is None else counted:
            same += codes[..., i] == ref
        best = same if best is None else np.maximum(best, same)
    assert best is not None
    return best


@cache
def _effects(
    n: int,
    wide_only: bool,
    flips: bool,
    blocks: Blocks | None = None,
    both_ends: bool = False,
    twists: bool = False,
) -> tuple[npt.NDArray[np.int32], IntArray, IntArray]:
    """Which edges each macro of :func:`_macros` changes, to score it there only: (for each
    macro, the stickers that the first sides of its mixed edges get, (M, T, N-2); the edges
    it splits, (M, T); the macros that split any). An edge that gets wings of several edges
    is mixed; the edges those come from are split, as many as mixed ones; every other edge
    moves whole and keeps its score. Rows are padded with edge 0 left as it is (its score
    cancels)."""
    perms, _, _ = _macros(n, wide_only, flips, blocks, both_ends, twists)
    cells = _edge_cells(n)
    edge_of = np.zeros(6 * n * n, dtype=np.int64)
    for side in (0, 1):
        edge_of[cells[:, side, :]] = np.arange(12)[:, None]
    src = edge_of[perms]  # (M, 12, N-2): the edge each wing comes from
    mixed = (src != src[..., :1]).any(axis=-1)
    width = max(1, int(mixed.sum(axis=-1).max()))
    after = np.broadcast_to(cells[0, 0], (len(perms), width, n - 2)).copy().astype(np.int32)
    split = np.zeros((len(perms), width), dtype=np.int64)
    for m in range(len(perms)):
        edges = np.flatnonzero(mixed[m])
        after[m, : edges.size] = perms[m, edges]
        sources = np.unique(src[m, edges])
        split[m, : sources.size] = sources
    return after, split, np.flatnonzero(mixed.any(axis=-1))


@cache
def _firsts(
    n: int,
    wide_only: bool,
    flips: bool,
    blocks: Blocks | None = None,
    both_ends: bool = False,
    twists: bool = False,
) -> tuple[IntArray, tuple[Move, ...]]:
    """For each macro, the index of its first move in a list of the distinct first moves."""
    _, seqs, _ = _macros(n, wide_only, flips, blocks, both_ends, twists)
    index: dict[Move, int] = {}
    for seq in seqs:
        index.setdefault(seq[0], len(index))
    return np.array([index[seq[0]] for seq in seqs], dtype=np.int64), tuple(index)


@cache
def _move_perm(n: int, move: Move) -> IntArray:
    """One move as a sticker permutation (new = old[perm])."""
    return _perm(n, [move])


@cache
def _macro_perms(
    n: int,
    wide_only: bool,
    flips: bool,
    blocks: Blocks | None = None,
    both_ends: bool = False,
    twists: bool = False,
) -> npt.NDArray[np.intp]:
    """Each macro of :func:`_macros` as a permutation of all stickers (new = old[perm]): a
    child of the beam is one gather."""
    _, seqs, _ = _macros(n, wide_only, flips, blocks, both_ends, twists)
    out = np.empty((len(seqs), 6 * n * n), dtype=np.intp)
    for k, seq in enumerate(seqs):
        perm = _move_perm(n, seq[0])
        for move in seq[1:]:
            perm = perm[_move_perm(n, move)]
        out[k] = perm
    return out


@cache
def _kernel_args(
    n: int,
    wide_only: bool,
    flips: bool,
    blocks: Blocks | None,
    both_ends: bool,
    twists: bool,
    counted: Counted | None,
) -> tuple[
    npt.NDArray[np.int32],
    npt.NDArray[np.int32],
    npt.NDArray[np.uint8],
    npt.NDArray[np.int32],
    npt.NDArray[np.uint8],
    npt.NDArray[np.uint8],
]:
    """:func:`_effects` and the edges' scoring as ``_pairing.gains`` takes them: (the distinct
    edges the macros make, as the stickers of their first sides; for each macro, the rows of
    its mixed edges there; the edges it splits; the twelve edges' first-side stickers; the
    positions counted as flags; the reference positions). Many macros make the same edge
    (7x7, first pass with the twists: 123,102 mixed edges, 5,949 distinct), so the kernel
    scores each once."""
    after, split, _ = _effects(n, wide_only, flips, blocks, both_ends, twists)
    k = n - 2
    flags = np.zeros(k, dtype=np.uint8)
    flags[list(range(k) if counted is None else counted)] = 1
    refs = np.array([k // 2] if n % 2 else [k // 2 - 1, k // 2], dtype=np.uint8)
    edges = np.ascontiguousarray(_edge_cells(n)[:, 0, :], dtype=np.int32)
    rows, index = np.unique(after.reshape(-1, k), axis=0, return_inverse=True)
    return (
        np.ascontiguousarray(rows, dtype=np.int32),
        np.ascontiguousarray(index.reshape(after.shape[:2]), dtype=np.int32),
        np.ascontiguousarray(split, dtype=np.uint8),
        edges,
        flags,
        refs,
    )
