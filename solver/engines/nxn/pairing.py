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
PLL parity that this may leave is fixed afterwards by a 7-move algorithm, see the engine).
The wings' permutation parity is kept (``s`` and ``s'`` are two odd or two even
permutations of each orbit, outer turns are even), so the 3-cycles of
:mod:`solver.engines.nxn.wings` finish every orbit afterwards.

N ≥ 5: :func:`beam_pair_edges` instead of the greedy choice. A beam search keeps the
:class:`Beam` ``width`` best partial pairings (wings paired minus moves / ``scale``), each
expanded by its ``per_node`` best macros, with the cost of a macro counted after it cancels
into the moves before it (``s P s'`` then ``s Q s'`` is ``s P Q s'``: several edges per
slice). Every pairing that cannot gain any more is finished (the caller's wing 3-cycles and
parity fixes) and the shortest pairing + finish is kept. Per N the macro set is cut to what
pays (:func:`beam_for`): 5x5 wide slices only, no edge flips on odd N.

Used for N up to :data:`MAX_N` (the candidate table grows as N³).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from solver.cube.cubie import cubie_layout
from solver.cube.geometry import FACE_FRAMES, Face
from solver.cube.notation import Metric, Move, count
from solver.engines.nxn.sim import IntArray, geometry

__all__ = [
    "MAX_N",
    "Beam",
    "beam_for",
    "beam_pair_edges",
    "beam_pairings",
    "pair_edges",
    "paired_count",
]

MAX_N = 9
Colours = npt.NDArray[np.uint8]


def _ring(axis: Face) -> list[Face]:
    na = np.array(FACE_FRAMES[axis][0])
    return [f for f in Face if int(np.array(FACE_FRAMES[f][0]) @ na) == 0]


def _adjacent(a: Face, c: Face) -> bool:
    return int(np.array(FACE_FRAMES[a][0]) @ np.array(FACE_FRAMES[c][0])) == 0


def _replacements(axis: Face, flips: bool = True, both_ends: bool = False) -> list[list[Move]]:
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
    return out


#: blocks ``(lo, hi)`` of layers (1 the outer one) that a macro's slice may turn
Blocks = tuple[tuple[int, int], ...]


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
) -> tuple[npt.NDArray[np.int32], tuple[tuple[Move, ...], ...], IntArray]:
    """(for each macro, the sticker each first-side edge sticker gets, (M, 12, N-2); move
    sequences; OBTM costs). A wing's two stickers move together, so the first side names the
    wing (see :func:`_wing_codes`). ``wide_only``: slices that include their outer layer only;
    ``flips``: with the 7-move edge flips; ``blocks``: only slices of these layers;
    ``both_ends``: with ``A B C A'`` (``B``, ``C`` turns of both axis faces)."""
    edge = _edge_cells(n)[:, 0, :].reshape(-1)
    perms, seqs, costs = [], [], []
    for axis in Face:
        reps = _replacements(axis, flips, both_ends)
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


#: positions along an edge (0 .. N-3) whose wings are counted as paired
Counted = tuple[int, ...]


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
    n: int, wide_only: bool, flips: bool, blocks: Blocks | None = None, both_ends: bool = False
) -> tuple[npt.NDArray[np.int32], IntArray, IntArray]:
    """Which edges each macro of :func:`_macros` changes, to score it there only: (for each
    macro, the stickers that the first sides of its mixed edges get, (M, T, N-2); the edges
    it splits, (M, T); the macros that split any). An edge that gets wings of several edges
    is mixed; the edges those come from are split, as many as mixed ones; every other edge
    moves whole and keeps its score. Rows are padded with edge 0 left as it is (its score
    cancels)."""
    perms, _, _ = _macros(n, wide_only, flips, blocks, both_ends)
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


def paired_count(state: Colours, n: int, counted: Counted | None = None) -> int:
    """Wings (counting the reference ones) that sit paired in their edge (``counted``: at
    these positions only)."""
    cells = _edge_cells(n)[:, 0, :]
    return int(_score(_wing_codes(state, n)[cells][None], n, counted)[0])


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


