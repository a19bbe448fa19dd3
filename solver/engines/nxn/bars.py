"""6x6 and 7x7: the obliques paired into bars, so that the outer centres become a 5x5's.

Once the inner ring (the centre cells at coordinates 2..N-3 of every face) is solved, call a
*bar* the cells ``(1, 2..N-3)`` of a face and their three turns about the face's centre: 24
bars of N - 4 cells (6x6: the two obliques of a row; 7x7: an oblique, an outer t-centre and
an oblique). When every bar is one colour, the N cube's stickers at :func:`bar_coords` (6x6:
0, 1, 2, 4, 5; 7x7: 0, 1, 3, 5, 6) read as a 5x5 whose fixed centres are the inner ring,
whose x-centres are the outer x-centres and whose t-centres are the bars, under the moves that
never turn depths 2..N-3 (outer turns and ``2Rw``): depth 1 moves whole bars, a face turn
turns bars into bars. The 5x5's staged search (:mod:`.staged5`) then solves them all at once,
as it solves a 5x5's centres (~31 moves for 72 pieces on a 6x6, 96 on a 7x7).

The bars are paired by macros ``s P s'`` (:func:`macro_table`): ``s`` a block of layers that
turns part of the inner ring's rows away (an inner slice or a wide block reaching depth
2..N-3), ``P`` one to three outer turns, depth-1 slices and two-layer wide turns that leave
every face whose inner ring ``s`` moved away with a zero net turn (so ``s'`` puts the inner
ring back: depths 0 and 1 hold none of it but a face's own turns). Each macro is stored as the
permutation it makes of the bar cells (the obliques and, 7x7, outer t-centres: orbits of their
own), checked to keep every face's inner ring, and deduplicated to its cheapest spelling. A
beam search (:func:`pair_bars`) ranks partial pairings by cells paired minus OBTM times
:data:`WEIGHT`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from solver.cube.geometry import Face
from solver.cube.notation import Metric, Move, count
from solver.engines.nxn import _bars
from solver.engines.nxn.sim import IntArray, geometry
from solver.engines.nxn.tables import Progress, Report, Table, load_table
from solver.errors import NoSolutionError, UnsupportedError

__all__ = [
    "BarMacros",
    "bar_cells",
    "bar_coords",
    "bar_pairings",
    "load",
    "macro_table",
    "pair_bars",
    "paired",
]

log = logging.getLogger(__name__)

Colours = npt.NDArray[np.uint8]
SIZES = (6, 7)


def _check(n: int) -> None:
    if n not in SIZES:
        raise UnsupportedError(f"oblique bars are for N in {SIZES}, not {n}")


def bar_coords(n: int) -> tuple[int, ...]:
    """The coordinates (per face axis) of the stickers that read as a 5x5 once the bars are
    paired (one coordinate of the inner ring stands for all of them)."""
    _check(n)
    return (0, 1, n // 2 if n % 2 else 2, n - 2, n - 1)


@cache
def bar_cells(n: int) -> IntArray:
    """Flat sticker indices of every bar, shape (24, N - 4): per face (U R F D L B order) the
    top, right, bottom and left bar, each cell in order along the bar."""
    _check(n)
    inner = range(2, n - 2)
    bars = []
    for f in range(6):
        base = f * n * n
        bars.append([base + 1 * n + c for c in inner])
        bars.append([base + r * n + (n - 2) for r in inner])
        bars.append([base + (n - 2) * n + c for c in inner])
        bars.append([base + r * n + 1 for r in inner])
    return np.array(bars, dtype=np.int64)


@cache
def _inner_blocks(n: int) -> IntArray:
    """Flat sticker indices of each face's inner ring, shape (6, (N - 4)²)."""
    inner = np.arange(2, n - 2)
    one = (inner[:, None] * n + inner[None, :]).reshape(-1)
    out: IntArray = (np.arange(6)[:, None] * n * n + one[None, :]).astype(np.int64)
    return out


def _perm(n: int, moves: list[Move]) -> IntArray:
    labels = np.arange(6 * n * n, dtype=np.int64)
    geometry(n).apply(labels, moves)
    return labels


