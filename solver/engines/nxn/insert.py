"""Cheap centre moves for the first faces: plain slice turns and insertions ``m T m'``.

While few faces are finished a commutator (8 moves) is more than needed:

* with no face finished, one block turn ``m`` of layers perpendicular to the target brings a
  whole line of a neighbour onto it;
* an insertion ``m T^q m'`` brings a line of a neighbour onto the target and sends back the
  target line that the turn ``T^q`` moved into the slice; every other face of the ring of
  ``m`` gets its line back, so finished faces stay finished as long as the face that receives
  the target line is not one of them.

Each candidate (with an optional setup turn of the feeding face) is tried on a copy of the
state; it is kept only if no finished face changes, and the one bringing most pieces per move
(OBTM) wins; this is done for N up to :data:`MAX_N` (the number of candidates grows as N²).
:func:`best_block_turn` finds block turns of several layers for every N without trying them:
a turn carries the feeding face's layers onto the target's, so gains are counted per layer.
:func:`best_half_insertion` does the same for ``m T2 m'`` at every stage and every N.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from solver.cube.geometry import FACE_FRAMES, Face
from solver.cube.notation import Metric, Move, count
from solver.engines.nxn.sim import IntArray, geometry

__all__ = [
    "MAX_N",
    "Insertion",
    "best_block_turn",
    "best_half_insertion",
    "best_insertion",
    "half_moves",
]

MAX_N = 8
Colours = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class Insertion:
    gain: int
    cost: int
    moves: tuple[Move, ...]


def _perpendicular(target: Face) -> list[Face]:
    nt = np.array(FACE_FRAMES[target][0])
    return [f for f in Face if int(np.array(FACE_FRAMES[f][0]) @ nt) == 0]


def _blocks(n: int, axis: Face) -> Iterator[tuple[int, int]]:
    """Layer ranges; for odd N never the middle layer (its centre piece fixes the colours)."""
    mid = (n + 1) // 2 if n % 2 else n + 1
    for k in range(2, n):
        if k != mid:
            yield (k, k)  # one inner layer
        if k < mid:
            yield (1, k)  # wide, the outer layer of ``axis`` included


def _candidates(n: int, target: Face, free_first: bool) -> Iterator[list[Move]]:
    for axis in _perpendicular(target):
        for lo, hi in _blocks(n, axis):
            for d in (1, -1):
                m = Move.block(axis, lo, hi, d)
                if free_first:
                    yield [m]
                for q in (1, 2, -1):
                    yield [m, Move.outer(target, q), m.inverse()]


def best_insertion(
    state: Colours,
    n: int,
    target: Face,
    colour: int,
    done: Sequence[Face],
    cells: dict[Face, IntArray],
) -> Insertion | None:
    """The candidate with most target pieces gained per move (None if none gains)."""
    g = geometry(n)
    base = int((state[cells[target]] == colour).sum())
    best: Insertion | None = None
    for core in _candidates(n, target, not done):
        feeder = _feeder(n, core[0], target)
        for setup in (0,) if feeder in done else (0, 1, 2, -1):
            moves = ([Move.outer(feeder, setup)] if setup else []) + core
            trial = state.copy()
            g.apply(trial, moves)
            gain = int((trial[cells[target]] == colour).sum()) - base
            if gain <= 0 or any(not np.array_equal(trial[cells[f]], state[cells[f]]) for f in done):
                continue
            cost = count(moves, Metric.HTM, n)
            if best is None or gain * best.cost > best.gain * cost:
                best = Insertion(gain, cost, tuple(moves))
    return best


@cache
def _feeder(n: int, m: Move, target: Face) -> Face:
    """The face whose line ``m`` turns onto ``target``."""
    g = geometry(n)
    _, hi = m.layers(n)
    layer_cells = g.layer_turn(m.face, hi, 1)[1]  # hi >= 2: an inner layer
    probe = layer_cells[layer_cells // (n * n) == target][:1]
    src = g.trace(probe, [(m.face, hi, -m.quarter_turns)])
    return Face(int(src[0]) // (n * n))


@cache
def _layers_of(n: int, face: Face, axis: Face) -> IntArray:
    """The layer of ``axis`` (1..N) of each centre cell of ``face`` (LTR order)."""
    g = geometry(n)
    idx = np.arange(1, n - 1)
    cells = (int(face) * n * n + idx[:, None] * n + idx[None, :]).reshape(-1)
    normal = np.array(FACE_FRAMES[axis][0])
    layers: IntArray = ((n + 1 - g.centre[cells] @ normal) // 2).astype(np.int64)
    return layers


@cache
def _turned_cells(n: int, face: Face, setup: int) -> IntArray:
    """The stickers whose colours a face's centre cells (LTR order) show after ``setup``
    quarter turns of that face: reading them spares turning a copy of the whole cube."""
    idx = np.arange(1, n - 1)
    cells = (int(face) * n * n + idx[:, None] * n + idx[None, :]).reshape(-1)
    lab = np.arange(6 * n * n, dtype=np.int64)
    if setup:
        geometry(n).apply_move(lab, Move.outer(face, setup))
    out: IntArray = lab[cells]
    return out


@cache
def _layer_lines(n: int, face: Face, axis: Face, setup: int) -> tuple[int, IntArray]:
    """How a face's rows or columns (LTR) fall into the layers of ``axis`` after ``setup``
    quarter turns of the face: (0 for rows, 1 for columns; the layer of each row or
    column). A face's layers of a perpendicular axis are its rows or its columns."""
    size = n - 2
    turned = _turned_cells(n, face, setup) - int(face) * n * n
    where = ((turned // n) - 1) * size + (turned % n) - 1  # the cell each place shows
    layers = np.empty(size * size, dtype=np.int64)
    layers[where] = _layers_of(n, face, axis)
    grid = layers.reshape(size, size)
    if (grid == grid[:, :1]).all():
        return 0, grid[:, 0].copy()
    if not (grid == grid[:1, :]).all():  # pragma: no cover - geometry: a layer is a row or column
        raise AssertionError(f"the layers of {axis.name} on {face.name} are not lines")
    return 1, grid[0].copy()


def _per_layer(
    state: Colours,
    n: int,
    face: Face,
    axis: Face,
    colour: int,
    setup: int = 0,
    memo: dict[tuple[Face, int], tuple[IntArray, IntArray]] | None = None,
) -> IntArray:
    """Pieces of ``colour`` per layer of ``axis`` on ``face`` (after ``setup`` turns of it),
    from the face's pieces of that colour per row and per column (kept in ``memo``)."""
    sums = None if memo is None else memo.get((face, colour))
    if sums is None:
        size = n - 2
        idx = np.arange(1, n - 1)
        cells = int(face) * n * n + idx[:, None] * n + idx[None, :]
        hits = (state[cells] == colour).reshape(size, size)
        sums = (hits.sum(axis=1, dtype=np.int64), hits.sum(axis=0, dtype=np.int64))
        if memo is not None:
            memo[(face, colour)] = sums
    side, layers = _layer_lines(n, face, axis, setup)
    out = np.zeros(n + 1, dtype=np.int64)
    out[layers] = sums[side]
    return out


def best_block_turn(state: Colours, n: int, target: Face, colour: int) -> Insertion | None:
    """First face only (nothing finished yet): the one block turn of contiguous inner layers,
    after an optional setup turn of the face it brings in, that gains most target pieces per
    move. Gains are counted per layer (a turn carries the feeding face's layer onto the
    target's), so every size is cheap. The middle layer of odd N is never turned."""
    mid = (n + 1) // 2 if n % 2 else 0
    best: Insertion | None = None
    memo: dict[tuple[Face, int], tuple[IntArray, IntArray]] = {}
    for axis in (f for f in (Face.U, Face.R, Face.F) if f in _perpendicular(target)):
        out = _per_layer(state, n, target, axis, colour, memo=memo)
        for d in (1, 2, -1):
            m = Move.block(axis, 2, 2, d)
            feeder = _feeder(n, m, target)
            for setup in (0, 1, 2, -1):
                gains = _per_layer(state, n, feeder, axis, colour, setup, memo) - out
                for lo, hi, gain in _best_ranges(gains, n, mid):
                    block = Move.block(axis, 1 if lo == 2 else lo, hi, d)
                    if hi == n - 1 and lo > 2:
                        block = Move.block(Face((axis + 3) % 6), 1, n + 1 - lo, -d if d != 2 else 2)
                    moves = ([Move.outer(feeder, setup)] if setup else []) + [block]
                    cost = count(moves, Metric.HTM, n)
                    if best is None or gain * best.cost > best.gain * cost:
                        best = Insertion(gain, cost, tuple(moves))
    return best


def _best_ranges(gains: IntArray, n: int, mid: int) -> Iterator[tuple[int, int, int]]:
    """The contiguous layer range of largest positive total gain on each side of the middle
    layer (layers 2..N-1)."""
    segments = [(2, mid - 1), (mid + 1, n - 1)] if mid else [(2, n - 1)]
    for a, b in segments:
        best_sum, best_range = 0, None
        run, start = 0, a
        for k in range(a, b + 1):
            if run <= 0:
                run, start = 0, k
            run += int(gains[k])
            if run > best_sum:
                best_sum, best_range = run, (start, k)
        if best_range is not None:
            yield best_range[0], best_range[1], best_sum


def best_half_insertion(
    state: Colours,
    n: int,
    target: Face,
    colour: int,
    done: Sequence[Face],
    targets: Sequence[int] | None = None,
) -> Insertion | None:
    """The best ``m T2 m'`` (after an optional setup turn of the feeding face), for any N and
    any stage, gains counted per layer. ``m`` (layers ``A`` of an axis perpendicular to the
    target, all on one side of the middle) carries the feeder's lines onto the target, ``T2``
    moves them to the mirrored lines ``N+1-a``, and ``m'`` returns every face of the ring but
    the feeder and the target to what it was; the target's own lines ``A`` come back from
    where ``m`` had put them. Net: the target gets the feeder's lines ``A`` in its lines
    ``N+1-a`` and the feeder gets what was there; nothing else changes, so the feeder must not
    be a finished face. 3 to 5 moves in OBTM (+1 for the setup). With ``targets`` (the colour
    of every face) the feeder's own pieces count too: those it gives away and those it gets
    back from the target's lines."""
    half = n // 2
    best: tuple[int, int, Face, int, int, int, int] | None = None  # gain, cost, axis, d, ...
    counts: dict[int, IntArray] = {}  # per colour: every face's pieces per row and column

    def count_of(c: int) -> IntArray:
        if c not in counts:
            counts[c] = _face_counts(state, n, c)
        return counts[c]

    mine = count_of(colour)
    for axis in _half_axes(target):
        tables = _half_tables(n, target, axis)
        # per turn d and setup: the feeder's pieces per layer, less the target's in the
        # mirrored lines (what the insertion gives the target), layers 2..N-1
        gains = mine[tables.rows] - mine[tables.mirror]
        if targets is not None:
            for j, feeder in enumerate(tables.feeders):
                theirs = count_of(targets[feeder])
                gains[j] += theirs[tables.mirror] - theirs[tables.rows[j]]
        found = _half_runs(gains.reshape(12, n - 2), n, half)
        for row, lo, hi, gain in found:
            j, setup = row // 4, _SETUPS[row % 4]
            if tables.feeders[j] in done:
                continue
            # OBTM of [setup] m T2 m': m takes the outer layer along at either end
            cost = (setup != 0) + (2 if lo == 2 or hi == n - 1 else 4) + 1
            if best is None or gain * best[1] > best[0] * cost:
                best = (gain, cost, axis, _TURNS[j], setup, lo, hi)
    if best is None:
        return None
    gain, cost, axis, d, setup, lo, hi = best
    feeder = _feeder_of(n, axis, d, target)
    return Insertion(gain, cost, half_moves(n, axis, d, lo, hi, feeder, setup, target))


def half_moves(
    n: int, axis: Face, d: int, lo: int, hi: int, feeder: Face, setup: int, target: Face
) -> tuple[Move, ...]:
    """``[setup] m T2 m'``: the feeder's optional ``setup`` turn, then layers ``lo..hi`` of
    ``axis`` turned by ``d`` (as a wide turn from the nearer outer layer when the range
    touches layer 2 or N-1), the target's half turn, and ``m`` undone."""
    if lo == 2:
        m = Move.block(axis, 1, hi, d)
    elif hi == n - 1:
        m = Move.block(Face((axis + 3) % 6), 1, n + 1 - lo, -d if d != 2 else 2)
    else:
        m = Move.block(axis, lo, hi, d)
    setup_turn = [Move.outer(feeder, setup)] if setup else []
    return (*setup_turn, m, Move.outer(target, 2), m.inverse())


#: the turns of the half insertions' ``m`` and the setup turns of their feeders, in the
#: order they are tried (the first of equal ratios wins)
_TURNS = (1, 2, -1)
_SETUPS = (0, 1, 2, -1)


def _face_counts(state: Colours, n: int, colour: int) -> IntArray:
    """Every face's centre pieces of ``colour`` per row and per column: flat, face ``f``'s
    row ``i`` (LTR, 0-based over rows 1..N-2) at ``(2 f) (N-2) + i``, its column ``i`` at
    ``(2 f + 1) (N-2) + i``."""
    size = n - 2
    hits = (state[_all_interiors(n)] == colour).reshape(6, size, size)
    out: IntArray = np.stack(
        [hits.sum(axis=2, dtype=np.int64), hits.sum(axis=1, dtype=np.int64)], axis=1
    ).reshape(-1)
    return out


@cache
def _all_interiors(n: int) -> IntArray:
    idx = np.arange(1, n - 1)
    cells = idx[:, None] * n + idx[None, :]
    out: IntArray = (np.arange(6)[:, None, None] * n * n + cells[None]).reshape(-1)
    return out


@dataclass(frozen=True)
class _HalfTables:
    """Where a half insertion's per-layer counts are read in :func:`_face_counts`' output
    (layers 2..N-1 as columns 0..N-3): ``rows[j, q]`` the feeder's (turn ``_TURNS[j]`` of
    the axis, setup ``_SETUPS[q]``), ``mirror`` the target's in the mirrored lines N+1-a."""

    feeders: tuple[Face, ...]
    rows: IntArray
    mirror: IntArray


@cache
def _half_tables(n: int, target: Face, axis: Face) -> _HalfTables:
    size = n - 2
    feeders = tuple(_feeder_of(n, axis, d, target) for d in _TURNS)
    rows = np.empty((3, 4, size), dtype=np.int64)
    for j, feeder in enumerate(feeders):
        for q, setup in enumerate(_SETUPS):
            side, layers = _layer_lines(n, feeder, axis, setup)
            rows[j, q, layers - 2] = (2 * int(feeder) + side) * size + np.arange(size)
    side, layers = _layer_lines(n, target, axis, 0)
    mirror = np.empty(size, dtype=np.int64)
    mirror[n + 1 - layers - 2] = (2 * int(target) + side) * size + np.arange(size)
    return _HalfTables(feeders, rows, mirror)


def _half_runs(gains: IntArray, n: int, half: int) -> list[tuple[int, int, int, int]]:
    """The best run of each half of every row of ``gains`` (layers 2..N-1 as columns) at once:
    (row, lo, hi, gain) by row, then the low half first (layers 2..N/2 and N+1-N/2..N-1; the
    middle layer of odd N in neither), the run of largest positive gain, the first of equal
    ones (the tests keep the loop this replaced). Kadane's scan in prefix sums: the
    run ending at a layer starts after the last lowest prefix before it (a run that fell to
    0 or below restarts), and the first layer of the highest positive run ends it."""
    width = half - 1
    segments = [(2, gains[:, :width]), (n + 1 - half, gains[:, n - 1 - half : n - 2])]
    values = np.stack([v for _, v in segments], axis=1).reshape(-1, width)
    prefix = np.zeros((values.shape[0], width + 1), dtype=np.int64)
    np.cumsum(values, axis=1, out=prefix[:, 1:])
    lowest = np.minimum.accumulate(prefix[:, :-1], axis=1)
    runs = prefix[:, 1:] - lowest
    end = runs.argmax(axis=1)
    every = np.arange(values.shape[0])
    best = runs[every, end]
    keep = np.flatnonzero(best > 0)
    if keep.size == 0:
        return []
    at = (prefix[keep, :width] == lowest[keep, end[keep]][:, None]) & (
        np.arange(width)[None, :] <= end[keep][:, None]
    )
    start = width - 1 - at[:, ::-1].argmax(axis=1)
    out = []
    for k, s, e, g in zip(
        keep.tolist(), start.tolist(), end[keep].tolist(), best[keep].tolist(), strict=True
    ):
        a = segments[k % 2][0]
        out.append((k // 2, a + s, a + e, g))
    return out


@cache
def _half_axes(target: Face) -> tuple[Face, ...]:
    """The axes of the half insertions of ``target``: U, R or F, perpendicular to it."""
    return tuple(f for f in (Face.U, Face.R, Face.F) if f in _perpendicular(target))


@cache
def _feeder_of(n: int, axis: Face, d: int, target: Face) -> Face:
    """The face whose line a turn ``d`` of the layers of ``axis`` brings onto ``target``."""
    return _feeder(n, Move.block(axis, 2, 2, d), target)
