"""Short centre macros of small big cubes, scored all at once as permutations of the centres.

After the first face and the wing-parity stage every later centre move must keep the wing
parities (each inner layer turned an even number of quarter turns in all). Besides the
commutators of :mod:`solver.engines.nxn.centres` these short sequences do:

* **insertions** ``[S^s] m T^q m'`` (``m`` one inner layer or a wide block of an axis
  perpendicular to the target ``T``, ``S`` the face ``m`` brings onto ``T``, ``s`` a setup
  turn of it): 3 to 6 moves (OBTM) that exchange lines of ``S`` and ``T``;
* **slice half turns** ``m2`` (one inner layer or a wide block): lines swap between the
  opposite faces of the ring, 1 or 2 moves.

On an N ≤ :data:`MAX_N` cube each macro is stored once as the permutation it makes of the
``6·(N-2)²`` centre cells (:func:`macro_table`), so that the gain of every macro on a state
(centre pieces put on their face minus those taken off it) is one gather and one comparison
for all of them (:func:`best_macro`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from solver.cube.geometry import FACE_FRAMES, Face
from solver.cube.notation import Metric, Move, count
from solver.engines.nxn.sim import IntArray, geometry

__all__ = ["MAX_N", "Macro", "MacroTable", "best_macro", "centre_cells", "macro_table"]

#: largest N with a macro table (the table has O(N) macros of 6·(N-2)² cells)
MAX_N = 8

Colours = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class Macro:
    gain: int
    cost: int
    moves: tuple[Move, ...]


@dataclass(frozen=True)
class MacroTable:
    """Every macro of one N: ``perm[k]`` gives, for each centre cell (in
    :func:`centre_cells` order), the cell whose piece lands there."""

    perm: npt.NDArray[np.int32]
    cost: IntArray
    moves: tuple[tuple[Move, ...], ...]
    safe: npt.NDArray[np.bool_]  # each inner layer turned a multiple of a half turn


@cache
def centre_cells(n: int) -> IntArray:
    """Flat indices of every centre cell, face by face (rows and columns 1..N-2)."""
    idx = np.arange(1, n - 1)
    one = (idx[:, None] * n + idx[None, :]).reshape(-1)
    cells: IntArray = (np.arange(6)[:, None] * n * n + one[None, :]).reshape(-1).astype(np.int64)
    return cells


def _blocks(n: int) -> list[tuple[int, int]]:
    """Layer ranges of one axis face: each inner layer alone and each wide block 1..k (k ≤
    N-2; the wide blocks of the opposite face are listed from that face)."""
    return [(k, k) for k in range(2, n)] + [(1, k) for k in range(2, n - 1)]


def _turns(n: int) -> list[list[Move]]:
    """Plain block turns (quarter and half) that keep the middle layer of odd N still (its
    centre pieces decide the colours): one inner layer, or a wide block."""
    mid = (n + 1) // 2 if n % 2 else 0
    out = []
    for axis in Face:
        for lo, hi in _blocks(n):
            if lo <= mid <= hi or (axis > 2 and lo == hi):  # inner layers listed once
                continue
            out += [[Move.block(axis, lo, hi, d)] for d in (1, 2, -1)]
    return out


def _sequences(n: int) -> list[list[Move]]:
    out: list[list[Move]] = []
    for target in Face:
        nt = np.array(FACE_FRAMES[target][0])
        for axis in Face:
            if int(np.array(FACE_FRAMES[axis][0]) @ nt) != 0:
                continue
            for lo, hi in _blocks(n):
                for d in (1, 2, -1):
                    m = Move.block(axis, lo, hi, d)
                    feeder = _feeder(n, axis, d, target)
                    for q in (1, 2, -1):
                        core = [m, Move.outer(target, q), m.inverse()]
                        for s in (0, 1, 2, -1):
                            out.append(([Move.outer(feeder, s)] if s else []) + core)
    return out + _turns(n)


def _feeder(n: int, axis: Face, d: int, target: Face) -> Face:
    """The face whose centres a turn ``d`` of ``axis``'s layers carries onto ``target``."""
    geo = geometry(n)
    cells = centre_cells(n)
    on_target = cells[cells // (n * n) == target]
    layer = (n + 1 - geo.centre[on_target] @ np.array(FACE_FRAMES[axis][0])) // 2
    probe = on_target[layer == 2][:1]
    src = geo.trace(probe, [(axis, 2, -d)])
    return Face(int(src[0]) // (n * n))


@cache
def macro_table(n: int) -> MacroTable:
    """The macros of an N cube as centre permutations (built once per N, a few ms for N ≤ 8)."""
    g = geometry(n)
    cells = centre_cells(n)
    where = np.full(6 * n * n, -1, dtype=np.int64)
    where[cells] = np.arange(cells.size)
    seqs = _sequences(n)
    perm = np.empty((len(seqs), cells.size), dtype=np.int32)
    for k, seq in enumerate(seqs):
        labels = np.arange(6 * n * n, dtype=np.int64)
        g.apply(labels, seq)
        perm[k] = where[labels[cells]]
    cost = np.array([count(seq, Metric.HTM, n) for seq in seqs], dtype=np.int64)
    safe = np.array([len(seq) > 1 or seq[0].quarter_turns == 2 for seq in seqs])
    return MacroTable(perm, cost, tuple(tuple(seq) for seq in seqs), safe)


def best_macro(state: Colours, n: int, targets: tuple[int, ...], safe: bool = True) -> Macro | None:
    """The macro that puts most centre pieces on their face (``targets``: the colour of each
    face) per move, None if none gains; with ``safe`` only those that keep the wing
    parities."""
    table = macro_table(n)
    cells = centre_cells(n)
    now = state[cells]
    want = np.repeat(np.array(targets, dtype=np.uint8), (n - 2) ** 2)
    gains = (now[table.perm] == want).sum(axis=1) - int((now == want).sum())
    ratio = np.where(table.safe | (not safe), gains / table.cost, -1.0)
    k = int(np.argmax(ratio))
    if gains[k] <= 0:
        return None
    return Macro(int(gains[k]), int(table.cost[k]), table.moves[k])