@dataclass(frozen=True)
class BarMacros:
    """The macros of one N: ``perm[k]`` gives, for each bar cell (in :func:`bar_cells` order,
    flattened), the bar cell whose piece lands there after macro ``k``; ``spelling[k]`` its
    (``s`` index, kind, ``P`` index): :meth:`moves`."""

    n: int
    perm: npt.NDArray[np.intp]
    cost: IntArray
    spelling: IntArray
    #: the base moves (:func:`_base_moves`) as bar permutations, and their OBTM
    setup_perm: npt.NDArray[np.intp]
    setup_cost: IntArray

    def moves(self, k: int) -> tuple[Move, ...]:
        """Macro ``k``: ``s P s'`` (kind 0) or ``s P s' P'`` (kind 1)."""
        i, kind, j = (int(v) for v in self.spelling[k])
        s, p = _slices(self.n)[i], _p_sequences(self.n)[0][j]
        tail = tuple(m.inverse() for m in reversed(p)) if kind else ()
        return (s, *p, s.inverse(), *tail)


def _base_moves(n: int) -> list[Move]:
    """Moves of ``P``: outer turns, depth-1 slices and two-layer wide turns (none turns an
    inner ring cell but by its own face's turn)."""
    out = []
    for face in Face:
        for lo, hi in ((1, 1), (2, 2), (1, 2)):
            out += [Move.block(face, lo, hi, q) for q in (1, 2, -1)]
    return out


def _slices(n: int) -> list[Move]:
    """Moves ``s``: every block of layers with an inner-ring depth (2..N-3) and not the whole
    cube, one spelling per layer set (from the face whose side it is nearer)."""
    out = []
    for face in Face:
        for lo in range(1, n - 1):
            for hi in range(max(lo, 3), n - 1):
                if lo > n - 2:
                    continue
                out += [Move.block(face, lo, hi, q) for q in (1, 2, -1)]
    return out


@cache
def _p_sequences(n: int) -> tuple[tuple[tuple[Move, ...], ...], IntArray, IntArray, IntArray]:
    """Every ``P`` (one base move, two, or ``X m X'``), its permutation of the stickers (new
    = old[perm]) and that of ``P'``, and its OBTM."""
    base = _base_moves(n)
    base_perm = np.stack([_perm(n, [m]) for m in base])
    seqs: list[tuple[Move, ...]] = [(m,) for m in base]
    perms = [base_perm[i] for i in range(len(base))]
    for i, a in enumerate(base):
        inv = base.index(a.inverse())
        for j, b in enumerate(base):
            if a.face == b.face or (a.face % 3 == b.face % 3 and a.face > b.face):
                continue
            seqs.append((a, b))
            perms.append(base_perm[i][base_perm[j]])
            seqs.append((a, b, a.inverse()))
            perms.append(base_perm[i][base_perm[j]][base_perm[inv]])
    cost = np.array([count(list(q), Metric.HTM, n) for q in seqs], dtype=np.int64)
    perm = np.stack(perms)
    inverse = np.empty_like(perm)
    np.put_along_axis(inverse, perm, np.arange(perm.shape[1])[None, :], axis=1)
    return tuple(seqs), perm, inverse, cost


