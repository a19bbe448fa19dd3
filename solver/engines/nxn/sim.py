"""Fast moves and piece tracing for big cubes, from the cube's 3D geometry.

:mod:`solver.cube.facelets` turns a whole ``6·N²`` permutation per move, which is right for
small cubes and for checking, but a 101-cube solution has thousands of moves. Here a layer turn
touches only the stickers of that layer (``4N`` for an inner slice), found from the doubled 3D
sticker positions of :func:`solver.cube.geometry.sticker_positions` and turned with
:func:`solver.cube.geometry.rotation_matrix` — the same geometry the facelet model is checked
against (tests compare both on small cubes).

Layer ``k`` of face ``X`` holds the stickers whose cubie centre ``c`` has ``c·normal(X) =
N + 1 - 2k``. Convention, as in the facelet model: ``new = old[src]`` on the cells ``dst``.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from solver.cube.geometry import FACE_FRAMES, Face, rotation_matrix, sticker_positions
from solver.cube.notation import Move, parse

__all__ = ["Geometry", "face_map", "geometry"]

IntArray = npt.NDArray[np.int64]


class Geometry:
    """Positions, layers and sparse layer turns of an N cube."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.pos: IntArray = sticker_positions(n).reshape(-1, 3)
        self.normal: IntArray = np.repeat(
            np.array([FACE_FRAMES[f][0] for f in Face], dtype=np.int64), n * n, axis=0
        )
        self.centre: IntArray = self.pos - self.normal  # doubled cubie centres
        span = 2 * n + 1
        self._span = span
        keys = self._key(self.pos)
        self._order = np.argsort(keys)
        self._sorted = keys[self._order]
        self._turns: dict[tuple[int, int, int], tuple[IntArray, IntArray]] = {}

    def _key(self, pos: IntArray) -> IntArray:
        s = self._span
        n = self.n
        return ((pos[..., 0] + n) * s + (pos[..., 1] + n)) * s + (pos[..., 2] + n)

    def index_of(self, pos: IntArray) -> IntArray:
        """Flat sticker indices of 3D sticker positions."""
        keys = self._key(pos)
        return self._order[np.searchsorted(self._sorted, keys)]

    def layer_coord(self, face: Face, layer: int) -> int:
        """The cubie-centre coordinate along ``face``'s normal of its layer ``layer``."""
        return self.n + 1 - 2 * layer

    def layer_turn(self, face: Face, layer: int, quarter: int) -> tuple[IntArray, IntArray]:
        """(dst, src) of ``quarter`` clockwise quarter turns of one layer seen from ``face``."""
        key = (int(face), layer, quarter % 4)
        hit = self._turns.get(key)
        if hit is not None:
            return hit
        normal = np.array(FACE_FRAMES[face][0], dtype=np.int64)
        cells = np.flatnonzero(self.centre @ normal == self.layer_coord(face, layer))
        rot = rotation_matrix(FACE_FRAMES[face][0], quarter)
        moved = self.index_of(self.pos[cells] @ rot.T)
        # the sticker at cells[i] goes to moved[i]: new[moved[i]] = old[cells[i]]
        result = (moved, cells)
        self._turns[key] = result
        return result

    def apply_move(self, state: npt.NDArray[Any], move: Move) -> None:
        """Turn ``state`` (flat colours or labels) in place by one move."""
        lo, hi = move.layers(self.n)
        quarter = move.quarter_turns
        for layer in range(lo, hi + 1):
            dst, src = self.layer_turn(move.face, layer, quarter)
            state[dst] = state[src]

    def apply(self, state: npt.NDArray[Any], moves: Iterable[Move]) -> None:
        for move in moves:
            self.apply_move(state, move)

    def trace(self, cells: IntArray, steps: Iterable[tuple[Face, IntArray | int, int]]) -> IntArray:
        """Where the pieces now at ``cells`` are after the steps. A step is (face, layer,
        quarter turns); ``layer`` may be an array (one layer per cell: each cell follows its
        own commutator, used to plan many at once)."""
        pos = self.pos[cells].copy()
        nrm = self.normal[cells].copy()
        for face, layer, quarter in steps:
            axis = np.array(FACE_FRAMES[face][0], dtype=np.int64)
            coord = self.n + 1 - 2 * np.asarray(layer)
            mask = (pos - nrm) @ axis == coord
            if not mask.any():
                continue
            rot = rotation_matrix(FACE_FRAMES[face][0], quarter)
            pos[mask] = pos[mask] @ rot.T
            nrm[mask] = nrm[mask] @ rot.T
        return self.index_of(pos)


@cache
def geometry(n: int) -> Geometry:
    """The (cached) geometry of an N cube."""
    return Geometry(n)


@cache
def face_map(rotation: str) -> tuple[Face, ...]:
    """For each face X, the face Y with ``rotation X == Y rotation`` (``rotation`` a string
    of whole-cube rotations, e.g. ``"x y2"``): a move found on the rotated cube is that move on
    face Y of the cube as given."""
    g = geometry(3)
    out = []
    for face in Face:
        ref = np.arange(54)
        g.apply(ref, [*parse(rotation), Move.outer(face, 1)])
        for other in Face:
            trial = np.arange(54)
            g.apply(trial, [Move.outer(other, 1), *parse(rotation)])
            if np.array_equal(ref, trial):
                out.append(other)
    return tuple(out)