@dataclass(frozen=True)
class Beam:
    """Settings of :func:`beam_pair_edges`: ``width`` partial pairings kept per step, each
    expanded by its ``per_node`` best macros; a pairing's rank is wings paired minus moves /
    ``scale`` (moves one more paired wing is worth); the macro set (see :func:`_macros`)."""

    width: int
    per_node: int
    scale: float = 2.0
    wide_only: bool = False
    flips: bool = True
    #: per step, how many pairings that no macro improves get an outer turn first
    setup_nodes: int = 2
    #: OBTM per unpaired wing at least still to come (prunes against the best so far)
    floor: float = 1.0
    #: the slices' layer blocks (None: every block of the outer half)
    blocks: Blocks | None = None
    #: the wing positions counted (None: all; see :func:`_edge_score`)
    counted: Counted | None = None
    #: with the macros ``s A B C A' s'`` (``B``, ``C`` turns of both faces of the slice's
    #: axis: an edge from each of their layers into the slice at once)
    both_ends: bool = False


def beam_for(n: int) -> Beam:
    """The settings per N, measured (docs/benchmarks.md): a 5x5 loses nothing without its
    inner-slice macros and edge flips (three quarters of the candidates), a 6x6 or 7x7 gains
    more from a wider beam than from the flips in the same time; the width is what the time
    allows (the edges are solved after several centre rotations)."""
    if n == 4:  # only a second pass on the best centre solutions (see the engine)
        return Beam(8, 3)
    if n == 5:
        return Beam(16, 8, wide_only=True, flips=False)
    if n <= 7:
        return Beam(32, 3, flips=False)
    return Beam(8, 3, flips=False)


@dataclass
class _Node:
    state: Colours
    moves: list[Move]
    cost: int  # OBTM of moves
    paired: int


_SETUPS = tuple(Move.outer(f, t) for f in Face for t in (1, 2, -1))


@cache
def _move_cost(move: Move, n: int) -> int:
    return count([move], Metric.HTM, n)


def _join(moves: list[Move], seq: tuple[Move, ...] | list[Move], n: int) -> tuple[list[Move], int]:
    """``moves + seq`` with the turns of one block meeting at the junction merged, and the
    OBTM that adds."""
    added, kept, tail = _join_tail(moves, seq, n)
    return moves[:kept] + tail, added


def _join_tail(
    moves: list[Move], seq: tuple[Move, ...] | list[Move], n: int
) -> tuple[int, int, list[Move]]:
    """:func:`_join` without copying ``moves``: (OBTM added, how many of ``moves`` stay, the
    moves after them)."""
    kept = len(moves)
    tail: list[Move] = []
    added = 0
    for m in seq:
        last = tail[-1] if tail else moves[kept - 1] if kept else None
        if last is not None and (last.face, last.lo, last.hi) == (m.face, m.lo, m.hi):
            if tail:
                tail.pop()
            else:
                kept -= 1
            added -= _move_cost(last, n)
            q = (last.quarter_turns + m.quarter_turns) % 4
            if q:
                tail.append(Move.block(m.face, m.lo, m.hi, (0, 1, 2, -1)[q]))
                added += _move_cost(tail[-1], n)
        else:
            tail.append(m)
            added += _move_cost(m, n)
    return added, kept, tail


@cache
def _firsts(
    n: int, wide_only: bool, flips: bool, blocks: Blocks | None = None, both_ends: bool = False
) -> tuple[IntArray, tuple[Move, ...]]:
    """For each macro, the index of its first move in a list of the distinct first moves."""
    _, seqs, _ = _macros(n, wide_only, flips, blocks, both_ends)
    index: dict[Move, int] = {}
    for seq in seqs:
        index.setdefault(seq[0], len(index))
    return np.array([index[seq[0]] for seq in seqs], dtype=np.int64), tuple(index)


