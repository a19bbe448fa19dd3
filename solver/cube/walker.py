"""Seed 000's slice walker: the cells a slice visits on the four faces around a turning face.

Inputs: ``N``, a starting face, the face to rotate with, a slice index ``SI`` (0 = the slice
touching the rotating face, ``N-1`` the farthest) and an edge connection map
(``F.RIGHT -> R.LEFT`` and so on). Output, per face on the path: the enter point, the walking
direction, the ``N`` visited cells, the exit edge and ``P`` (the position along the exit edge).

The walk follows seed 000's tables literally:

* Table 2 picks the start point and direction on the starting face from
  (my edge, rotating face's edge).
* Table 3 walks ``N`` cells and gives the exit edge and ``P``.
* Table 1 crosses to the next face from (exit edge, enter edge).

One extension, needed for real geometry: seed 000's Table 1 assumes the two edges of a crossing
count their positions the same way round. On a real cube seen from outside some do not (U's TOP
edge runs L→R, B's TOP edge, seen from behind, runs R→L). A connection in the map may therefore
be marked ``reversed``, and the walker then enters at ``N-1-P`` instead of ``P``. The worked
example of seed 000 uses a map with no reversed connections (its B face is drawn mirrored, as
seen through the cube), and reproduces cell for cell; :func:`standard_edge_map` derives the
physically correct map of a cube seen from outside, which is what the move tables use.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from solver.cube.geometry import FACE_FRAMES, Face, edge_direction, face_from_normal

__all__ = [
    "Direction",
    "Edge",
    "EdgeConnectionMap",
    "FaceOutput",
    "FaceWalk",
    "SliceWalker",
    "standard_edge_map",
    "walk",
]


class Edge(StrEnum):
    LEFT = "LEFT"
    RIGHT = "RIGHT"
    TOP = "TOP"
    BOTTOM = "BOTTOM"


class Direction(StrEnum):
    LEFT_TO_RIGHT = "LEFT→RIGHT"
    RIGHT_TO_LEFT = "RIGHT→LEFT"
    BOTTOM_TO_TOP = "BOTTOM→TOP"
    TOP_TO_BOTTOM = "TOP→BOTTOM"

    @property
    def exit_edge(self) -> Edge:
        return _EXIT_EDGE[self]


_EXIT_EDGE = {
    Direction.LEFT_TO_RIGHT: Edge.RIGHT,
    Direction.RIGHT_TO_LEFT: Edge.LEFT,
    Direction.BOTTOM_TO_TOP: Edge.TOP,
    Direction.TOP_TO_BOTTOM: Edge.BOTTOM,
}

#: Table 1 (by enter edge; the exit edge does not change the outcome): where the walk enters,
#: as (row, col) with "P" standing for the crossing position, and the new direction.
_TABLE1: dict[Edge, tuple[str, str, Direction]] = {
    Edge.LEFT: ("P", "0", Direction.LEFT_TO_RIGHT),
    Edge.RIGHT: ("P", "N-1", Direction.RIGHT_TO_LEFT),
    Edge.BOTTOM: ("0", "P", Direction.BOTTOM_TO_TOP),
    Edge.TOP: ("N-1", "P", Direction.TOP_TO_BOTTOM),
}

#: Table 2: (my edge, rotating edge) -> direction on the starting face. The start point depends
#: on my edge only (see ``_start_fixed``).
_TABLE2: dict[tuple[Edge, Edge], Direction] = {
    (Edge.RIGHT, Edge.LEFT): Direction.BOTTOM_TO_TOP,
    (Edge.RIGHT, Edge.RIGHT): Direction.TOP_TO_BOTTOM,
    (Edge.RIGHT, Edge.TOP): Direction.TOP_TO_BOTTOM,
    (Edge.RIGHT, Edge.BOTTOM): Direction.BOTTOM_TO_TOP,
    (Edge.LEFT, Edge.LEFT): Direction.BOTTOM_TO_TOP,
    (Edge.LEFT, Edge.RIGHT): Direction.TOP_TO_BOTTOM,
    (Edge.LEFT, Edge.TOP): Direction.TOP_TO_BOTTOM,
    (Edge.LEFT, Edge.BOTTOM): Direction.BOTTOM_TO_TOP,
    (Edge.TOP, Edge.LEFT): Direction.LEFT_TO_RIGHT,
    (Edge.TOP, Edge.RIGHT): Direction.RIGHT_TO_LEFT,
    (Edge.TOP, Edge.TOP): Direction.LEFT_TO_RIGHT,
    (Edge.TOP, Edge.BOTTOM): Direction.RIGHT_TO_LEFT,
    (Edge.BOTTOM, Edge.LEFT): Direction.RIGHT_TO_LEFT,
    (Edge.BOTTOM, Edge.RIGHT): Direction.LEFT_TO_RIGHT,
    (Edge.BOTTOM, Edge.TOP): Direction.RIGHT_TO_LEFT,
    (Edge.BOTTOM, Edge.BOTTOM): Direction.LEFT_TO_RIGHT,
}


@dataclass(frozen=True, slots=True)
class _Link:
    face: Face
    edge: Edge
    reversed: bool


class EdgeConnectionMap:
    """Which edge of each face touches which edge of which other face (symmetric)."""

    def __init__(self) -> None:
        self._links: dict[tuple[Face, Edge], _Link] = {}

    def connect(self, a: Face, ea: Edge, b: Face, eb: Edge, *, reversed: bool = False) -> None:
        """Declare that ``a.ea`` touches ``b.eb`` (and so ``b.eb`` touches ``a.ea``)."""
        for key, link in (((a, ea), _Link(b, eb, reversed)), ((b, eb), _Link(a, ea, reversed))):
            old = self._links.get(key)
            if old is not None and old != link:
                raise ValueError(
                    f"{key[0].name}.{key[1].value} already connects to "
                    f"{old.face.name}.{old.edge.value}"
                )
            self._links[key] = link

    @classmethod
    def parse(cls, lines: Iterable[str]) -> EdgeConnectionMap:
        """Build a map from lines like ``F.RIGHT -> R.LEFT`` (``→`` also accepted; a trailing
        ``reversed`` marks a connection whose positions run opposite ways)."""
        pattern = re.compile(
            r"^\s*([URFDLB])\.(LEFT|RIGHT|TOP|BOTTOM)\s*(?:->|→)\s*"
            r"([URFDLB])\.(LEFT|RIGHT|TOP|BOTTOM)\s*(reversed)?\s*$"
        )
        result = cls()
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            match = pattern.match(line)
            if match is None:
                raise ValueError(f"edge map line {number}: cannot read {line!r}")
            a, ea, b, eb, rev = match.groups()
            result.connect(Face[a], Edge(ea), Face[b], Edge(eb), reversed=rev is not None)
        return result

    def neighbour(self, face: Face, edge: Edge) -> tuple[Face, Edge, bool]:
        """The face and edge across ``face.edge`` and whether positions run reversed."""
        try:
            link = self._links[(face, edge)]
        except KeyError:
            raise ValueError(f"edge map has no connection for {face.name}.{edge.value}") from None
        return link.face, link.edge, link.reversed

    def edge_towards(self, face: Face, other: Face) -> Edge:
        """The edge of ``face`` that touches ``other``."""
        for (f, e), link in self._links.items():
            if f == face and link.face == other:
                return e
        raise ValueError(f"edge map: {face.name} does not touch {other.name}")

    def items(self) -> Mapping[tuple[Face, Edge], tuple[Face, Edge, bool]]:
        return {k: (v.face, v.edge, v.reversed) for k, v in self._links.items()}


def standard_edge_map() -> EdgeConnectionMap:
    """The edge map of a real cube, every face seen from outside in the usual net orientation
    (see :mod:`solver.cube.geometry`), derived from 3D geometry rather than typed in."""
    result = EdgeConnectionMap()
    for face in Face:
        for edge in Edge:
            other = face_from_normal(edge_direction(face, edge.value))
            normal = FACE_FRAMES[face][0]
            other_edge = next(e for e in Edge if edge_direction(other, e.value) == normal)
            # Positions along LEFT/RIGHT edges count rows (along "up"), along TOP/BOTTOM edges
            # columns (along "right"): compare the two counting directions in space.
            run_a = _run_vector(face, edge)
            run_b = _run_vector(other, other_edge)
            if (face, edge) not in result._links:
                result.connect(face, edge, other, other_edge, reversed=run_a != run_b)
    return result


def _run_vector(face: Face, edge: Edge) -> tuple[int, int, int]:
    _, right, up = FACE_FRAMES[face]
    return up if edge in (Edge.LEFT, Edge.RIGHT) else right


@dataclass(frozen=True, slots=True)
class FaceWalk:
    """The walk over one face for one slice index."""

    face: Face
    enter: tuple[int, int]
    direction: Direction
    visited: tuple[tuple[int, int], ...]
    exit_edge: Edge
    p: int


@dataclass(frozen=True, slots=True)
class FaceOutput:
    """Seed 000's variant 2: one face of the rotation path, for every slice index at once.

    The coordinate held fixed along the walk is ``fixed_offset + fixed_sign * si``.
    """

    face: Face
    n: int
    direction: Direction
    my_edge: Edge
    rotating_edge: Edge
    enter_edge: Edge | None
    exit_edge: Edge
    face_index: int
    fixed_offset: int
    fixed_sign: int

    def get_point(self, si: int, other_coord: int) -> tuple[int, int]:
        """(row, col) of the cell at position ``other_coord`` (0 = entry, N-1 = exit)."""
        n = self.n
        if not 0 <= si < n or not 0 <= other_coord < n:
            raise ValueError(f"si and other_coord must be in 0..{n - 1}, got {si}, {other_coord}")
        fixed = self.fixed_offset + self.fixed_sign * si
        match self.direction:
            case Direction.LEFT_TO_RIGHT:
                return fixed, other_coord
            case Direction.RIGHT_TO_LEFT:
                return fixed, n - 1 - other_coord
            case Direction.BOTTOM_TO_TOP:
                return other_coord, fixed
            case Direction.TOP_TO_BOTTOM:
                return n - 1 - other_coord, fixed
        raise AssertionError(self.direction)

    def get_all_points(self, si: int) -> list[tuple[int, int]]:
        return [self.get_point(si, oc) for oc in range(self.n)]

    def walk(self, si: int) -> FaceWalk:
        points = tuple(self.get_all_points(si))
        return FaceWalk(
            face=self.face,
            enter=points[0],
            direction=self.direction,
            visited=points,
            exit_edge=self.exit_edge,
            p=self.fixed_offset + self.fixed_sign * si,
        )


class SliceWalker:
    """Seed 000's walker for one ``N`` and one edge connection map."""

    def __init__(self, n: int, edge_map: EdgeConnectionMap | None = None) -> None:
        if n < 1:
            raise ValueError(f"N must be at least 1, got {n}")
        self.n = n
        self.edge_map = edge_map if edge_map is not None else standard_edge_map()

    def calculate_rotation(self, starting_face: Face, rotate_with: Face) -> list[FaceOutput]:
        """The four faces around ``rotate_with``, walked from ``starting_face``."""
        n = self.n
        emap = self.edge_map
        my_edge = emap.edge_towards(starting_face, rotate_with)
        rotating_edge = emap.edge_towards(rotate_with, starting_face)
        direction = _TABLE2[(my_edge, rotating_edge)]
        # Start point (Table 2): the fixed coordinate is (N-1)-SI next to a RIGHT/TOP edge,
        # SI next to a LEFT/BOTTOM edge.
        offset, sign = (n - 1, -1) if my_edge in (Edge.RIGHT, Edge.TOP) else (0, 1)
        outputs: list[FaceOutput] = []
        face = starting_face
        enter_edge: Edge | None = None
        for index in range(4):
            exit_edge = direction.exit_edge
            outputs.append(
                FaceOutput(
                    face=face,
                    n=n,
                    direction=direction,
                    my_edge=emap.edge_towards(face, rotate_with),
                    rotating_edge=emap.edge_towards(rotate_with, face),
                    enter_edge=enter_edge,
                    exit_edge=exit_edge,
                    face_index=index,
                    fixed_offset=offset,
                    fixed_sign=sign,
                )
            )
            # Table 1: cross to the next face; P is the fixed coordinate.
            face, enter_edge, reversed_run = emap.neighbour(face, exit_edge)
            if reversed_run:
                offset, sign = n - 1 - offset, -sign
            direction = _TABLE1[enter_edge][2]
        if face != starting_face:
            raise ValueError(
                f"the walk around {rotate_with.name} from {starting_face.name} did not return to "
                f"its start (ended on {face.name}); the edge map is inconsistent"
            )
        return outputs


def walk(
    n: int,
    starting_face: Face,
    rotate_with: Face,
    si: int,
    edge_map: EdgeConnectionMap | None = None,
) -> list[FaceWalk]:
    """Seed 000's first variant: the full walk for one slice index."""
    if not 0 <= si < n:
        raise ValueError(f"SI must be in 0..{n - 1}, got {si}")
    return [
        f.walk(si) for f in SliceWalker(n, edge_map).calculate_rotation(starting_face, rotate_with)
    ]
