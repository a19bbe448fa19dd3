"""The cubie level of the 3x3 cube: corner and edge permutation and orientation (seed 001).

Numbering (seed 001, Kociemba's)::

    corners  0 URF  1 UFL  2 ULB  3 UBR  4 DFR  5 DLF  6 DBL  7 DRB
    edges    0 UR   1 UF   2 UL   3 UB   4 DR   5 DF   6 DL   7 DB   8 FR   9 FL  10 BL  11 BR

Convention ("replaced by", as seed 001's *states* after R and F): ``cp[i]`` is the corner that
sits at position ``i``; ``co[i]`` its twist (0 = its U/D sticker on the U/D face, 1 = twisted
clockwise, 2 = anticlockwise); likewise ``ep``/``eo``. Seed 001's ``cp_moves`` tables use the
inverse convention ("where the piece at i goes"); the tests check both against this one.

Doing ``a`` then ``b`` is ``a * b``: ``cp[i] = a.cp[b.cp[i]]``,
``co[i] = a.co[b.cp[i]] + b.co[i] (mod 3)``.

The sticker positions of every cubie are derived from the 3D geometry (a cubie is the set of
stickers sharing a cubie centre), for any N, so the same tables serve validation of big cubes.
Conversions facelets ↔ cubies live here and only here.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from functools import cache, lru_cache

import numpy as np

from solver.cube.facelets import Cube
from solver.cube.geometry import FACE_FRAMES, Face, sticker_positions
from solver.cube.notation import Move, MoveKind, parse
from solver.errors import InvalidCubeError, Problem, UnsupportedError

__all__ = [
    "CORNER_FACES",
    "EDGE_FACES",
    "Corner",
    "CubieCube",
    "CubieLayout",
    "Edge",
    "State",
    "cubie_layout",
    "inverse_state",
    "multiply_states",
    "permutation_parity",
]


class Corner(IntEnum):
    URF = 0
    UFL = 1
    ULB = 2
    UBR = 3
    DFR = 4
    DLF = 5
    DBL = 6
    DRB = 7


class Edge(IntEnum):
    UR = 0
    UF = 1
    UL = 2
    UB = 3
    DR = 4
    DF = 5
    DL = 6
    DB = 7
    FR = 8
    FL = 9
    BL = 10
    BR = 11


#: The faces of each corner slot, U/D sticker first, then clockwise.
CORNER_FACES: tuple[tuple[Face, Face, Face], ...] = tuple(
    (Face[c.name[0]], Face[c.name[1]], Face[c.name[2]]) for c in Corner
)
#: The faces of each edge slot; the first is the reference sticker for orientation.
EDGE_FACES: tuple[tuple[Face, Face], ...] = tuple((Face[e.name[0]], Face[e.name[1]]) for e in Edge)


@dataclass(frozen=True, slots=True)
class CubieLayout:
    """Flat facelet indices of every cubie of an N cube.

    ``corners[i]`` are the 3 stickers of corner slot ``i`` in :data:`CORNER_FACES` order;
    ``edges[i]`` lists the N-2 wings of edge slot ``i``, each a pair in :data:`EDGE_FACES`
    order, from one end of the edge to the other; ``centres[f]`` the (N-2)² centre stickers.
    """

    n: int
    corners: tuple[tuple[int, int, int], ...]
    edges: tuple[tuple[tuple[int, int], ...], ...]
    centres: tuple[tuple[int, ...], ...]


@cache
def cubie_layout(n: int) -> CubieLayout:
    """Group stickers into cubies by their shared 3D cubie centre."""
    if n < 2:
        raise UnsupportedError(f"a cube of size {n} has no cubies to speak of")
    pos = sticker_positions(n).reshape(-1, 3)
    owner = np.repeat(np.array([FACE_FRAMES[f][0] for f in Face]), n * n, axis=0)
    centre = pos - owner
    groups: dict[tuple[int, int, int], list[int]] = {}
    for index, c in enumerate(centre.tolist()):
        groups.setdefault((c[0], c[1], c[2]), []).append(index)
    by_faces: dict[frozenset[Face], list[tuple[tuple[int, int, int], list[int]]]] = {}
    for key, members in groups.items():
        faces = frozenset(Face(i // (n * n)) for i in members)
        by_faces.setdefault(faces, []).append((key, members))

    def sticker_on(members: list[int], face: Face) -> int:
        return next(i for i in members if i // (n * n) == face)

    corners = []
    for faces3 in CORNER_FACES:
        ((_, members),) = by_faces[frozenset(faces3)]
        corners.append(
            (
                sticker_on(members, faces3[0]),
                sticker_on(members, faces3[1]),
                sticker_on(members, faces3[2]),
            )
        )
    edges = []
    for faces2 in EDGE_FACES:
        wings = sorted(by_faces.get(frozenset(faces2), []), key=lambda item: item[0])
        edges.append(tuple((sticker_on(m, faces2[0]), sticker_on(m, faces2[1])) for _, m in wings))
    centres = tuple(tuple(sorted(m[0] for _, m in by_faces.get(frozenset({f}), []))) for f in Face)
    return CubieLayout(n, tuple(corners), tuple(edges), centres)


def permutation_parity(perm: Sequence[int]) -> int:
    """0 for an even permutation, 1 for odd."""
    seen = [False] * len(perm)
    parity = 0
    for start in range(len(perm)):
        if seen[start]:
            continue
        length = 0
        j = start
        while not seen[j]:
            seen[j] = True
            j = perm[j]
            length += 1
        parity ^= (length - 1) & 1
    return parity


#: a state's (cp, co, ep, eo) as plain tuples
State = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def multiply_states(a: State, b: State) -> State:
    """``a * b`` (:meth:`CubieCube.__mul__`) on plain tuples, without a state's checks: where
    states are combined on the way to a robot's first move (a search's directions)."""
    acp, aco, aep, aeo = a
    bcp, bco, bep, beo = b
    return (
        tuple(acp[i] for i in bcp),
        tuple((aco[p] + o) % 3 for p, o in zip(bcp, bco, strict=True)),
        tuple(aep[i] for i in bep),
        tuple((aeo[p] + o) % 2 for p, o in zip(bep, beo, strict=True)),
    )


def inverse_state(a: State) -> State:
    """:meth:`CubieCube.inverse` on plain tuples, without a state's checks."""
    acp, aco, aep, aeo = a
    cp = [0] * 8
    ep = [0] * 12
    for i, p in enumerate(acp):
        cp[p] = i
    for i, p in enumerate(aep):
        ep[p] = i
    return tuple(cp), tuple(-aco[p] % 3 for p in cp), tuple(ep), tuple(aeo[p] for p in ep)


