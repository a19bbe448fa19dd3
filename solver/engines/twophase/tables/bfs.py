"""Breadth-first distance tables, vectorised: one level of the search is a few numpy passes.

Two builders serve every pruning table:

* :func:`exact_bfs`: exact distances over pairs of coordinates ``a * n_b + b`` (small tables,
  a few MB at most).
* :func:`sym_bfs`: distances over (symmetry class, raw coordinate) pairs, for the big tables
  reduced by the 16 symmetries that keep the UD axis; each level is one pass of the C kernel
  (``bfs_level`` in ``_twophase.c``): a numpy level costs a dozen passes over the table with
  int32 temporaries, and the whole build took 4-6 times as long.

and three packings: :func:`pack_mod3` (distance mod 3, 2 bits each), :func:`pack_nibbles`
(exact distance, 4 bits each) and :func:`pack_axes` (the phase-1 tables: distance mod 3 and the
axis of the nearer moves, 4 bits each).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from solver.engines.twophase import coord as C
from solver.engines.twophase._twophase import bfs_level, down_axes
from solver.engines.twophase.tables.cache import Array
from solver.engines.twophase.tables.progress import Progress

__all__ = [
    "UNSET",
    "exact_bfs",
    "group_masks",
    "move_masks",
    "pack_mod3",
    "pack_nibbles",
    "sym_bfs",
]

log = logging.getLogger(__name__)

#: depth of an entry not reached yet
UNSET = 255
#: entries packed per numpy pass (bounds the temporary arrays to about 25 MB)
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


def move_masks(depth: Array, a_move: Array, b_move: Array, n_b: int) -> Array:
    """For an exact depth table of :func:`exact_bfs` (18 face turns), which turns change each
    entry's depth, so that a search reads the moves it may take instead of each child's depth.

    One uint32 per entry: the depth in bits 24..31, and for each face ``f`` a nibble at bits
    ``4f..4f+3``. The three turns of a face are one move apart from each other, so their
    depths never span both ``d - 1`` and ``d + 1``: bit 3 is set when some turn of the face
    increases the depth (then bit ``k`` tells whether turn ``3f + k`` increases it), else bit
    ``k`` tells whether turn ``3f + k`` decreases it."""
    a_table = np.asarray(a_move, dtype=np.int64)
    b_table = np.asarray(b_move, dtype=np.int64)
    base = depth.astype(np.int16)
    out = depth.astype(np.uint32) << 24
    for face in range(6):
        deltas = []
        for k in range(3):
            m = 3 * face + k
            child = (a_table[:, m] * n_b)[:, None] + b_table[:n_b, m][None, :]
            deltas.append(base[child.ravel()] - base)
        up = _increasing(deltas, "a face's turns")
        nibble = up.astype(np.uint32) << 3
        for k, delta in enumerate(deltas):
            nibble |= (np.where(up, delta == 1, delta == -1).astype(np.uint32)) << k
        out |= nibble << (4 * face)
    return out


def _increasing(deltas: list[Array], what: str) -> Array:
    """Where some of ``deltas`` (child depth less the entry's, one array per move) is +1; an
    entry where others are -1 is not a distance table (AssertionError naming ``what``)."""
    up = np.zeros(deltas[0].shape, dtype=bool)
    down = np.zeros(deltas[0].shape, dtype=bool)
    for delta in deltas:
        up |= delta == 1
        down |= delta == -1
    if (up & down).any():
        raise AssertionError(f"{what} span depth - 1 and depth + 1: not a distance")
    return up


#: the groups of one axis in the robot metric (:data:`~solver.engines.twophase.coord.AXIAL_MOVES`)
_GROUPS_PER_AXIS = 15


def group_masks(depth: Array, a_move: Array, b_move: Array, n_b: int) -> Array:
    """:func:`move_masks` for an exact depth table in the robot metric (the 45 groups of
    :data:`~solver.engines.twophase.coord.AXIAL_MOVES`, ``a_move`` and ``b_move`` with 45
    columns): which groups change each entry's depth.

    One uint64 per entry: the depth in bits 56..63, and for each axis ``a`` (groups
    ``15a..15a+14``) 16 bits at ``16a``. Two groups of one axis are a group apart (the axis's
    faces commute), so their depths never span both ``d - 1`` and ``d + 1``: bit 15 is set
    when some group of the axis increases the depth (then bit ``j`` tells whether group
    ``15a + j`` increases it), else bit ``j`` tells whether it decreases it."""
    # int32 indices, int8 deltas and a 16-bit field per axis: the build runs in the worker
    # that still holds the big axial1 depth array, so its temporaries are kept small
    a_table = np.asarray(a_move, dtype=np.int32)
    b_table = np.asarray(b_move, dtype=np.int32)
    base = depth.astype(np.int8)
    out = depth.astype(np.uint64) << np.uint64(56)
    for axis in range(3):
        deltas = []
        for j in range(_GROUPS_PER_AXIS):
            k = _GROUPS_PER_AXIS * axis + j
            child = (a_table[:, k] * np.int32(n_b))[:, None] + b_table[:n_b, k][None, :]
            deltas.append(base[child.ravel()] - base)
        up = _increasing(deltas, "an axis's groups")
        field = up.astype(np.uint16) << np.uint16(_GROUPS_PER_AXIS)
        for j, delta in enumerate(deltas):
            field |= np.where(up, delta == 1, delta == -1).astype(np.uint16) << np.uint16(j)
        out |= field.astype(np.uint64) << np.uint64(16 * axis)
    return out


def _spans(total: int) -> Iterator[tuple[int, int]]:
    """``[lo, hi)`` ranges of at most :data:`_CHUNK` entries covering ``0..total-1``, each
    starting at a multiple of :data:`_CHUNK` (a multiple of 4)."""
    size = _CHUNK
    for lo in range(0, total, size):
        yield lo, min(total, lo + size)


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
    start: Array | None = None,
) -> Array:
    """Breadth-first distances over (symmetry class, raw coordinate) pairs.

    Entry ``c * n_raw + r`` is the state whose first coordinate is class ``c``'s representative
    and whose second is ``r``. Moving it by ``m`` gives class ``class_move[c, m]`` reached with
    symmetry ``s = class_sym[c, m]`` and second coordinate ``raw_conj[raw_move[r, m], s]``;
    ``stab[c]`` is the mask of the symmetries fixing class ``c``'s representative.
    The distances are to the solved state (entry 0), or with ``start`` (entry indices, a set
    closed under the symmetries) to the nearest of those entries.
    Levels expand forwards while the frontier is small and backwards (each unvisited entry
    looks for a neighbour in the frontier) once the unvisited entries are fewer. Each level is
    one call of the C kernel's ``bfs_level`` (GIL released), which walks the ``uint8`` depth
    array in place: besides it the build holds only the move tables of the given ``moves``
    as int32 (a few MB).
    """
    columns = list(moves)
    cm = np.ascontiguousarray(np.asarray(class_move)[:, columns], dtype=np.int32)
    cs = np.ascontiguousarray(np.asarray(class_sym)[:, columns], dtype=np.uint8)
    rm = np.ascontiguousarray(np.asarray(raw_move)[:, columns], dtype=np.int32)
    conj = np.ascontiguousarray(raw_conj, dtype=np.int32)
    stabs = np.ascontiguousarray(stab, dtype=np.uint16)
    if cm.shape != (n_class, len(columns)) or conj.shape != (n_raw, C.N_SYM_D4H):
        raise ValueError(f"{task}: move or symmetry tables of the wrong shape")
    total = n_class * n_raw
    depth = np.full(total, UNSET, dtype=np.uint8)
    if start is None:
        depth[0] = 0  # class 0 holds the solved first coordinate (its orbit's smallest value is 0)
        done = 1
    else:
        entries = np.unique(np.asarray(start, dtype=np.int64))
        depth[entries] = 0
        done = len(entries)
    level = done  # entries at depth d
    d = 0
    report(task, 0, total)
    while done < total:
        unvisited = total - done
        if level == 0:
            raise AssertionError(f"{task}: {unvisited} states unreachable")
        backward = unvisited < _BACKWARD_RATIO * level
        level = bfs_level(depth, d, backward, cm, cs, rm, conj, stabs, n_raw)
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


#: a single axis's bit (bits 4..6 of :func:`down_axes` entries) to its code; 3: no single axis
_AXIS_CODE = np.full(8, 3, dtype=np.uint8)
_AXIS_CODE[[1, 2, 4]] = (0, 1, 2)


def pack_axes(
    depth: Array,
    class_move: Array,
    class_sym: Array,
    raw_move: Array,
    raw_conj: Array,
    n_raw: int,
    axis_of: Sequence[int],
) -> Array:
    """A phase-1 table of :func:`sym_bfs` depths (arguments as there, every move's column;
    ``axis_of``: the axis of each move, 0 U/D, 1 R/L, 2 F/B), packed in place as 4-bit
    entries (entry i in the low half of byte i // 2 when i is even): bits 0-1 the depth mod 3,
    bits 2-3 the axis of every move that brings the entry one move nearer, 3 when those moves
    are on more than one axis (or none: the goal). Random states are 95 % single-axis at the
    depths a search walks: a node with no move to spare then computes only that axis's
    children. ``depth`` is overwritten and the returned array is a view of its start. Marking
    the axes is one pass of the C kernel's ``down_axes`` (GIL released), each class's
    neighbour rows walked in turn."""
    cm = np.ascontiguousarray(class_move, dtype=np.int32)
    cs = np.ascontiguousarray(class_sym, dtype=np.uint8)
    rm = np.ascontiguousarray(raw_move, dtype=np.int32)
    conj = np.ascontiguousarray(raw_conj, dtype=np.int32)
    axes = np.ascontiguousarray(axis_of, dtype=np.uint8)
    single = down_axes(depth, cm, cs, rm, conj, n_raw, axes)
    log.debug("%d of %d entries have their nearer moves on one axis", single, len(depth))
    return _pack_pairs(depth, depth, lambda d: _AXIS_CODE[d >> 4] << 2 | (d & 15) % 3)


def pack_nibbles(depth: Array, *, in_place: bool = False) -> Array:
    """Exact depths, 4 bits each (entry i in the low half of byte i // 2 when i is even), 15
    standing for 15 or more; packed one span at a time (``in_place`` as in :func:`pack_mod3`)."""
    out = depth if in_place else np.zeros((len(depth) + 1) // 2, dtype=np.uint8)
    return _pack_pairs(depth, out, lambda d: np.minimum(d, _NIBBLE_MAX))


def _pack_pairs(depth: Array, out: Array, nibble: Callable[[Array], Array]) -> Array:
    """``nibble`` of each entry of ``depth`` (a span at a time), two to a byte of ``out``
    (entry i in the low half of byte i // 2 when i is even; ``out`` may be ``depth``: a span's
    bytes end before the next span)."""
    for lo, hi in _spans(len(depth)):  # spans start at even entries
        v = nibble(depth[lo:hi])
        if len(v) % 2:
            v = np.concatenate([v, np.zeros(1, dtype=np.uint8)])
        pairs = v.reshape(-1, 2)
        out[lo // 2 : lo // 2 + len(pairs)] = pairs[:, 0] | (pairs[:, 1] << 4)
    packed: Array = out[: (len(depth) + 1) // 2]
    return packed