def _savings(last: Move | None, firsts: tuple[Move, ...], n: int) -> npt.NDArray[np.float64]:
    """OBTM saved when each first move follows ``last`` (merged, or cancelled away)."""
    out = np.zeros(len(firsts))
    if last is None:
        return out
    for i, m in enumerate(firsts):
        if (m.face, m.lo, m.hi) == (last.face, last.lo, last.hi):
            one = _move_cost(m, n)
            out[i] = 2 * one if (m.quarter_turns + last.quarter_turns) % 4 == 0 else one
    return out


@cache
def _move_perm(n: int, move: Move) -> IntArray:
    """One move as a sticker permutation (new = old[perm])."""
    return _perm(n, [move])


@cache
def _macro_perms(
    n: int, wide_only: bool, flips: bool, blocks: Blocks | None = None, both_ends: bool = False
) -> npt.NDArray[np.intp]:
    """Each macro of :func:`_macros` as a permutation of all stickers (new = old[perm]): a
    child of the beam is one gather."""
    _, seqs, _ = _macros(n, wide_only, flips, blocks, both_ends)
    out = np.empty((len(seqs), 6 * n * n), dtype=np.intp)
    for k, seq in enumerate(seqs):
        perm = _move_perm(n, seq[0])
        for move in seq[1:]:
            perm = perm[_move_perm(n, move)]
        out[k] = perm
    return out


#: a way on from a beam node: (moves, wings it gains, its :func:`_macro_perms` row or -1)
_Option = tuple[list[Move], int, int]


def _options(node: _Node, n: int, beam: Beam, setups: bool) -> list[_Option]:
    """The ``per_node`` macros that rank best after ``node`` (wings gained minus their cost
    after cancellation / ``scale``), each with the wings it gains; when none gains (and
    ``setups``), the best with an edge flip (if the set had none) or after one outer turn."""
    _, seqs, costs = _macros(n, beam.wide_only, beam.flips, beam.blocks, beam.both_ends)
    first_of, firsts = _firsts(n, beam.wide_only, beam.flips, beam.blocks, beam.both_ends)
    last = node.moves[-1] if node.moves else None
    gains = _gains(node.state, n, beam)
    value = np.where(
        gains > 0, gains - (costs - _savings(last, firsts, n)[first_of]) / beam.scale, -np.inf
    )
    top = _top(value, beam.per_node)
    if top or not setups:
        return [(list(seqs[k]), int(gains[k]), k) for k in top]
    g = geometry(n)
    found: list[tuple[float, list[Move], int]] = []
    if not beam.flips:  # the macros with edge flips, left out so far
        full = dataclasses.replace(beam, flips=True)
        _, all_seqs, all_costs = _macros(n, beam.wide_only, True, beam.blocks, beam.both_ends)
        gains = _gains(node.state, n, full)
        value = np.where(gains > 0, gains - all_costs / beam.scale, -np.inf)
        found += [(float(value[k]), list(all_seqs[k]), int(gains[k])) for k in _top(value, 2)]
    for setup in _SETUPS:
        turned = node.state.copy()
        g.apply_move(turned, setup)
        gains = _gains(turned, n, beam)
        value = np.where(gains > 0, gains - (costs + 1) / beam.scale, -np.inf)
        found += [(float(value[k]), [setup, *seqs[k]], int(gains[k])) for k in _top(value, 2)]
    found.sort(key=lambda item: -item[0])
    return [(seq, gain, -1) for _, seq, gain in found[: beam.per_node]]


def _gains(state: Colours, n: int, beam: Beam) -> npt.NDArray[np.int64]:
    """Wings each macro pairs (or unpairs: negative), scored on the edges it mixes."""
    after, split, _ = _effects(n, beam.wide_only, beam.flips, beam.blocks, beam.both_ends)
    codes = _wing_codes(state, n)
    before = _edge_score(codes[_edge_cells(n)[:, 0, :]], n, beam.counted)
    gains: npt.NDArray[np.int64] = _edge_score(codes[after], n, beam.counted).sum(
        axis=-1, dtype=np.int64
    ) - before[split].sum(axis=-1, dtype=np.int64)
    return gains


