"""The cube's 3D geometry: where every face and sticker sits in space.

This is the ground truth the facelet model is checked against. Axes: ``+x`` points to R,
``+y`` to U, ``+z`` to F. Each face is looked at from outside the cube; its LTR frame
(seed 000) has ``(0, 0)`` at the LEFT/BOTTOM corner, rows going up, columns going right::

    face  normal  right  up       (what its TOP edge touches)
    U     +y      +x     -z       B
    R     +x      -z     +y       U
    F     +z      +x     +y       U
    D     -y      +x     +z       F
    L     -x      +z     +y       U
    B     -z      -x     +y       U

These are the orientations of the usual unfolded net (U above F, D below F, L F R B in a
row), which is also the reading order of Kociemba's facelet strings.

Sticker centres are given in doubled integer coordinates (so that every N is exact): the cube
spans ``[-N, N]`` on each axis.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np
import numpy.typing as npt

__all__ = [
    "FACE_FRAMES",
    "Face",
    "edge_direction",
    "face_from_normal",
    "rotation_matrix",
    "sticker_positions",
]


class Face(IntEnum):
    """Faces in the project's canonical order; the value is the index in every array."""

    U = 0
    R = 1
    F = 2
    D = 3
    L = 4
    B = 5


Vec = tuple[int, int, int]

#: face -> (normal, right, up), unit integer vectors.
FACE_FRAMES: dict[Face, tuple[Vec, Vec, Vec]] = {
    Face.U: ((0, 1, 0), (1, 0, 0), (0, 0, -1)),
    Face.R: ((1, 0, 0), (0, 0, -1), (0, 1, 0)),
    Face.F: ((0, 0, 1), (1, 0, 0), (0, 1, 0)),
    Face.D: ((0, -1, 0), (1, 0, 0), (0, 0, 1)),
    Face.L: ((-1, 0, 0), (0, 0, 1), (0, 1, 0)),
    Face.B: ((0, 0, -1), (-1, 0, 0), (0, 1, 0)),
}


def face_from_normal(normal: Vec) -> Face:
    """The face whose outward normal is ``normal``."""
    for face, (n, _, _) in FACE_FRAMES.items():
        if n == tuple(normal):
            return face
    raise ValueError(f"{normal} is not a face normal")


def edge_direction(face: Face, edge: str) -> Vec:
    """Unit vector from ``face``'s centre towards its edge ``LEFT|RIGHT|TOP|BOTTOM``."""
    _, right, up = FACE_FRAMES[face]
    sign = {"RIGHT": 1, "LEFT": -1, "TOP": 1, "BOTTOM": -1}[edge]
    axis = right if edge in ("LEFT", "RIGHT") else up
    return (sign * axis[0], sign * axis[1], sign * axis[2])


def sticker_positions(n: int) -> npt.NDArray[np.int64]:
    """Doubled 3D centres of all ``6*n*n`` stickers, shape ``(6, n, n, 3)``, LTR order."""
    pos = np.zeros((6, n, n, 3), dtype=np.int64)
    rows = np.arange(n)[:, None]
    cols = np.arange(n)[None, :]
    for face, (normal, right, up) in FACE_FRAMES.items():
        for k in range(3):
            pos[face, :, :, k] = (
                normal[k] * n + right[k] * (2 * cols - (n - 1)) + up[k] * (2 * rows - (n - 1))
            )
    return pos


def rotation_matrix(axis: Vec, quarter_turns: int) -> npt.NDArray[np.int64]:
    """Integer matrix turning space clockwise by ``quarter_turns`` × 90°, seen from ``+axis``."""
    ax = np.array(axis, dtype=np.int64)
    # Clockwise seen from outside along +axis is a rotation by -90° about axis (right-hand rule).
    k = np.array([[0, -ax[2], ax[1]], [ax[2], 0, -ax[0]], [-ax[1], ax[0], 0]], dtype=np.int64)
    outer = np.outer(ax, ax)
    quarter = outer - k  # Rodrigues with angle -90°: cos=0, sin=-1
    result = np.eye(3, dtype=np.int64)
    for _ in range(quarter_turns % 4):
        result = quarter @ result
    return result
