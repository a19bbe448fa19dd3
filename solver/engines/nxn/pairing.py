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
parity fixes) and the shortest pairing + finish is kept; with ``Beam.finish_stalled`` off (the
6x6 and 7x7 passes) only the complete ones, and those that stalled only if none completes.
Per N the macro set is cut to what pays (:func:`beam_for`): 5x5 wide slices only, no edge
flips on odd N.

The macros, built once per N, and the scoring of a state's edges are in
:mod:`solver.engines.nxn.freeslice` (the beam's scoring of every macro in C,
``_pairing.gains``). Used for N up to :data:`MAX_N` (the candidate table grows as N³).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from solver.cube.geometry import Face
from solver.cube.notation import Metric, Move, count
from solver.engines.nxn import _pairing
from solver.engines.nxn.freeslice import (
    Blocks,
    Counted,
    _edge_cells,
    _edge_score,
    _effects,
    _firsts,
    _kernel_args,
    _macro_perms,
    _macros,
    _score,
    _wing_codes,
)
from solver.engines.nxn.sim import geometry

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
    #: with the macros ``s A C' B A' C s'`` (``C`` a ring face beside ``A``: the edge comes
    #: in the other way round, see :func:`~solver.engines.nxn.freeslice._twists`)
    twists: bool = False
    #: also finish the pairings that stall short of every wing (no macro gains as they stand)
    #: by the caller's 3-cycles; False: only when the beam completes none (a 6x6's or 7x7's
    #: wide beams complete pairings that are far shorter: the stalled ones' 3-cycles never won,
    #: and cost a fifth of the edge time)
    finish_stalled: bool = True

    @property
    def macro_set(self) -> tuple[bool, bool, Blocks | None, bool, bool]:
        """The arguments after ``n`` of :func:`~solver.engines.nxn.freeslice._macros` (and of
        the functions cached with it) that give this beam's macros."""
        return (self.wide_only, self.flips, self.blocks, self.both_ends, self.twists)


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
    moves: list[Move], seq: tuple[Move, ...] | list[Move], n: int, seq_cost: int | None = None
) -> tuple[int, int, list[Move]]:
    """:func:`_join` without copying ``moves``: (OBTM added, how many of ``moves`` stay, the
    moves after them). Turns merge at the junction only (no two turns of one block follow
    each other inside ``seq``); ``seq_cost``: the OBTM of ``seq`` if known."""
    kept = len(moves)
    tail: list[Move] = []
    added = 0
    i = 0
    while i < len(seq):
        m = seq[i]
        last = tail[-1] if tail else moves[kept - 1] if kept else None
        if last is None or (last.face, last.lo, last.hi) != (m.face, m.lo, m.hi):
            break
        if tail:
            tail.pop()
        else:
            kept -= 1
        added -= _move_cost(last, n)
        q = (last.quarter_turns + m.quarter_turns) % 4
        if q:
            tail.append(Move.block(m.face, m.lo, m.hi, (0, 1, 2, -1)[q]))
            added += _move_cost(tail[-1], n)
        i += 1
    if seq_cost is None:
        added += sum(_move_cost(m, n) for m in seq[i:])
    else:
        added += seq_cost - sum(_move_cost(m, n) for m in seq[:i])
    tail.extend(seq[i:])
    return added, kept, tail


@cache
def _savings(last: Move | None, firsts: tuple[Move, ...], n: int) -> npt.NDArray[np.float64]:
    """OBTM saved when each first move follows ``last`` (merged, or cancelled away); cached,
    not to be written to."""
    out = np.zeros(len(firsts))
    if last is None:
        return out
    for i, m in enumerate(firsts):
        if (m.face, m.lo, m.hi) == (last.face, last.lo, last.hi):
            one = _move_cost(m, n)
            out[i] = 2 * one if (m.quarter_turns + last.quarter_turns) % 4 == 0 else one
    return out


