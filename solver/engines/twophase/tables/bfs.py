"""Breadth-first distance tables, vectorised: one level of the search is a few numpy passes.

Two builders serve every pruning table:

* :func:`exact_bfs`: exact distances over pairs of coordinates ``a * n_b + b`` (small tables,
  a few MB at most).
* :func:`sym_bfs`: distances over (symmetry class, raw coordinate) pairs, for the big tables
  reduced by the 16 symmetries that keep the UD axis.

and two packings: :func:`pack_mod3` (distance mod 3, 2 bits each) and :func:`pack_nibbles`
(exact distance, 4 bits each).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence

import numpy as np

from solver.engines.twophase import coord as C
from solver.engines.twophase.tables.cache import Array
from solver.engines.twophase.tables.progress import Progress

__all__ = ["UNSET", "exact_bfs", "pack_mod3", "pack_nibbles", "sym_bfs"]

log = logging.getLogger(__name__)

#: depth of an entry not reached yet
UNSET = 255
#: entries handled per numpy pass (bounds the temporary arrays to about 25 MB)
_CHUNK = 1 << 20
#: the backward step (unvisited entries look for a frontier neighbour) pays once the unvisited
#: entries are fewer than this many times the frontier
_BACKWARD_RATIO = 3
#: the largest exact depth a nibble holds; deeper entries read as this
_NIBBLE_MAX = 15


def exact_bfs(a_move: Array, b_move: Array, n_b: int, moves: Sequence[int] | None = None) -> Array:
    """Exact distances from entry 0 of every entry ``a * n_b + b``, for two coordinates moved
    together by the columns ``moves`` (default: all) of their move tables: ``a`` ranges over the
    rows of ``a_move``, ``b`` over ``0..n_b-1`` (``b_move`` may have more rows; a ``b`` below
    ``n_b`` must stay below it under ``moves``). Every entry must be reachable."""
    a_table = np.asarray(a_move, dtype=np.int64)
    b_table = np.asarray(b_move, dtype=np.int64)
    columns = range(a_table.shape[1]) if moves is None else moves
    depth = np.full(a_table.shape[0] * n_b, UNSET, dtype=np.uint8)
    depth[0] = 0
    d = 0
    frontier = np.array([0], dtype=np.int64)
    while len(frontier):
        a, b = frontier // n_b, frontier % n_b
        for m in columns:
            idx = a_table[a, m] * n_b + b_table[b, m]
            depth[idx[depth[idx] == UNSET]] = d + 1
        d += 1
        frontier = np.flatnonzero(depth == d)
    assert (depth != UNSET).all()
    return depth


def _spans(total: int) -> Iterator[tuple[int, int]]:
    """``[lo, hi)`` ranges of at most :data:`_CHUNK` entries covering ``0..total-1``, each
    starting at a multiple of :data:`_CHUNK` (a multiple of 4)."""
    size = _CHUNK
    for lo in range(0, total, size):
        yield lo, min(total, lo + size)


def _where(depth: Array, lo: int, hi: int, value: int) -> Array:
    """The indices (int64) of the entries of ``depth[lo:hi]`` equal to ``value``."""
    found: Array = np.flatnonzero(depth[lo:hi] == value)
    found += lo
    return found


class _SymGraph:
    """The neighbours of (class, raw) entries, as flat lookups per move (module
    :func:`sym_bfs`): neighbour of entry ``(c, r)`` by move ``k`` is
    ``cm[k][c] + rs[k][cs[k][c] + r]`` (int32: the largest index, 140,908,410, fits)."""

    def __init__(
        self,
        n_raw: int,
        class_move: Array,
        class_sym: Array,
        raw_move: Array,
        raw_conj: Array,
        moves: Sequence[int],
    ) -> None:
        self.n_raw = n_raw
        self.cm = [(class_move[:, m].astype(np.int64) * n_raw).astype(np.int32) for m in moves]
        self.cs = [(class_sym[:, m].astype(np.int64) * n_raw).astype(np.int32) for m in moves]
        # raw values fit in uint16 for every table here: half the memory of int32 lookups
        conj = np.asarray(raw_conj, dtype=np.uint16 if n_raw <= 1 << 16 else np.int32)
        self.rs = [
            np.ascontiguousarray(conj[np.asarray(raw_move[:, m], dtype=np.int64)].T).reshape(-1)
            for m in moves
        ]
        self.rconj = conj.reshape(-1)

    def split(self, entries: Array) -> tuple[Array, Array]:
        c = (entries // self.n_raw).astype(np.int32)
        return c, (entries - c * self.n_raw).astype(np.int32)

    def neighbour(self, k: int, c: Array, r: Array) -> Array:
        idx: Array = self.cm[k][c] + self.rs[k][self.cs[k][c] + r]
        return idx


def _forward(graph: _SymGraph, depth: Array, d: int) -> None:
    """Mark the unvisited neighbours of the entries at depth ``d`` with ``d + 1``, one span of
    the table at a time (the temporaries stay a few tens of MB whatever the frontier's size)."""
    for lo, hi in _spans(len(depth)):
        frontier = _where(depth, lo, hi, d)
        if len(frontier) == 0:
            continue
        c, r = graph.split(frontier)
        del frontier
        for k in range(len(graph.cm)):
            idx = graph.neighbour(k, c, r)
            depth[idx[depth[idx] == UNSET]] = d + 1


def _backward(graph: _SymGraph, depth: Array, d: int) -> None:
    """Mark with ``d + 1`` every unvisited entry that has a neighbour at depth ``d``."""
    for lo, hi in _spans(len(depth)):
        chunk = _where(depth, lo, hi, UNSET)
        c, r = graph.split(chunk)
        found = np.zeros(len(chunk), dtype=bool)
        live = np.arange(len(chunk), dtype=np.int32)
        for k in range(len(graph.cm)):
            hit = depth[graph.neighbour(k, c[live], r[live])] == d
            found[live[hit]] = True
            live = live[~hit]
            if len(live) == 0:
                break
        depth[chunk[found]] = d + 1


def _close_under_stabilisers(graph: _SymGraph, depth: Array, stab: Array, d: int) -> int:
    """Give depth ``d`` to the states equivalent to one at depth ``d`` under a symmetry that
    fixes its class representative; returns how many entries are at depth ``d``.

    An entry marked here lies in the class of the entry it comes from, so it is in the orbit
    of that entry under the class's stabiliser: closing an orbit from any of its members
    marks all of it, whichever span holds the members."""
    n_raw = graph.n_raw
    nontrivial = stab != 1
    for lo, hi in _spans(len(depth)):
        new = _where(depth, lo, hi, d)
        cls = (new // n_raw).astype(np.int32)
        pick = nontrivial[cls]
        if not pick.any():
            continue
        cn = cls[pick]
        rn = (new[pick] - cn.astype(np.int64) * n_raw).astype(np.int32)
        masks = stab[cn]
        for s in range(1, C.N_SYM_D4H):
            sel = (masks >> s) & 1 == 1
            idx = cn[sel].astype(np.int64) * n_raw + graph.rconj[rn[sel] * C.N_SYM_D4H + s]
            depth[idx[depth[idx] == UNSET]] = d
    return sum(int(np.count_nonzero(depth[lo:hi] == d)) for lo, hi in _spans(len(depth)))


def sym_bfs(
    task: str,
    n_class: int,
    n_raw: int,
    class_move: Array,
    class_sym: Array,
    raw_move: Array,
    raw_conj: Array,
    stab: Array,
    moves: Sequence[int],
    report: Progress,
) -> Array:
    """Breadth-first distances over (symmetry class, raw coordinate) pairs.

    Entry ``c * n_raw + r`` is the state whose first coordinate is class ``c``'s representative
    and whose second is ``r``. Moving it by ``m`` gives class ``class_move[c, m]`` reached with
    symmetry ``s = class_sym[c, m]`` and second coordinate ``raw_conj[raw_move[r, m], s]``;
    ``stab[c]`` is the mask of the symmetries fixing class ``c``'s representative.
    Levels expand forwards while the frontier is small and backwards (each unvisited entry
    looks for a neighbour in the frontier) once the unvisited entries are fewer. Every pass
    walks the table in spans of :data:`_CHUNK` entries, so besides the ``uint8`` result the
    build holds only a few tens of MB of int32 temporaries.
    """
    graph = _SymGraph(n_raw, class_move, class_sym, raw_move, raw_conj, moves)
    total = n_class * n_raw
    depth = np.full(total, UNSET, dtype=np.uint8)
    depth[0] = 0  # class 0 holds the solved first coordinate (its orbit's smallest value is 0)
    done = 1
    level = 1  # entries at depth d
    d = 0
    report(task, 0, total)
    while done < total:
        unvisited = total - done
        if level == 0:
            raise AssertionError(f"{task}: {unvisited} states unreachable")
        if unvisited < _BACKWARD_RATIO * level:
            _backward(graph, depth, d)
        else:
            _forward(graph, depth, d)
        level = _close_under_stabilisers(graph, depth, stab, d + 1)
        done += level
        d += 1
        log.debug("%s: depth %d has %d entries", task, d, level)
        report(task, done, total)
    return depth


def pack_mod3(depth: Array, *, in_place: bool = False) -> Array:
    """Distances mod 3, four to a byte (entry i in bits ``2 * (i % 4)`` of byte ``i // 4``),
    packed one span at a time. ``in_place`` writes the bytes over the start of ``depth``
    (whose contents are then lost) and returns a view of them, which saves a second buffer
    while a big table is packed."""
    out = depth if in_place else np.zeros((len(depth) + 3) // 4, dtype=np.uint8)
    for lo, hi in _spans(len(depth)):  # spans start at multiples of 4
        d3 = depth[lo:hi] % 3  # a copy: the bytes written below end before the next span
        pad = (-len(d3)) % 4
        if pad:
            d3 = np.concatenate([d3, np.zeros(pad, dtype=np.uint8)])
        q = d3.reshape(-1, 4)
        out[lo // 4 : lo // 4 + len(q)] = q[:, 0] | (q[:, 1] << 2) | (q[:, 2] << 4) | (q[:, 3] << 6)
    packed: Array = out[: (len(depth) + 3) // 4]
    return packed


def pack_nibbles(depth: Array, *, in_place: bool = False) -> Array:
    """Exact depths, 4 bits each (entry i in the low half of byte i // 2 when i is even), 15
    standing for 15 or more; packed one span at a time (``in_place`` as in :func:`pack_mod3`)."""
    out = depth if in_place else np.zeros((len(depth) + 1) // 2, dtype=np.uint8)
    for lo, hi in _spans(len(depth)):  # spans start at even entries
        d = np.minimum(depth[lo:hi], _NIBBLE_MAX)
        if len(d) % 2:
            d = np.concatenate([d, np.zeros(1, dtype=np.uint8)])
        pairs = d.reshape(-1, 2)
        out[lo // 2 : lo // 2 + len(pairs)] = pairs[:, 0] | (pairs[:, 1] << 4)
    packed: Array = out[: (len(depth) + 1) // 2]
    return packed
