"""Sequence optimiser: shorter sequences that leave the cube in exactly the same state.

Passes, repeated until nothing changes:

1. **Rotations to the end.** ``x`` followed by a turn equals the same turn of another face
   followed by ``x``; every rotation is pushed past the turns after it and the total orientation
   is written once, at the end, in its shortest spelling.
2. **Merging along an axis.** Turns of one axis commute (``R L' 2R`` all turn about x), so a run
   of them is reduced to the net quarter turns of every layer and written back as the fewest
   block moves: ``R R`` → ``R2``, ``R R'`` → nothing, ``R L R`` → ``R2 L``, ``Rw R'`` → ``2R``.
   On a big cube, where a block with an outer layer counts 1 and an inner one 2 (OBTM), the
   run is also written with blocks from the axis's two faces only, when that is shorter in
   OBTM (``Fw2 3F'`` → ``3Fw' Fw'``, 3 → 2; :func:`_wide_spelling`). A run is only replaced
   when the result is no longer (in moves and in HTM) than the original.

The result never changes the state (the facelets are identical, orientation included) and is
never longer than the input.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache, lru_cache
from itertools import pairwise

import numpy as np

from solver.cube.facelets import move_permutation, sequence_permutation
from solver.cube.geometry import Face
from solver.cube.notation import OPPOSITE, Metric, Move, MoveKind, count, parse

__all__ = ["optimize"]

_CANONICAL = {
    Face.U: Face.U,
    Face.D: Face.U,
    Face.R: Face.R,
    Face.L: Face.R,
    Face.F: Face.F,
    Face.B: Face.F,
}
_MIDDLE_OF = {Face.U: Face.D, Face.R: Face.L, Face.F: Face.F}  # M/E/S turn like L, D, F
_TURNS = {1: 1, 2: 2, 3: -1}


def optimize(moves: Iterable[Move] | str, n: int = 3) -> list[Move]:
    """An equivalent sequence that is never longer (see the module docstring)."""
    seq = parse(moves) if isinstance(moves, str) else list(moves)
    for move in seq:
        move.layers(n)  # reject moves this cube size does not have, before optimising
    body, rotation = _push_rotations(seq, n)
    while True:
        merged = _merge_axes(body, n)
        if merged == body:
            break
        body = merged
    return body + rotation


# --- rotations ------------------------------------------------------------------------------


@cache
def _rotation_face_map(rotation: Move) -> dict[Face, Face]:
    """For a rotation r: a turn of face X done after r equals a turn of face map[X] before r."""
    result: dict[Face, Face] = {}
    n = 3
    rot = move_permutation(rotation, n)
    for face in Face:
        after = sequence_permutation([rotation, Move.outer(face)], n)
        for candidate in Face:
            before = sequence_permutation([Move.outer(candidate)], n)[rot]
            if np.array_equal(after, before):
                result[face] = candidate
                break
    return result


def _relabel(move: Move, face_map: dict[Face, Face]) -> Move:
    face = face_map[move.face]
    turns = move.turns
    if move.kind is MoveKind.MIDDLE and face not in (Face.L, Face.D, Face.F):
        face, turns = OPPOSITE[face], _invert(turns)
    if move.kind is MoveKind.ROTATION and face not in (Face.R, Face.U, Face.F):
        face, turns = OPPOSITE[face], _invert(turns)
    return Move(move.kind, face, move.lo, move.hi, turns, move.lower)


def _invert(turns: int) -> int:
    return {1: -1, -1: 1, 2: 2, -2: -2}[turns]


def _push_rotations(seq: Sequence[Move], n: int) -> tuple[list[Move], list[Move]]:
    body: list[Move] = []
    rotations: list[Move] = []
    face_map = {f: f for f in Face}
    for move in seq:
        if move.kind is MoveKind.ROTATION:
            rotations.append(move)
            step = _rotation_face_map(move)
            face_map = {f: face_map[step[f]] for f in Face}
        else:
            body.append(_relabel(move, face_map))
    if not rotations:
        return body, []
    return body, _shortest_rotation(sequence_permutation(rotations, 3))


@lru_cache(maxsize=1)
def _rotation_spellings() -> list[tuple[bytes, list[Move]]]:
    spellings: list[tuple[bytes, list[Move]]] = []
    seen: set[bytes] = set()
    singles = ["", "x", "x2", "x'", "y", "y2", "y'", "z", "z2", "z'"]
    candidates = [parse(a + " " + b) for a in singles for b in singles]
    candidates.sort(key=len)
    for cand in candidates:
        key = sequence_permutation(cand, 3).tobytes()
        if key not in seen:
            seen.add(key)
            spellings.append((key, cand))
    return spellings


def _shortest_rotation(perm: np.ndarray) -> list[Move]:
    key = perm.astype(np.intp).tobytes()
    for spelled, moves in _rotation_spellings():
        if spelled == key:
            return list(moves)
    raise AssertionError("a product of rotations is not a rotation")  # pragma: no cover


# --- merging along an axis --------------------------------------------------------------------


def _merge_axes(body: Sequence[Move], n: int) -> list[Move]:
    result: list[Move] = []
    i = 0
    while i < len(body):
        axis = _CANONICAL[body[i].face]
        j = i
        while j < len(body) and _CANONICAL[body[j].face] is axis:
            j += 1
        result.extend(_merged_run(tuple(body[i:j]), axis, n))
        i = j
    return result


@lru_cache(maxsize=1 << 16)
def _merged_run(group: tuple[Move, ...], axis: Face, n: int) -> tuple[Move, ...]:
    """A run of one axis's moves merged (:func:`_merge_group`) when that is no longer, in moves
    and in HTM, else as it was. Cached: a big cube's centres repeat the same few runs (their
    commutators' outer turns and layer blocks) thousands of times, and each pass of
    :func:`optimize` meets the runs of the pass before."""
    merged = _merge_group(group, axis, n)
    htm = count(group, Metric.HTM, n)
    best = group
    if list(group) == merged or (len(merged) <= len(group) and count(merged, Metric.HTM, n) <= htm):
        best = tuple(merged)
    wide = _wide_spelling(group, axis, n)
    if wide is not None and len(wide) <= len(group) and len(wide) < count(best, Metric.HTM, n):
        return tuple(wide)  # every move of it has an outer layer: its HTM is its length
    return best


def _changes(group: Sequence[Move], axis: Face, n: int) -> dict[int, int]:
    """For each layer where a move of ``group`` (one axis) starts or ends, counted from
    ``axis``: the net quarter turns from that layer on minus those of the layer before it."""
    change: dict[int, int] = {}
    for move in group:
        lo, hi = move.layers(n)
        turns = move.turns
        if move.face is not axis:
            lo, hi, turns = n + 1 - hi, n + 1 - lo, -turns
        change[lo] = change.get(lo, 0) + turns
        change[hi + 1] = change.get(hi + 1, 0) - turns
    return change


def _wide_spelling(group: Sequence[Move], axis: Face, n: int) -> list[Move] | None:
    """The net quarter turns of ``group`` (one axis) as blocks from the axis's two faces
    only, one a place where the net turn changes between two layers (each block has an outer
    layer: 1 OBTM, where an inner block costs 2): ``[2, 2, 3]`` (``Fw2 3F'``) is ``Fw'
    3Fw'``. Each such place is reached from one face; the blocks from the near face must add
    up to the net turn of layer 1 (mod 4), a subset sum over the places (4 residues). None
    when no split does (only a whole-cube turn would)."""
    change = _changes(group, axis, n)
    inner = sorted(j for j, t in change.items() if 1 < j <= n and t % 4)
    # residue of the near face's places' changes -> those places (the first split found)
    splits: dict[int, tuple[int, ...]] = {0: ()}
    for j in inner:
        step = dict(splits)  # j reached from the far face
        for r, near in splits.items():
            step.setdefault((r + change[j]) % 4, (*near, j))
        splits = step
    split = splits.get(-change.get(1, 0) % 4)
    if split is None:
        return None  # layer 1 would keep a turn of its own
    return [
        _spell(axis, 1, j - 1, -change[j] % 4, n)
        if j in split
        else _spell(axis, j, n, change[j] % 4, n)
        for j in inner
    ]


def _merge_group(group: Sequence[Move], axis: Face, n: int) -> list[Move]:
    """The fewest block moves for the net quarter turns of every layer of ``group`` (layers
    counted from ``axis``). The net turns change only where a move's layers start or end, so
    they are swept over those places (a few per move) rather than layer by layer: a big cube's
    moves span up to N layers."""
    change = _changes(group, axis, n)
    runs: list[tuple[int, int, int]] = []  # (first layer, last layer, quarter turns 1..3)
    places = sorted(change)
    level = 0
    for start, stop in pairwise(places):  # layers start..stop-1
        level += change[start]
        q = level % 4
        if q == 0:
            continue
        if runs and runs[-1][1] == start - 1 and runs[-1][2] == q:
            runs[-1] = (runs[-1][0], stop - 1, q)
        else:
            runs.append((start, stop - 1, q))
    out: list[Move] = []
    for lo, hi, q in runs:
        if lo == 1 and hi == n:
            return list(group)  # a whole-cube turn: leave this run as it was written
        out.append(_spell(axis, lo, hi, q, n))
    return out


def _spell(axis: Face, lo: int, hi: int, q: int, n: int) -> Move:
    """The simplest move for canonical layers lo..hi turned q quarter turns."""
    if n % 2 == 1 and n >= 3 and lo == 2 and hi == n - 1:
        face = _MIDDLE_OF[axis]
        turns = _TURNS[q] if face is axis else _TURNS[(-q) % 4]
        return Move(MoveKind.MIDDLE, face, 0, 0, turns)
    opposite = OPPOSITE[axis]
    if lo == 1 or (hi != n and (lo - 1) <= (n - hi)):
        return Move.block(axis, lo, hi, _TURNS[q])
    return Move.block(opposite, n + 1 - hi, n + 1 - lo, _TURNS[(-q) % 4])