#: a way on from a beam node: (moves, wings it gains, its :func:`_macro_perms` row or -1)
_Option = tuple[list[Move], int, int]


def _options(node: _Node, n: int, beam: Beam, setups: bool) -> list[_Option]:
    """The ``per_node`` macros that rank best after ``node`` (wings gained minus their cost
    after cancellation / ``scale``), each with the wings it gains; when none gains (and
    ``setups``), the best with an edge flip (if the set had none) or after one outer turn."""
    _, seqs, costs = _macros(n, *beam.macro_set)
    last = node.moves[-1] if node.moves else None
    gains = _gains(node.state, n, beam)
    net = _net_costs(last, n, *beam.macro_set)
    value = np.where(gains > 0, gains - net / beam.scale, -np.inf)
    top = _top(value, beam.per_node)
    if top or not setups:
        return [(list(seqs[k]), int(gains[k]), k) for k in top]
    g = geometry(n)
    found: list[tuple[float, list[Move], int]] = []
    if not beam.flips:  # the macros with edge flips, left out so far
        full = dataclasses.replace(beam, flips=True)
        _, all_seqs, all_costs = _macros(n, *full.macro_set)
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


@cache
def _net_costs(
    last: Move | None,
    n: int,
    wide_only: bool,
    flips: bool,
    blocks: Blocks | None,
    both_ends: bool,
    twists: bool,
) -> npt.NDArray[np.float64]:
    """Each macro's OBTM after ``last`` (less what merges into it); cached, not to be written
    to."""
    _, _, costs = _macros(n, wide_only, flips, blocks, both_ends, twists)
    first_of, firsts = _firsts(n, wide_only, flips, blocks, both_ends, twists)
    out: npt.NDArray[np.float64] = costs - _savings(last, firsts, n)[first_of]
    return out


def _gains(state: Colours, n: int, beam: Beam) -> npt.NDArray[np.int64]:
    """Wings each macro pairs (or unpairs: negative), scored on the edges it mixes (in C,
    ``_pairing.gains``; :func:`_gains_numpy` is the same in numpy)."""
    rows, index, split, edges, counted, refs = _kernel_args(n, *beam.macro_set, beam.counted)
    out = np.empty(index.shape[0], dtype=np.int64)
    _pairing.gains(
        _wing_codes(state, n), rows, index, split, edges, counted, refs, index.shape[1], n - 2, out
    )
    return out


def _gains_numpy(state: Colours, n: int, beam: Beam) -> npt.NDArray[np.int64]:
    """:func:`_gains` in numpy (the reference of the C kernel's tests)."""
    after, split, _ = _effects(n, *beam.macro_set)
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
    stalled: list[_Node] = []  # not finished (``finish_stalled`` False) unless none completes

    def offer(node: _Node) -> None:  # finish ``node`` and keep it if it is among the best
        nonlocal bound
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

    nodes = [_Node(state.copy(), [], 0, paired_count(state, n, settings.counted))]
    while nodes:
        children: dict[bytes, tuple[_Node, _Node, int, list[Move]]] = {}
        setups = settings.setup_nodes
        for node in nodes:
            options = [] if node.paired == full else _options(node, n, settings, False)
            if not options:  # nothing gains any more as it stands: finish this one
                if node.paired == full or settings.finish_stalled:
                    offer(node)
                else:
                    stalled.append(node)
                if node.paired == full or setups == 0:
                    continue
                setups -= 1  # and go on after an outer turn
                options = _options(node, n, settings, True)
            perms = _macro_perms(n, *settings.macro_set)
            macro_costs = _macros(n, *settings.macro_set)[2]
            for seq, gain, row in options:
                added, kept, tail = _join_tail(
                    node.moves, seq, n, int(macro_costs[row]) if row >= 0 else None
                )
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
    if not best:
        for node in stalled:
            offer(node)
    return sorted(best.values(), key=lambda item: item[0])
