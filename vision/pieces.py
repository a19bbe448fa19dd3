"""Piece orbits of an N×N cube, as the colour classifier needs them.

A physical cube can only show stickers that belong to real pieces. For any N the stickers fall
into *orbits*: sets of positions that a piece can reach by turning layers. Every orbit is one of:

==========  =======================  ======================  ===========================
kind        positions (slots)        orientations in a slot  constraint the cube obeys
==========  =======================  ======================  ===========================
corner      8 slots × 3 stickers     3 (twist)               twist sum ≡ 0 (mod 3)
midge       12 × 2 (odd N only)      2 (flip)                flip sum even; parity equals
                                                             the corners' parity (odd N)
wing        24 × 2 (N ≥ 4)           1 (fixed by position)   24 distinct pieces
centre      24 × 1 (N ≥ 4)           1                       4 stickers of each colour
fixed       6 × 1 (odd N)            1                       the six centres (references)
==========  =======================  ======================  ===========================

Orbits are not written down by hand: they are derived by a breadth-first search of the ordered
sticker tuples that each home piece reaches under every single-layer quarter turn of
:mod:`solver.cube.facelets`, so they are right for every N by construction. A piece is named by the
faces of its home stickers (``(U, R, F)`` for the URF corner); colour index ``c`` means the
colour of face ``c`` (see :mod:`solver.cube.facelets`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from solver.cube.cubie import cubie_layout
from solver.cube.facelets import layer_permutation
from solver.cube.geometry import Face

__all__ = ["Orbit", "OrbitKind", "orbits"]

IntArray = npt.NDArray[np.intp]


class OrbitKind(StrEnum):
    CORNER = "corner"
    MIDGE = "midge"
    WING = "wing"
    CENTRE = "centre"
    FIXED = "fixed"


@dataclass(frozen=True, slots=True)
class Orbit:
    """One orbit of pieces.

    ``tuples[t]`` is an ordered sticker tuple a piece can occupy (its home sticker ``k`` lands
    on ``tuples[t, k]``); ``slot_of[t]`` the slot that tuple fills; ``orientation[t]`` the index
    within the slot's reference tuple where the piece's first sticker lies (the twist of a
    corner, the flip of a midge, 0 otherwise); ``slots[s]`` the reference (home) tuple of slot
    ``s``; ``pieces[p]`` the colours of piece ``p`` in home order (piece ``p`` lives at slot
    ``p`` on the solved cube).
    """

    kind: OrbitKind
    n: int
    tuples: IntArray
    slot_of: IntArray
    orientation: IntArray
    slots: IntArray
    pieces: IntArray

    @property
    def size(self) -> int:
        """Number of slots (= number of pieces)."""
        return int(self.slots.shape[0])

    @property
    def width(self) -> int:
        """Stickers per piece."""
        return int(self.slots.shape[1])


def _generators(n: int) -> list[IntArray]:
    """Forward maps of every single-layer quarter turn: sticker at ``i`` goes to ``fwd[i]``."""
    maps: list[IntArray] = []
    for face in (Face.U, Face.R, Face.F):
        for layer in range(1, n + 1):
            perm = layer_permutation(n, face, layer)
            fwd = np.empty_like(perm)
            fwd[perm] = np.arange(perm.size, dtype=np.intp)
            maps.append(fwd)
    return maps


def _closure(start: tuple[int, ...], gens: list[IntArray]) -> set[tuple[int, ...]]:
    seen = {start}
    frontier = [start]
    while frontier:
        nxt: list[tuple[int, ...]] = []
        for state in frontier:
            for g in gens:
                moved = tuple(int(g[i]) for i in state)
                if moved not in seen:
                    seen.add(moved)
                    nxt.append(moved)
        frontier = nxt
    return seen


def _build(kind: OrbitKind, n: int, homes: list[tuple[int, ...]], gens: list[IntArray]) -> Orbit:
    reach = sorted(_closure(homes[0], gens))
    slot_index = {frozenset(h): s for s, h in enumerate(homes)}
    if {frozenset(t) for t in reach} != set(slot_index):  # pragma: no cover - geometry bug
        raise AssertionError(f"{kind.value} orbit of N={n} does not match its home slots")
    tuples = np.array(reach, dtype=np.intp)
    slot_of = np.array([slot_index[frozenset(t)] for t in reach], dtype=np.intp)
    orientation = np.array(
        [homes[slot_index[frozenset(t)]].index(t[0]) for t in reach], dtype=np.intp
    )
    slots = np.array(homes, dtype=np.intp)
    # A piece's colours, in the sticker order the reached tuples use: read off the solved cube
    # at the reached tuple of its home slot with the lowest orientation (the home tuple itself
    # for corners and midges; for wings the home slot may only be reachable reversed).
    pieces = np.empty_like(slots)
    for s in range(len(homes)):
        candidates = [t for t in reach if slot_index[frozenset(t)] == s]
        first = min(candidates, key=lambda t: homes[s].index(t[0]))
        pieces[s] = np.array(first, dtype=np.intp) // (n * n)
    for arr in (tuples, slot_of, orientation, slots, pieces):
        arr.setflags(write=False)
    return Orbit(kind, n, tuples, slot_of, orientation, slots, pieces)


@lru_cache(maxsize=16)
def orbits(n: int) -> tuple[Orbit, ...]:
    """Every orbit of an N cube (N ≥ 2), corners first, then midges, wings, centres, fixed."""
    if n < 2:
        raise ValueError(f"a {n}x{n} cube has no pieces to constrain")
    layout = cubie_layout(n)
    gens = _generators(n)
    result: list[Orbit] = [_build(OrbitKind.CORNER, n, list(layout.corners), gens)]
    # Edge wings: wing k of every edge slot; k and N-3-k share an orbit, the middle one (odd N)
    # is the midge orbit.
    for k in range((n - 2 + 1) // 2):
        homes: list[tuple[int, ...]] = [wings[k] for wings in layout.edges]
        mirror = n - 3 - k
        if mirror != k:
            homes += [wings[mirror] for wings in layout.edges]
            result.append(_build(OrbitKind.WING, n, homes, gens))
        else:
            result.append(_build(OrbitKind.MIDGE, n, homes, gens))
    # Centres: group the (N-2)² stickers of every face by orbit.
    centre_stickers = sorted(i for face in layout.centres for i in face)
    assigned: set[int] = set()
    for i in centre_stickers:
        if i in assigned:
            continue
        members = sorted(t[0] for t in _closure((i,), gens))
        assigned.update(members)
        kind = OrbitKind.FIXED if len(members) == 6 else OrbitKind.CENTRE
        result.append(_build(kind, n, [(m,) for m in members], gens))
    return tuple(result)
