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

__all__ = ["MAX_N", "Insertion", "best_block_turn", "best_half_insertion", "best_insertion"]

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
    memo: dict[tuple[Face, int], tuple[IntArray, IntArray]] = {}
    for axis in _half_axes(target):
        out = _per_layer(state, n, target, axis, colour, memo=memo)
        mirrored = np.zeros_like(out)
        mirrored[2:n] = out[n - 1 : 1 : -1]  # the target line each layer's piece lands on
        for d in (1, 2, -1):
            feeder = _feeder_of(n, axis, d, target)
            if feeder in done:
                continue
            own = np.zeros_like(out)
            if targets is not None:
                back = _per_layer(state, n, target, axis, targets[feeder], memo=memo)
                own[2:n] = back[n - 1 : 1 : -1]
            for setup in (0, 1, 2, -1):
                gains = _per_layer(state, n, feeder, axis, colour, setup, memo) - mirrored
                if targets is not None:
                    gains += own - _per_layer(state, n, feeder, axis, targets[feeder], setup, memo)
                for lo, hi, gain in _half_ranges(gains, n, half):
                    # OBTM of [setup] m T2 m': m takes the outer layer along at either end
                    cost = (setup != 0) + (2 if lo == 2 or hi == n - 1 else 4) + 1
                    if best is None or gain * best[1] > best[0] * cost:
                        best = (gain, cost, axis, d, setup, lo, hi)
    if best is None:
        return None
    gain, cost, axis, d, setup, lo, hi = best
    if lo == 2:
        m = Move.block(axis, 1, hi, d)
    elif hi == n - 1:
        m = Move.block(Face((axis + 3) % 6), 1, n + 1 - lo, -d if d != 2 else 2)
    else:
        m = Move.block(axis, lo, hi, d)
    feeder = _feeder_of(n, axis, d, target)
    moves = ([Move.outer(feeder, setup)] if setup else []) + [m, Move.outer(target, 2), m.inverse()]
    return Insertion(gain, cost, tuple(moves))


@cache
def _half_axes(target: Face) -> tuple[Face, ...]:
    """The axes of the half insertions of ``target``: U, R or F, perpendicular to it."""
    return tuple(f for f in (Face.U, Face.R, Face.F) if f in _perpendicular(target))


@cache
def _feeder_of(n: int, axis: Face, d: int, target: Face) -> Face:
    """The face whose line a turn ``d`` of the layers of ``axis`` brings onto ``target``."""
    return _feeder(n, Move.block(axis, 2, 2, d), target)


def _half_ranges(gains: IntArray, n: int, half: int) -> Iterator[tuple[int, int, int]]:
    """The contiguous range of largest positive gain in each half (layers 2..half and
    N+1-half..N-1; the middle layer of odd N in neither)."""
    values = gains.tolist()  # Python ints: the loop reads each once
    for a, b in ((2, half), (n + 1 - half, n - 1)):
        best_sum, best_range = 0, None
        run, start = 0, a
        for k in range(a, b + 1):
            if run <= 0:
                run, start = 0, k
            run += values[k]
            if run > best_sum:
                best_sum, best_range = run, (start, k)
        if best_range is not None:
            yield best_range[0], best_range[1], best_sum
