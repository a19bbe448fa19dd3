"""Orbit-level validation of big cubes (N ≥ 4), and the orbits themselves.

Moves never carry a piece out of its orbit, so a real cube satisfies, orbit by orbit:

* **centres**: the centre stickers at LTR ``(r, c)`` and its three rotations on every face form
  one orbit of 24 pieces (for odd N the middle sticker of each face is alone); a real cube has
  exactly four of each colour in every orbit (:func:`centre_orbits`);
* **wings**: orbit ``j`` holds the wings at positions ``j`` and ``N-1-j`` of the twelve edges.
  A wing has one handedness: of its two stickers, the "primary" one is the one whose face
  normal ``a``, the other sticker's face normal ``b`` and the cubie centre ``p`` give
  ``det(a, b, p) > 0``; a turn is a rotation and keeps determinants, so the colours on
  (primary, secondary) name the piece, and each of the 24 pieces is there exactly once. A
  wing showing the colours of its own mirror image is named as such (:func:`orbit_wings`);
* **midges** (odd N): with the corners and the middle centres they form a real 3x3 (edges
  real and once each, flips even, corner and edge permutations of equal parity).

Corner checks (real, untwisted in sum) and colour counts are in :mod:`solver.cube.validate`,
which calls :func:`orbit_problems` for N ≥ 4.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import cache

import numpy as np
import numpy.typing as npt

from solver.cube.cubie import CORNER_FACES, EDGE_FACES, Edge, cubie_layout, permutation_parity
from solver.cube.facelets import Cube
from solver.cube.geometry import FACE_FRAMES, Face, sticker_positions
from solver.errors import Problem

__all__ = ["centre_orbits", "orbit_problems", "orbit_wings"]

IntArray = npt.NDArray[np.int64]


@cache
def orbit_wings(n: int, j: int) -> tuple[IntArray, IntArray]:
    """(primary, secondary) sticker of the 24 wing slots of orbit ``j`` (1 ≤ j ≤ (N-2)/2);
    slot ``2 * edge + side``, side 0 at position ``j`` along the edge, side 1 at ``N-1-j``."""
    if not 1 <= j <= (n - 2) // 2:
        raise ValueError(f"an N={n} cube has wing orbits 1..{(n - 2) // 2}, not {j}")
    layout = cubie_layout(n)
    pos = sticker_positions(n).reshape(-1, 3)
    normals = np.repeat(np.array([FACE_FRAMES[f][0] for f in Face]), n * n, axis=0)
    prim: list[int] = []
    sec: list[int] = []
    for wings in layout.edges:
        for a, b in (wings[j - 1], wings[n - 2 - j]):
            centre = pos[a] - normals[a]
            det = round(float(np.linalg.det(np.array([normals[a], normals[b], centre]))))
            prim.append(a if det > 0 else b)
            sec.append(b if det > 0 else a)
    return np.array(prim, dtype=np.int64), np.array(sec, dtype=np.int64)


@cache
def centre_orbits(n: int) -> dict[tuple[int, int], IntArray]:
    """Flat indices of each centre orbit, keyed by its smallest LTR ``(row, col)``."""
    orbits: dict[tuple[int, int], list[int]] = {}
    for r in range(1, n - 1):
        for c in range(1, n - 1):
            turns = [(r, c), (n - 1 - c, r), (n - 1 - r, n - 1 - c), (c, n - 1 - r)]
            key = min(turns)
            for face in range(6):
                orbits.setdefault(key, []).append(face * n * n + r * n + c)
    return {k: np.array(sorted(v), dtype=np.int64) for k, v in sorted(orbits.items())}


def _place(n: int, index: int) -> str:
    face, rest = divmod(index, n * n)
    return f"{Face(face).name}({rest // n},{rest % n})"


def _centre_problems(flat: Sequence[int], n: int, names: Sequence[str]) -> list[Problem]:
    problems = []
    for key, cells in centre_orbits(n).items():
        if cells.size < 24:
            continue  # odd N: the fixed middle centres (checked as centres)
        counts = Counter(flat[int(i)] for i in cells)
        wrong = {c: counts.get(c, 0) for c in range(6) if counts.get(c, 0) != 4}
        if wrong:
            detail = ", ".join(f"{names[c]} {k}×" for c, k in wrong.items())
            problems.append(
                Problem(
                    "centre_orbit",
                    f"centres{key}",
                    f"centre orbit {key} (the LTR cell {key} and its turns on every face) holds "
                    f"{detail}; each colour must be there 4 times",
                )
            )
    return problems


def _wing_problems(
    flat: Sequence[int], n: int, face_of: Sequence[int], names: Sequence[str]
) -> list[Problem]:
    problems = []
    for j in range(1, (n - 2) // 2 + 1):
        prim, sec = orbit_wings(n, j)
        home = {
            (int(p) // (n * n), int(s) // (n * n)): k
            for k, (p, s) in enumerate(zip(prim, sec, strict=True))
        }
        seen: dict[int, list[str]] = {}
        for slot, (p, s) in enumerate(zip(prim, sec, strict=True)):
            key = (face_of[flat[int(p)]], face_of[flat[int(s)]])
            place = f"{Edge(slot // 2).name}#{j if slot % 2 == 0 else n - 1 - j}"
            if key in home:
                seen.setdefault(home[key], []).append(place)
        for piece, places in seen.items():
            if len(places) < 2:
                continue
            mirror = piece ^ 1
            colours = "/".join(names[_colour(face_of, f)] for f in EDGE_FACES[piece // 2])
            code = "wing_mirrored" if mirror not in seen else "wing_duplicate"
            problems.append(
                Problem(
                    code,
                    ",".join(places),
                    f"wing orbit {j}: the {colours} wing of one handedness is at "
                    f"{' and '.join(places)}"
                    + (
                        "; its mirror image is missing: a wing is flipped in place"
                        if code == "wing_mirrored"
                        else ""
                    ),
                )
            )
    return problems


def _colour(face_of: Sequence[int], face: int) -> int:
    return list(face_of).index(face)


def _midge_problems(flat: Sequence[int], n: int, face_of: Sequence[int]) -> list[Problem]:
    layout = cubie_layout(n)
    mid = (n - 2) // 2
    ep: list[int] = []
    flips = 0
    for wings in layout.edges:
        a, b = wings[mid]
        faces = (face_of[flat[a]], face_of[flat[b]])
        for piece, home in enumerate(EDGE_FACES):
            if faces == tuple(home) or faces == (home[1], home[0]):
                ep.append(piece)
                flips += faces != tuple(home)
    if len(set(ep)) != 12:
        return []  # colour pairs are reported by the wing checks of solver.cube.validate
    cp = []
    for stickers in layout.corners:
        faces3 = frozenset(face_of[flat[i]] for i in stickers)
        cp += [p for p, home3 in enumerate(CORNER_FACES) if frozenset(home3) == faces3]
    problems = []
    if flips % 2:
        problems.append(
            Problem("midge_flip", "midges", "a middle edge is flipped (flip sum is odd)")
        )
    if len(set(cp)) == 8 and permutation_parity(cp) != permutation_parity(ep):
        problems.append(
            Problem(
                "midge_parity",
                "midges",
                "two middle edges (or two corners) are swapped: the corner and middle-edge "
                "permutation parities differ",
            )
        )
    return problems


def orbit_problems(
    cube: Cube,
    face_of: Sequence[int],
    names: Sequence[str],
    *,
    centres: bool = True,
    wings: bool = True,
) -> list[Problem]:
    """Orbit-level problems of an N ≥ 4 cube (``face_of[colour]`` is that colour's face);
    ``centres``/``wings`` False skip checks that earlier faults make meaningless."""
    n = cube.n
    if n < 4:
        return []
    flat = cube.flat.tolist()
    problems = _centre_problems(flat, n, names) if centres else []
    if wings:
        problems += _wing_problems(flat, n, face_of, names)
        if n % 2:
            problems += _midge_problems(flat, n, face_of)
    return problems