@dataclass(frozen=True, slots=True)
class CubieCube:
    """A 3x3 state as (cp, co, ep, eo) in the replaced-by convention (module docstring)."""

    cp: tuple[int, ...] = tuple(range(8))
    co: tuple[int, ...] = (0,) * 8
    ep: tuple[int, ...] = tuple(range(12))
    eo: tuple[int, ...] = (0,) * 12

    def __post_init__(self) -> None:
        if sorted(self.cp) != list(range(8)) or sorted(self.ep) != list(range(12)):
            raise ValueError("cp must permute 0..7 and ep 0..11")
        if len(self.co) != 8 or len(self.eo) != 12:
            raise ValueError("co has 8 entries and eo 12")
        if any(not 0 <= x < 3 for x in self.co) or any(x not in (0, 1) for x in self.eo):
            raise ValueError("co entries are 0..2 and eo entries 0..1")

    # group operations ----------------------------------------------------------------------
    @property
    def state(self) -> State:
        """``(cp, co, ep, eo)``, for :func:`multiply_states` and :func:`inverse_state`."""
        return (self.cp, self.co, self.ep, self.eo)

    def __mul__(self, other: CubieCube) -> CubieCube:
        return CubieCube(*multiply_states(self.state, other.state))

    def inverse(self) -> CubieCube:
        return CubieCube(*inverse_state(self.state))

    def apply(self, moves: str | Iterable[Move]) -> CubieCube:
        """The state after face turns (U R F D L B with any suffix)."""
        result = self
        for move in parse(moves) if isinstance(moves, str) else moves:
            result = result * _move_cube(move)
        return result

    @classmethod
    def from_moves(cls, moves: str | Iterable[Move]) -> CubieCube:
        """The state a sequence makes from solved, for any 3x3 moves (slices, wide moves and
        rotations are re-expressed with fixed centres, as seed 001 prescribes)."""
        return cls.from_cube(Cube.solved(3).apply(moves))

    # invariants ------------------------------------------------------------------------------
    def corner_parity(self) -> int:
        return permutation_parity(self.cp)

    def edge_parity(self) -> int:
        return permutation_parity(self.ep)

    def is_solvable(self) -> bool:
        return (
            sum(self.co) % 3 == 0
            and sum(self.eo) % 2 == 0
            and self.corner_parity() == self.edge_parity()
        )

    def is_solved(self) -> bool:
        return self == SOLVED

    @classmethod
    def random(cls, rng: random.Random | None = None) -> CubieCube:
        """A uniformly random solvable state."""
        rng = rng or random.Random()
        cp = list(range(8))
        ep = list(range(12))
        rng.shuffle(cp)
        rng.shuffle(ep)
        if permutation_parity(cp) != permutation_parity(ep):
            ep[0], ep[1] = ep[1], ep[0]
        co = [rng.randrange(3) for _ in range(7)]
        co.append((-sum(co)) % 3)
        eo = [rng.randrange(2) for _ in range(11)]
        eo.append(sum(eo) % 2)
        return cls(tuple(cp), tuple(co), tuple(ep), tuple(eo))

    # conversions ---------------------------------------------------------------------------
    def to_cube(self) -> Cube:
        """The 3x3 facelet cube (centres in home position)."""
        layout = cubie_layout(3)
        flat = np.repeat(np.arange(6, dtype=np.uint8), 9)
        for i in range(8):
            piece, twist = self.cp[i], self.co[i]
            for k in range(3):
                flat[layout.corners[i][(k + twist) % 3]] = CORNER_FACES[piece][k]
        for i in range(12):
            piece, flip = self.ep[i], self.eo[i]
            ((a, b),) = layout.edges[i]
            slots = (a, b) if flip == 0 else (b, a)
            flat[slots[0]] = EDGE_FACES[piece][0]
            flat[slots[1]] = EDGE_FACES[piece][1]
        return Cube(flat, 3)

    @classmethod
    def from_cube(cls, cube: Cube) -> CubieCube:
        """Read cubies off a 3x3 cube, colours taken relative to its centres.

        Raises :class:`InvalidCubeError` when the stickers do not form a permutation of real
        pieces (use :func:`solver.cube.validate.validate` for a full report)."""
        if cube.n != 3:
            raise UnsupportedError(f"cubies are defined for 3x3 only, not {cube.n}x{cube.n}")
        centres = cube.centre_colours()
        assert centres is not None
        if len(set(centres)) != 6:
            raise InvalidCubeError(
                [Problem("centre_duplicate", "centres", "two centres have the same colour")]
            )
        face_of = [0] * 6
        for face, colour in enumerate(centres):
            face_of[colour] = face
        flat = [face_of[v] for v in cube.flat.tolist()]
        layout = cubie_layout(3)
        cp, co, ep, eo = [], [], [], []
        problems: list[Problem] = []
        for i, slots in enumerate(layout.corners):
            cols = [flat[s] for s in slots]
            found = _match_corner(cols)
            if found is None:
                problems.append(
                    Problem(
                        "corner_invalid",
                        Corner(i).name,
                        f"corner at {Corner(i).name} is no real piece",
                    )
                )
                continue
            cp.append(found[0])
            co.append(found[1])
        for i, wings in enumerate(layout.edges):
            ((a, b),) = wings
            pair = (flat[a], flat[b])
            found_e = _match_edge(pair)
            if found_e is None:
                problems.append(
                    Problem(
                        "edge_invalid", Edge(i).name, f"edge at {Edge(i).name} is no real piece"
                    )
                )
                continue
            ep.append(found_e[0])
            eo.append(found_e[1])
        if problems:
            raise InvalidCubeError(problems)
        if sorted(cp) != list(range(8)) or sorted(ep) != list(range(12)):
            raise InvalidCubeError([Problem("duplicate", "pieces", "a piece appears twice")])
        return cls(tuple(cp), tuple(co), tuple(ep), tuple(eo))

    def to_facelets(self) -> str:
        return self.to_cube().to_facelets()

    @classmethod
    def from_facelets(cls, text: str) -> CubieCube:
        return cls.from_cube(Cube.from_facelets(text, 3))


def _match_corner(cols: Sequence[int]) -> tuple[int, int] | None:
    """(piece, twist) for three face colours read in slot order, or None if no such piece."""
    for twist in range(3):
        if cols[twist] in (Face.U, Face.D):
            a, b = cols[(twist + 1) % 3], cols[(twist + 2) % 3]
            for j, faces in enumerate(CORNER_FACES):
                if faces[0] == cols[twist] and faces[1] == a and faces[2] == b:
                    # The U/D sticker sits at slot sticker ``twist``; the piece is twisted by
                    # the number of clockwise steps that brings it home.
                    return j, twist
    return None


def _match_edge(pair: tuple[int, int]) -> tuple[int, int] | None:
    for j, faces in enumerate(EDGE_FACES):
        if pair == (faces[0], faces[1]):
            return j, 0
        if pair == (faces[1], faces[0]):
            return j, 1
    return None


SOLVED = CubieCube()


@lru_cache(maxsize=64)
def _move_cube(move: Move) -> CubieCube:
    if move.kind is not MoveKind.OUTER:
        raise UnsupportedError(
            f"{move} moves centres; use CubieCube.from_moves to re-express it with fixed centres"
        )
    return CubieCube.from_cube(Cube.solved(3).apply([move]))