def _top(value: npt.NDArray[np.float64], k: int) -> list[int]:
    """Indices of the ``k`` largest finite values, largest first."""
    part = np.argpartition(-value, k)[:k] if k < value.size else np.arange(value.size)
    part = part[np.argsort(-value[part], kind="stable")]
    return [int(i) for i in part if np.isfinite(value[i])]


def beam_pair_edges(
    state: Colours,
    n: int,
    finish: Callable[[Colours], list[Move]],
    beam: Beam | None = None,
    limit: int | None = None,
) -> list[Move] | None:
    """Beam-searched freeslice pairing, each pairing completed by ``finish`` (moves that end
    the edges from the state given, which it may turn); the shortest whole is returned and
    ``state`` turned by it. Centres must be solved and stay solved. None when nothing shorter
    than ``limit`` (OBTM) was found."""
    found = beam_pairings(state, n, finish, beam, limit)
    if not found:
        return None
    state[:] = found[0][2]
    return found[0][1]


def beam_pairings(
    state: Colours,
    n: int,
    finish: Callable[[Colours], list[Move]],
    beam: Beam | None = None,
    limit: int | None = None,
    keep: int = 1,
) -> list[tuple[int, list[Move], Colours]]:
    """:func:`beam_pair_edges`' ``keep`` shortest finished pairings that end in different
    states, each as (OBTM, moves, state after them), shortest first (``state`` is not
    changed); those shorter than ``limit`` only."""
    settings = beam if beam is not None else beam_for(n)
    g = geometry(n)
    full = 12 * (n - 2 if settings.counted is None else len(settings.counted))
    best: dict[bytes, tuple[int, list[Move], Colours]] = {}
    top = (1 << 30) if limit is None else limit
    bound = top  # the keep-th shortest so far (or limit)
    nodes = [_Node(state.copy(), [], 0, paired_count(state, n, settings.counted))]
    while nodes:
        children: dict[bytes, tuple[_Node, _Node, int, list[Move]]] = {}
        setups = settings.setup_nodes
        for node in nodes:
            options = [] if node.paired == full else _options(node, n, settings, False)
            if not options:  # nothing gains any more as it stands: finish this one
                end = node.state.copy()
                moves, added = _join(node.moves, finish(end), n)
                cost = node.cost + added
                key = end.tobytes()
                if cost < bound and (key not in best or best[key][0] > cost):
                    best[key] = (cost, moves, end)
                    if len(best) > keep:
                        del best[max(best, key=lambda k: best[k][0])]
                    if len(best) == keep:
                        bound = max(v[0] for v in best.values())
                if node.paired == full or setups == 0:
                    continue
                setups -= 1  # and go on after an outer turn
                options = _options(node, n, settings, True)
            perms = _macro_perms(
                n, settings.wide_only, settings.flips, settings.blocks, settings.both_ends
            )
            for seq, gain, row in options:
                added, kept, tail = _join_tail(node.moves, seq, n)
                cost = node.cost + added
                if cost >= bound:
                    continue
                if row >= 0:
                    child = node.state[perms[row]]
                else:
                    child = node.state.copy()
                    g.apply(child, seq)
                key = child.tobytes()
                if key not in children or children[key][0].cost > cost:
                    # the moves are only written out for the children kept
                    children[key] = (_Node(child, [], cost, node.paired + gain), node, kept, tail)
        ranked = sorted(children.values(), key=lambda c: c[0].cost / settings.scale - c[0].paired)
        nodes = []
        for c, parent, kept, tail in ranked[: settings.width]:
            if c.cost + settings.floor * (full - c.paired) < bound:
                c.moves = parent.moves[:kept] + tail
                nodes.append(c)
    return sorted(best.values(), key=lambda item: item[0])
