"""Edge pairing by slice–replace–unslice ("freeslice"), before the wing 3-cycles.

With the centres solved, a block turn ``s`` of inner layers (with or without its outer layer)
brings wings of the four edges of its ring next to wings of other edges; a sequence ``P`` of
outer turns then swaps an edge of the ring for one from outside it, and ``s'`` closes the
slice again. ``P`` turns each face of the ring by a net zero (its four faces' centres, which
``s`` shifted, are back in place before ``s'``; the two faces of the slice's axis may turn
freely, ``s`` does not touch their centres), so ``s P s'`` keeps every centre. Such a macro
moves wings between edges in a few moves, where a pure 3-cycle with setups costs 10 or more.

Candidates, built once per N as sticker permutations (``new = old[perm]``): ``s`` every block
of one half of the cube (layers ``lo..hi`` of a face, ``hi`` before the middle layer), any
turn; ``P`` one of: a turn of an axis face; ``A B A'`` (``A`` a ring face, ``B`` an axis
face turn); the edge flip ``A B A' C A' C' A`` (``C`` a ring face beside ``A``). Each step
applies every candidate to the state at once (numpy) and keeps the one that pairs most wing
stickers per move (OBTM); it stops when none gains. Pairing is counted per edge: the wings
that match the middle edge (odd N) or the most common of the two innermost wings (even N).
When no macro gains, one outer turn before the macro is tried too (every N: on even N the
PLL parity that this may leave is fixed afterwards by a 9-move algorithm, see the engine).
The wings' permutation parity is kept (``s`` and ``s'`` are two odd or two even
permutations of each orbit, outer turns are even), so the 3-cycles of
:mod:`solver.engines.nxn.wings` finish every orbit afterwards.

Used for N up to :data:`MAX_N` (the candidate table grows as N³).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import numpy.typing as npt

from solver.cube.cubie import cubie_layout
from solver.cube.geometry import FACE_FRAMES, Face
from solver.cube.notation import Metric, Move, count
from solver.engines.nxn.sim import IntArray, geometry

__all__ = ["MAX_N", "pair_edges", "paired_count"]

MAX_N = 9
Colours = npt.NDArray[np.uint8]


def _ring(axis: Face) -> list[Face]:
    na = np.array(FACE_FRAMES[axis][0])
    return [f for f in Face if int(np.array(FACE_FRAMES[f][0]) @ na) == 0]


def _adjacent(a: Face, c: Face) -> bool:
    return int(np.array(FACE_FRAMES[a][0]) @ np.array(FACE_FRAMES[c][0])) == 0


def _replacements(axis: Face) -> list[list[Move]]:
    ends = (axis, Face((axis + 3) % 6))
    ring = _ring(axis)
    out: list[list[Move]] = [[Move.outer(b, t)] for b in ends for t in (1, 2, -1)]
    for a in ring:
        for da in (1, 2, -1):
            for b in ends:
                for t in (1, 2, -1):
                    out.append([Move.outer(a, da), Move.outer(b, t), Move.outer(a, -da)])
        for c in (c for c in ring if _adjacent(a, c)):
            for da in (1, -1):
                for dc in (1, -1):
                    for b in ends:
                        for t in (1, -1):
                            A, Ai = Move.outer(a, da), Move.outer(a, -da)
                            C, Ci = Move.outer(c, dc), Move.outer(c, -dc)
                            out.append([A, Move.outer(b, t), Ai, C, Ai, Ci, A])
    return out


def _slices(n: int, axis: Face) -> list[Move]:
    half = (n - 1) // 2 if n % 2 else n // 2
    out = []
    for lo in range(1, half + 1):
        for hi in range(max(lo, 2), half + 1):
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
def _macros(n: int) -> tuple[npt.NDArray[np.int32], tuple[tuple[Move, ...], ...], IntArray]:
    """(for each macro, the sticker each first-side edge sticker gets, (M, 12, N-2); move
    sequences; OBTM costs). A wing's two stickers move together, so the first side names the
    wing (see :func:`_wing_codes`)."""
    edge = _edge_cells(n)[:, 0, :].reshape(-1)
    perms, seqs, costs = [], [], []
    for axis in Face:
        reps = _replacements(axis)
        for s in _slices(n, axis):
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


def _score(codes: npt.NDArray[np.uint8], n: int) -> npt.NDArray[np.int64]:
    """Paired wings per candidate; ``codes`` is (candidates, 12, N-2) wing codes (first side)."""
    k = n - 2
    refs = [k // 2] if n % 2 else [k // 2 - 1, k // 2]
    best: npt.NDArray[np.int16] | None = None
    for r in refs:  # (a sum over the short last axis is slow in numpy: added slice by slice)
        ref = codes[..., r]
        same = np.zeros(codes.shape[:-1], dtype=np.int16)
        for i in range(k):
            same += codes[..., i] == ref
        best = same if best is None else np.maximum(best, same)
    assert best is not None
    total: npt.NDArray[np.int64] = best.sum(axis=-1, dtype=np.int64)
    return total


def paired_count(state: Colours, n: int) -> int:
    """Wings (counting the reference ones) that sit paired in their edge."""
    cells = _edge_cells(n)[:, 0, :]
    return int(_score(_wing_codes(state, n)[cells][None], n)[0])


def pair_edges(state: Colours, n: int, limit: int | None = None) -> list[Move] | None:
    """Greedy freeslice pairing (turns ``state``); centres must be solved and stay solved.
    None as soon as the moves reach ``limit`` (OBTM; the caller has a shorter way already)."""
    if n > MAX_N:
        return []
    g = geometry(n)
    moves: list[Move] = []
    full = 12 * (n - 2)
    while True:
        base = paired_count(state, n)
        if base == full:
            break
        if limit is not None and count(moves, Metric.HTM, n) >= limit:
            return None
        step = _best_step(state, n, base, [])
        if step is None:  # none pairs anything as the edges stand: an outer turn first
            for setup in (Move.outer(f, t) for f in Face for t in (1, 2, -1)):
                turned = state.copy()
                g.apply_move(turned, setup)
                found = _best_step(turned, n, base, [setup])
                if found is not None and (step is None or found[0] > step[0]):
                    step = found
        if step is None:
            break
        g.apply(state, step[1])
        moves.extend(step[1])
    return moves


def _best_step(
    state: Colours, n: int, base: int, setup: list[Move]
) -> tuple[float, list[Move]] | None:
    """The macro (after ``setup``, already applied to ``state``) with most wings paired per
    move, and that ratio; None if none pairs anything."""
    perms, seqs, costs = _macros(n)
    gains = _score(_wing_codes(state, n)[perms], n) - base
    ratio = np.where(gains > 0, gains / (costs + len(setup)), -1.0)
    k = int(np.argmax(ratio))
    if ratio[k] <= 0:
        return None
    return float(ratio[k]), [*setup, *seqs[k]]