def _candidates(
    n: int, s: Move
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """For one ``s``: the sticker permutations of ``s P s'`` and ``s P s' P'`` for every
    ``P`` of :func:`_p_sequences` (shape (2, len(P), 6·N²)), their OBTM, and whether each
    keeps every face's inner ring."""
    _, p_perm, p_inv, p_cost = _p_sequences(n)
    sp, si = _perm(n, [s]), _perm(n, [s.inverse()])
    s_cost = count([s, s.inverse()], Metric.HTM, n)
    plain = sp[p_perm[:, si]]  # s, P, s': new = old[sp][p][si]
    comm = np.take_along_axis(plain, p_inv, axis=1)  # then P'
    blocks = _inner_blocks(n)
    face_of = np.full(6 * n * n, -1, dtype=np.int64)
    for f in range(6):
        face_of[blocks[f]] = f
    inner = blocks.reshape(-1)
    ok = np.all(face_of[plain[:, inner]] == face_of[inner], axis=1)
    perms = np.stack([plain, comm])
    costs = np.stack([s_cost + p_cost, s_cost + 2 * p_cost])
    return perms, costs, np.stack([ok, ok])


def _build(n: int, report: Report) -> Table:
    """The macro table's cached form: over every (``s``, kind, ``P``), 1 if it is the
    cheapest spelling of its bar permutation (first found among equals), else 0."""
    slices = _slices(n)
    seqs = _p_sequences(n)[0]
    cells = bar_cells(n).reshape(-1)
    where = np.full(6 * n * n, -1, dtype=np.int64)
    where[cells] = np.arange(cells.size)
    identity = np.arange(cells.size, dtype=np.int16)
    best: dict[bytes, tuple[int, int]] = {}  # bar permutation -> (cost, flat index)
    for i, s in enumerate(slices):
        perms, costs, ok = _candidates(n, s)
        for kind in range(2):
            bars = where[perms[kind][:, cells]].astype(np.int16)
            for k in np.flatnonzero(ok[kind]):
                if np.array_equal(bars[k], identity):
                    continue
                key = bars[k].tobytes()
                cost = int(costs[kind, k])
                hit = best.get(key)
                if hit is None or cost < hit[0]:
                    best[key] = (cost, (i * 2 + kind) * len(seqs) + int(k))
        report((i + 1) * 2 * len(seqs))
    table = np.zeros(len(slices) * 2 * len(seqs), dtype=np.int8)
    table[[flat for _, flat in best.values()]] = 1
    return table


def macro_table(
    n: int, cache_dir: str | None = None, progress: Progress | None = None
) -> BarMacros:
    """Every macro ``s P s'`` (and ``s P s' P'``) of an N cube (``s`` of :func:`_slices`,
    ``P`` of :func:`_p_sequences`) that keeps every face's inner ring, one per bar
    permutation, the cheapest (cheapest first). Which ones is a cached table (built once, ~20
    s); the permutations are rebuilt from it at load (~1 s)."""
    _check(n)
    key = (n, cache_dir)
    hit = _TABLES.get(key)
    if hit is not None:
        return hit
    slices = _slices(n)
    seqs, base = _p_sequences(n)[0], _base_moves(n)
    size = len(slices) * 2 * len(seqs)  # (s, kind, P)
    kept = load_table(
        f"bars{n}", size, lambda report: _build(n, report), cache_dir, progress
    ).reshape(len(slices), 2, len(seqs))
    cells = bar_cells(n).reshape(-1)
    where = np.full(6 * n * n, -1, dtype=np.int64)
    where[cells] = np.arange(cells.size)
    perm_parts, cost_parts, spell_parts = [], [], []
    for i, s in enumerate(slices):
        if not kept[i].any():
            continue
        perms, costs, _ = _candidates(n, s)
        for kind in range(2):
            ks = np.flatnonzero(kept[i, kind])
            perm_parts.append(where[perms[kind][ks][:, cells]].astype(np.int32))
            cost_parts.append(costs[kind, ks])
            spell_parts.append(np.stack([np.full_like(ks, i), np.full_like(ks, kind), ks], axis=1))
    cost = np.concatenate(cost_parts)
    order = np.argsort(cost, kind="stable")
    perm = np.concatenate(perm_parts)  # int32 until sorted: the peak memory of the load
    perm_parts.clear()
    table = BarMacros(
        n,
        perm[order].astype(np.intp),
        cost[order],
        np.concatenate(spell_parts)[order].astype(np.int64),
        np.stack([where[_perm(n, [m])[cells]] for m in base]).astype(np.intp),
        np.array([count([m], Metric.HTM, n) for m in base], dtype=np.int64),
    )
    log.debug("bar macros for %dx%d: %d", n, n, len(table.cost))
    _TABLES[key] = table
    return table


_TABLES: dict[tuple[int, str | None], BarMacros] = {}


def paired(colours: Colours, n: int) -> int:
    """How many bar cells are paired: per bar, the cells of its most frequent colour less
    one (24·(N - 5) when all are)."""
    bars = colours.reshape(-1, n - 4)
    return int(_score(bars[None]).sum())


@cache
def _lut(length: int) -> npt.NDArray[np.uint8]:
    """Cells paired of a bar, by its colour code (:func:`_score`)."""
    out = np.zeros(6**length, dtype=np.uint8)
    for code in range(6**length):
        digits = [(code // 6**k) % 6 for k in range(length)]
        out[code] = length - len(set(digits)) if length <= 3 else 0
    return out


def _score(bars: npt.NDArray[np.uint8]) -> IntArray:
    """Per state (axis 0), cells paired (see :func:`paired`); ``bars`` (k, 24, N - 4) of
    colours 0..5 (a bar of 2 or 3 cells: the cells of its most frequent colour less one)."""
    out: IntArray = _bar_scores(bars).sum(axis=-1, dtype=np.int64)
    return out


def _bar_scores(bars: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """Cells paired per bar; ``bars`` (..., N - 4) of colours 0..5."""
    length = bars.shape[-1]
    code = bars[..., 0].astype(np.int64)
    for k in range(1, length):
        code *= 6
        code += bars[..., k]
    out: npt.NDArray[np.uint8] = np.take(_lut(length), code)
    return out


#: the macros are scored in groups by how many bars they mix, each row padded to its group's
#: most: of the 7x7's 75,000 macros that mix bars 22,000 mix 3, 12,000 4, 33,000 6, 9,000
#: 7-12: these groups score 400,000 bars a state, where (1-2, 3-5, 6-24) scored 670,000
#: (bar pairings of seeds 100-107: 0.25 -> 0.17 s of CPU, the same moves)
GROUPS = ((1, 3), (4, 4), (5, 6), (7, 8), (9, 24))


@cache
def _effects(
    n: int, cache_dir: str | None
) -> tuple[tuple[npt.NDArray[np.intp], Colours, Colours, npt.NDArray[np.uint32]], ...]:
    """Which bars each macro of :func:`macro_table` mixes, to score it there only (a bar that
    gets cells of several bars is mixed; the bars those come from are split, as many; every
    other bar moves whole and keeps its score). In groups by how many it mixes (macros that
    mix none cannot pair more and are left out): (the macros, (m, T·(N-4)) cells that the
    mixed bars get, (m, T) bars split; both uint8; (m,) uint32 bit masks of the bars split),
    rows padded with bar 0 left as it is (it cancels)."""
    table = macro_table(n, cache_dir)
    length = n - 4
    source = (table.perm // length).reshape(len(table.perm), 24, length)
    mixed = (source != source[..., :1]).any(axis=-1)  # (M, 24)
    count_ = mixed.sum(axis=-1)
    groups = []
    for lo, hi in GROUPS:
        rows = np.flatnonzero((count_ >= lo) & (count_ <= hi))
        if rows.size == 0:
            continue
        width = int(count_[rows].max())
        valid = np.arange(width)[None, :] < count_[rows][:, None]  # (m, width)
        # the mixed bars first, in bar order; the padding is bar 0 (with its own cells)
        which = np.argsort(~mixed[rows], axis=1, kind="stable")[:, :width]
        cells = table.perm[rows].reshape(rows.size, 24, length)[
            np.arange(rows.size)[:, None], which
        ]
        cells[~valid] = np.arange(length)
        is_source = np.zeros((rows.size, 24), dtype=bool)
        got = np.where(valid[..., None], cells // length, -1).reshape(rows.size, -1)
        hit = got >= 0
        is_source[np.nonzero(hit)[0], got[hit]] = True
        split = np.argsort(~is_source, axis=1, kind="stable")[:, :width]
        split[~valid] = 0
        # uint8 (every index < 72): the kernel streams these, an eighth of int64's bytes
        flat_cells = np.ascontiguousarray(cells.reshape(rows.size, -1), dtype=np.uint8)
        sources = (is_source.astype(np.uint32) << np.arange(24, dtype=np.uint32)).sum(
            axis=1, dtype=np.uint32
        )
        groups.append((rows, flat_cells, np.ascontiguousarray(split, dtype=np.uint8), sources))
    return tuple(groups)


def _unpaired(colours: Colours, n: int) -> int:
    """The bit mask (bit ``b`` for bar ``b``) of the bars of ``colours`` not one colour."""
    bars = colours.reshape(24, n - 4)
    mixed = (bars != bars[:, :1]).any(axis=1)
    return int((mixed.astype(np.int64) << np.arange(24, dtype=np.int64)).sum())


def _mixing(n: int, cache_dir: str | None) -> IntArray:
    """The macros that mix bars, in :func:`_effects`' group order (what
    :func:`_mixing_scores` scores)."""
    hit = _MIXING.get((n, cache_dir))
    if hit is None:
        hit = np.concatenate([group[0] for group in _effects(n, cache_dir)]).astype(np.int64)
        _MIXING[(n, cache_dir)] = hit
    return hit


_MIXING: dict[tuple[int, str | None], IntArray] = {}


def _mixing_scores(colours: Colours, n: int, cache_dir: str | None) -> tuple[IntArray, int]:
    """Per macro of :func:`_mixing` (the others cannot pair more), the cells paired after it
    or the state's own count, whichever is more (the beam wants the macros that pair more),
    and that count: scored on the bars each mixes (:func:`_effects`) by the C kernel
    (``_bars.scores``), which skips the macros that split one-colour bars only (they cannot
    pair more either)."""
    length = n - 4
    own = np.zeros(256, dtype=np.int64)  # padded: the kernel's uint8 indices stay inside
    own[:24] = _bar_scores(colours.reshape(24, length))
    now = int(own.sum())
    flat = np.zeros(256, dtype=np.uint8)
    flat[: colours.size] = colours
    lut = _lut(length)
    unpaired = _unpaired(colours, n)
    out = np.empty(len(_mixing(n, cache_dir)), dtype=np.int64)
    at = 0
    for rows, cells, split, sources in _effects(n, cache_dir):
        got = out[at : at + len(rows)]
        _bars.scores(
            flat, cells, split, sources, own, lut, split.shape[1], length, now, unpaired, got
        )
        at += len(rows)
    return out, now


def _macro_scores(colours: Colours, n: int, cache_dir: str | None) -> IntArray:
    """Per macro of :func:`macro_table`, the cells paired after it or the state's own count,
    whichever is more (:func:`_mixing_scores`; the state's count for the macros that mix no
    bar); :func:`_macro_scores_numpy` is the same in numpy, 5-10x slower."""
    got, now = _mixing_scores(colours, n, cache_dir)
    out = np.full(len(macro_table(n, cache_dir).cost), now, dtype=np.int64)
    out[_mixing(n, cache_dir)] = got
    return out


def _macro_scores_numpy(colours: Colours, n: int, cache_dir: str | None) -> IntArray:
    """:func:`_macro_scores` in numpy (what the kernel is tested against), every macro
    scored."""
    table = macro_table(n, cache_dir)
    length = n - 4
    own = _bar_scores(colours.reshape(24, length)).astype(np.int64)
    now = int(own.sum())
    out = np.full(len(table.cost), now, dtype=np.int64)
    for rows, cells, split, _ in _effects(n, cache_dir):
        got = _bar_scores(colours[cells].reshape(len(rows), -1, length))
        out[rows] = now + got.sum(axis=-1, dtype=np.int64) - own[split].sum(axis=-1)
    return np.maximum(out, now)


#: per N, beam width and macros each kept state is expanded by (7x7: CPU time, seeds 0-5 at
#: load 4: width 5 x 3 68.3 OBTM / 3.3 s, 4 x 4 70.7 / 2.1 s, 2 x 4 74.0 / 1.0 s, before each
#: macro was scored on the bars it mixes only, 4-5x less CPU. Then, 7x7 seeds 100-107 with
#: the engine's other settings: 4 x 4 bars 70.0, 8 x 8 64.9, 16 x 8 62.3, 32 x 8 60.6 OBTM,
#: whole solves 233.5, 230.1, 226.8 (4.1 s CPU at load 9-11), 225.3 (5.7 s); 6x6 16 x 8 no
#: better than 8 x 8 on 6 states. With the C scoring, the 7x7's bars after the first inner
#: ring of seeds 100-107: 16 x 8 62.25, 16 x 16 64.6, 16 x 4 62.1; whole solves with 2
#: inner rings, 24 x 8 no better than 16 x 8 on 6 states). 7x7 32 wide (was 16) once the
#: inner rings' bars were paired side by side on two threads (:func:`.ring.bar_centres`):
#: whole solves of seeds 100-129 220.27 -> 218.13 OBTM (6 edge tries 218.30; 48 wide 218.20,
#: 64 wide 218.03 with 6 tries: the bars shorter by 1-1.3 more, the edges longer; wall
#: median of seeds 100-119 at load 1-2 6.11 s against 6.30 and 6.49 s for 16 wide on one
#: thread, one run after the other)
WIDTH = {6: 8, 7: 32}
PER_NODE = {6: 8, 7: 8}
#: a move is worth this many paired cells in the beam's ranking (7x7 bars as above: 0.15
#: 65.0, 0.25 62.25, 0.35 62.0). 7x7 0.35 with the 32-wide beam, whole solves, mean OBTM
#: of seeds 100-129 / 130-159: 0.2 218.83 / -, 0.25 218.13 / 221.97, 0.3 216.87 / 221.07,
#: 0.35 217.77 / 218.63 (the best of the 60 states: -1.85 against 0.25)
WEIGHT = {6: 0.25, 7: 0.35}
MAX_STEPS = 40


@cache
def _merges(n: int) -> IntArray:
    """``[i, j]``: the OBTM saved when a macro ending with ``s_i'`` is followed by one
    starting with ``s_j`` (the same layers: the two turns merge into one or cancel)."""
    slices = _slices(n)
    out = np.zeros((len(slices), len(slices)), dtype=np.int64)
    for i, a in enumerate(slices):
        end = a.inverse()
        for j, b in enumerate(slices):
            if (b.face, b.lo, b.hi) != (a.face, a.lo, a.hi):
                continue
            q = (end.quarter_turns + b.quarter_turns) % 4
            merged = count([b.with_turns(q)], Metric.HTM, n) if q else 0
            out[i, j] = count([end, b], Metric.HTM, n) - merged
    return out


def load(n: int, cache_dir: str | None = None, progress: Progress | None = None) -> None:
    """Everything :func:`bar_pairings` reads on first use (the macro table, the groups the
    kernel scores, the merges), so that threads pairing bars side by side only read it."""
    macro_table(n, cache_dir, progress)
    _mixing(n, cache_dir)
    _merges(n)
    _lut(n - 4)


def pair_bars(
    state: Colours, n: int, cache_dir: str | None = None, progress: Progress | None = None
) -> list[Move]:
    """Moves that pair every bar of ``state`` (flat colours of an N cube whose inner ring is
    solved; turned in place) and keep the inner ring."""
    moves = bar_pairings(state, n, 1, cache_dir, progress)[0]
    geometry(n).apply(state, moves)
    return moves


def bar_pairings(
    state: Colours,
    n: int,
    keep: int = 1,
    cache_dir: str | None = None,
    progress: Progress | None = None,
) -> list[list[Move]]:
    """The ``keep`` shortest move sequences the beam finds that pair every bar of ``state``
    (as :func:`pair_bars`; ``state`` is not changed), shortest first. Raises
    :class:`~solver.errors.NoSolutionError` when it finds none."""
    table = macro_table(n, cache_dir, progress)
    mixing = _mixing(n, cache_dir)
    cells = bar_cells(n).reshape(-1)
    goal = 24 * (n - 5)
    start = state[cells]
    # (rank, cost, colours of the bar cells, macro indices)
    beam: list[tuple[float, int, Colours, list[int]]] = [(0.0, 0, start, [])]
    done: list[tuple[int, list[int]]] = []  # shortest first
    if paired(start, n) == goal:
        return [[]]
    stalled = False
    for _ in range(MAX_STEPS):
        nxt: list[tuple[float, int, Colours, list[int]]] = []
        for _, cost, colours, path in beam:
            got, now = _mixing_scores(colours, n, cache_dir)
            better = np.flatnonzero(got > now)  # every macro that pairs more, by index
            order = np.argsort(mixing[better], kind="stable")
            ks, score = mixing[better[order]], got[better[order]]
            costs = table.cost[ks]
            if path and path[-1] >= 0 and table.spelling[path[-1], 1] == 0:  # ends with s'
                costs = costs - _merges(n)[table.spelling[path[-1], 0]][table.spelling[ks, 0]]
            rank = score - WEIGHT[n] * (cost + costs)
            for i in np.argsort(-rank, kind="stable")[: PER_NODE[n]]:
                k = ks[i]
                total = cost + int(costs[i])
                if len(done) == keep and total >= done[-1][0]:
                    continue
                if score[i] == goal:
                    done.append((total, [*path, int(k)]))
                    done.sort(key=lambda item: item[0])
                    del done[keep:]
                    continue
                nxt.append((float(rank[i]), total, colours[table.perm[k]], [*path, int(k)]))
        if not nxt:
            if stalled or done:
                break
            # no macro pairs more: every setup turn of the best state (whole bars move),
            # then the macros again
            stalled = True
            _, cost, colours, path = beam[0]
            beam = [
                (0.0, cost + int(table.setup_cost[j]), colours[perm], [*path, -1 - j])
                for j, perm in enumerate(table.setup_perm)
            ]
            continue
        stalled = False
        nxt.sort(key=lambda item: -item[0])
        beam = []
        seen: set[bytes] = set()
        for item in nxt:
            key = item[2].tobytes()
            if key in seen:
                continue
            seen.add(key)
            beam.append(item)
            if len(beam) == WIDTH[n]:
                break
    if not done:
        log.debug("bars left: %s", [c.reshape(24, n - 4).tolist() for _, _, c, _ in beam[:1]])
        raise NoSolutionError(f"the {n}x{n}x{n} bars were not paired in {MAX_STEPS} macros")
    setups = _base_moves(n)
    return [
        [m for k in path for m in (table.moves(k) if k >= 0 else (setups[-1 - k],))]
        for _, path in done
    ]
