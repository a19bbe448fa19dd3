"""How the cube sits in a mechanism: the 24 whole-cube rotations as facelet permutations.

Two frames meet in a robot that re-orients the cube. The solver's moves are in the *notation*
frame (``X``, the cube's stickers as the solution sees them); the camera and the motors act in
the *physical* frame (``P``, the stickers by where they are in the machine). An orientation is
the whole-cube rotation between them, as a permutation ``Q`` with ``P = X[Q]``
(:mod:`solver.cube.facelets` convention: a permutation ``p`` applied to stickers ``x`` gives
``x[p]``; doing ``p`` then ``q`` is ``p[q]``).

* A physical action ``A`` applied to the cube gives ``P' = P[A] = X[Q[A]]``.
* It executes the notation move ``M`` and leaves orientation ``Q'`` exactly when
  ``Q[A] == M[Q']`` — so ``M = Q[A][Q'^-1]``. :func:`notation_effect` computes that, and every
  correspondence between what the machine does and what the solution asks is derived from it
  (no hand-written sign tables).
* A whole-cube rotation ``R`` of the machine (a flip, a spin with the cover open) leaves the
  notation state alone: ``Q' = Q[R]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from solver.cube.facelets import move_permutation
from solver.cube.geometry import Face
from solver.cube.notation import Move, MoveKind

__all__ = ["N_ORIENTATIONS", "Frames", "Perm", "frames", "key", "rotation"]

Perm = npt.NDArray[np.intp]

#: whole-cube rotations (the rotation group of the cube)
N_ORIENTATIONS = 24


def key(perm: Perm) -> bytes:
    """A hashable form of a permutation."""
    return np.ascontiguousarray(perm, dtype=np.intp).tobytes()


def rotation(face: Face, turns: int, n: int) -> Perm:
    """The whole cube turned like ``face`` by ``turns`` quarter turns (clockwise seen from
    outside ``face``)."""
    if turns % 4 == 0:
        return np.arange(6 * n * n, dtype=np.intp)
    return move_permutation(Move.block(face, 1, n, _norm(turns)), n)


def _norm(turns: int) -> int:
    return {1: 1, 2: 2, 3: -1}[turns % 4]


@dataclass(frozen=True, eq=False)
class Frames:
    """The 24 orientations of an ``n`` cube: ``perms[i]`` is orientation ``i`` (0 = identity),
    ``index`` finds one by :func:`key`, ``after[i][j]`` is orientation ``i`` followed by the
    physical rotation ``perms[j]`` (``Q_i[Q_j]``), and ``inverse[i]`` undoes ``i``."""

    n: int
    perms: tuple[Perm, ...]
    index: dict[bytes, int]
    after: npt.NDArray[np.intp]
    inverse: tuple[Perm, ...]

    def of(self, perm: Perm) -> int:
        """The orientation index of a rotation permutation (KeyError if it is not one)."""
        return self.index[key(perm)]


@cache
def frames(n: int) -> Frames:
    """The rotation group of an ``n`` cube, generated from quarter turns about R, U, F."""
    size = 6 * n * n
    identity = np.arange(size, dtype=np.intp)
    gens = [rotation(face, 1, n) for face in (Face.R, Face.U, Face.F)]
    perms = [identity]
    index = {key(identity): 0}
    frontier = [identity]
    while frontier:
        grown = []
        for p in frontier:
            for g in gens:
                q = p[g]
                k = key(q)
                if k not in index:
                    index[k] = len(perms)
                    perms.append(q)
                    grown.append(q)
        frontier = grown
    if len(perms) != N_ORIENTATIONS:  # pragma: no cover - geometry is broken
        raise AssertionError(f"{len(perms)} whole-cube rotations, expected {N_ORIENTATIONS}")
    after = np.array([[index[key(p[q])] for q in perms] for p in perms], dtype=np.intp)
    inverse = tuple(np.argsort(p).astype(np.intp) for p in perms)
    for p in (*perms, *inverse):
        p.setflags(write=False)
    return Frames(n, tuple(perms), index, after, inverse)


def notation_effect(frames_: Frames, before: int, action: Perm, after: int) -> Perm:
    """The notation-frame permutation ``M`` of physical action ``action`` taken in orientation
    ``before`` and leaving orientation ``after`` (see the module docstring)."""
    q = frames_.perms[before]
    return q[action][frames_.inverse[after]]


def is_rotation_move(move: Move) -> bool:
    return move.kind is MoveKind.ROTATION


__all__ += ["is_rotation_move", "notation_effect"]
