"""The facelet level: a cube of any size N as 6×N×N colour indices.

Layout (drawn once here; every other module follows it)::

    faces in U R F D L B order (index 0..5, :class:`~solver.cube.geometry.Face`)
    each face in seed 000's LTR frame, seen from outside:

        row N-1  (N-1,0) ... (N-1,N-1)        TOP edge
          ...                                 (for U the TOP edge touches B,
        row 0    (0,0)   ...   (0,N-1)         for D it touches F, for the
                 col 0   ...   col N-1         four side faces it touches U)

    flat index = face*N*N + row*N + col

A sticker's value is a colour index ``c`` in 0..5, meaning "the colour that face ``c`` has in the
colour scheme", so the solved cube has ``stickers[f] == f`` everywhere.

Kociemba's facelet strings (and their N×N generalisation) list the faces U R F D L B, each row
by row from its top-left corner as the face lies on the usual unfolded net: position ``k`` of a
face is LTR ``(row, col) = (N-1-k//N, k%N)``.

Every move of every N (outer, wide, slice, range, M/E/S, x/y/z) is a permutation of flat indices,
derived once from seed 000's slice walker (:mod:`solver.cube.walker`) plus the turning face's own
rotation, and cached; applying a move is a single numpy ``take``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np
import numpy.typing as npt

from solver.cube.geometry import FACE_FRAMES, Face, rotation_matrix, sticker_positions
from solver.cube.notation import Move, MoveKind, parse
from solver.cube.walker import SliceWalker
from solver.errors import FaceletFormatError

__all__ = [
    "DEFAULT_SCHEME",
    "SCHEMES",
    "ColourScheme",
    "Cube",
    "Perm",
    "compose",
    "facelet_order",
    "layer_permutation",
    "move_permutation",
    "sequence_permutation",
]

Perm = npt.NDArray[np.intp]
MAX_N = 128  # the big-cube engine is benchmarked up to N = 101

#: The first face of each rotation path (any of the four neighbours works; these follow seed 000).
_PATH_START = {
    Face.U: Face.F,
    Face.D: Face.F,
    Face.R: Face.F,
    Face.L: Face.F,
    Face.F: Face.U,
    Face.B: Face.U,
}


@dataclass(frozen=True, slots=True)
class ColourScheme:
    """Which colour each face has on the solved cube, with display RGB."""

    name: str
    colours: tuple[str, str, str, str, str, str]  # in U R F D L B order

    def colour_of(self, face: Face) -> str:
        return self.colours[face]

    def face_of(self, colour: str) -> Face:
        try:
            return Face(self.colours.index(colour.lower()))
        except ValueError:
            raise ValueError(f"colour {colour!r} is not in scheme {self.name}") from None


#: Display RGB of the colour names used by the schemes.
COLOUR_RGB: dict[str, tuple[int, int, int]] = {
    "white": (255, 255, 255),
    "yellow": (255, 213, 0),
    "green": (0, 155, 72),
    "blue": (0, 70, 173),
    "red": (183, 18, 52),
    "orange": (255, 88, 0),
}

SCHEMES: dict[str, ColourScheme] = {
    "white-green": ColourScheme(
        "white-green", ("white", "red", "green", "yellow", "orange", "blue")
    ),
    "white-red": ColourScheme("white-red", ("white", "blue", "red", "yellow", "green", "orange")),
}
DEFAULT_SCHEME = SCHEMES["white-green"]


def facelet_order(n: int) -> Perm:
    """Flat LTR index of each position of an N×N facelet string (Kociemba's reading order)."""
    k = np.arange(n * n)
    within = (n - 1 - k // n) * n + k % n
    return (np.arange(6)[:, None] * n * n + within[None, :]).reshape(-1).astype(np.intp)


@cache
def _ring(n: int, face: Face, layer: int) -> tuple[Perm, int]:
    """Flat indices of the 4N cells a layer visits, in walk order, and the shift (±N) that a
    clockwise quarter turn of ``face`` moves stickers along that order."""
    outputs = SliceWalker(n).calculate_rotation(_PATH_START[face], face)
    cells = [
        int(out.face) * n * n + r * n + c
        for out in outputs
        for (r, c) in out.get_all_points(layer - 1)
    ]
    ring = np.array(cells, dtype=np.intp)
    # The walk's order is seed 000's; which way a clockwise turn carries stickers along it is
    # read off the 3D geometry (the seed's tables do not fix it: for R it is along the path,
    # for U against it).
    pos = sticker_positions(n).reshape(-1, 3)
    turned = rotation_matrix(FACE_FRAMES[face][0], 1) @ pos[ring[0]]
    if np.array_equal(turned, pos[ring[n % len(ring)]]):
        shift = n
    elif np.array_equal(turned, pos[ring[-n]]):
        shift = -n
    else:  # pragma: no cover - the walker and the geometry disagree
        raise AssertionError(f"slice walk of {face.name} layer {layer} is not a ring")
    return ring, shift


@cache
def layer_permutation(n: int, face: Face, layer: int) -> Perm:
    """Permutation of one clockwise quarter turn of layer ``layer`` (1-based) seen from ``face``.

    Convention: ``new = old[perm]`` (``perm[i]`` is where the sticker now at ``i`` came from).
    """
    if not 1 <= layer <= n:
        raise ValueError(f"layer {layer} does not exist on an N={n} cube")
    perm = np.arange(6 * n * n, dtype=np.intp)
    ring, shift = _ring(n, face, layer)
    perm[np.roll(ring, -shift)] = ring  # ring[i] moves to ring[i + shift]
    rows, cols = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    if layer == 1:  # the face itself turns clockwise: (r, c) -> (N-1-c, r)
        base = int(face) * n * n
        perm[base + (n - 1 - cols) * n + rows] = base + rows * n + cols
    if layer == n:  # the opposite face turns anticlockwise as seen from itself
        base = int(_opposite(face)) * n * n
        perm[base + cols * n + (n - 1 - rows)] = base + rows * n + cols
    perm.setflags(write=False)
    return perm


def _opposite(face: Face) -> Face:
    return Face((face + 3) % 6)


def compose(first: Perm, second: Perm) -> Perm:
    """The permutation of doing ``first`` then ``second``."""
    return first[second]


@lru_cache(maxsize=4096)
def move_permutation(move: Move, n: int) -> Perm:
    """Permutation of one move on an ``n`` cube (cached per move and size)."""
    lo, hi = move.layers(n)
    quarter = np.arange(6 * n * n, dtype=np.intp)
    for layer in range(lo, hi + 1):
        quarter = compose(quarter, layer_permutation(n, move.face, layer))
    result = np.arange(6 * n * n, dtype=np.intp)
    for _ in range(move.quarter_turns):
        result = compose(result, quarter)
    result.setflags(write=False)
    return result


def sequence_permutation(moves: Iterable[Move], n: int) -> Perm:
    """Permutation of a whole sequence."""
    result = np.arange(6 * n * n, dtype=np.intp)
    for move in moves:
        result = compose(result, move_permutation(move, n))
    return result


def _as_moves(moves: str | Iterable[Move]) -> list[Move]:
    return parse(moves) if isinstance(moves, str) else list(moves)


class Cube:
    """An N×N×N cube as colour indices (immutable; moves return new cubes)."""

    __slots__ = ("_flat", "n")

    def __init__(self, stickers: npt.ArrayLike, n: int | None = None) -> None:
        flat = np.asarray(stickers, dtype=np.uint8).reshape(-1)
        size = n if n is not None else _size_from_count(flat.size)
        if flat.size != 6 * size * size:
            raise FaceletFormatError(
                f"a cube of size {size} has {6 * size * size} stickers, got {flat.size}"
            )
        if flat.size and int(flat.max()) > 5:
            raise FaceletFormatError("sticker colour indices must be 0..5")
        flat = flat.copy()
        flat.setflags(write=False)
        self._flat: npt.NDArray[np.uint8] = flat
        self.n: int = size

    # construction -----------------------------------------------------------------------
    @classmethod
    def solved(cls, n: int = 3) -> Cube:
        if not 1 <= n <= MAX_N:
            raise ValueError(f"cube size must be 1..{MAX_N}, got {n}")
        return cls(np.repeat(np.arange(6, dtype=np.uint8), n * n), n)

    @classmethod
    def from_facelets(cls, text: str, n: int | None = None) -> Cube:
        """Read a facelet string (letters U R F D L B, Kociemba order, any N)."""
        text = text.strip()
        size = n if n is not None else _size_from_count(len(text))
        if len(text) != 6 * size * size:
            raise FaceletFormatError(
                f"a {size}x{size} facelet string has {6 * size * size} letters, got {len(text)}"
            )
        lookup = np.full(256, 255, dtype=np.uint8)
        for face in Face:
            lookup[ord(face.name)] = face
        raw = np.frombuffer(text.encode("ascii", errors="replace"), dtype=np.uint8)
        values = lookup[raw]
        bad = np.flatnonzero(values == 255)
        if bad.size:
            i = int(bad[0])
            raise FaceletFormatError(
                f"facelet {i + 1} is {text[i]!r}; facelet strings use only the letters URFDLB"
            )
        flat = np.empty_like(values)
        flat[facelet_order(size)] = values
        return cls(flat, size)

    # views --------------------------------------------------------------------------------
    @property
    def flat(self) -> npt.NDArray[np.uint8]:
        """Read-only flat view (LTR order)."""
        return self._flat

    @property
    def stickers(self) -> npt.NDArray[np.uint8]:
        """Read-only ``(6, N, N)`` view (LTR)."""
        return self._flat.reshape(6, self.n, self.n)

    def centre_colours(self) -> list[int] | None:
        """For odd N, the colour of each face's centre sticker; ``None`` for even N."""
        if self.n % 2 == 0:
            return None
        mid = self.n // 2
        return [int(self.stickers[f, mid, mid]) for f in range(6)]

    def to_facelets(self, by: str = "auto") -> str:
        """The facelet string. Letters name the face whose colour the sticker has: by the
        centres for odd N (``by="centres"``), by the colour scheme for even N (``"scheme"``)."""
        mode = ("centres" if self.n % 2 else "scheme") if by == "auto" else by
        letters = np.array([ord(f.name) for f in Face], dtype=np.uint8)
        if mode == "centres":
            centres = self.centre_colours()
            if centres is None:
                raise ValueError("an even cube has no fixed centres; use by='scheme'")
            if len(set(centres)) == 6:
                relabel = np.zeros(6, dtype=np.uint8)
                for face, colour in enumerate(centres):
                    relabel[colour] = ord(Face(face).name)
                letters = relabel
        elif mode != "scheme":
            raise ValueError(f"by must be 'auto', 'centres' or 'scheme', not {by!r}")
        return letters[self._flat[facelet_order(self.n)]].tobytes().decode("ascii")

    # moves ---------------------------------------------------------------------------------
    def apply(self, moves: str | Iterable[Move]) -> Cube:
        """The cube after a sequence (a notation string or parsed moves)."""
        perm = sequence_permutation(_as_moves(moves), self.n)
        return Cube(self._flat[perm], self.n)

    def is_solved(self) -> bool:
        """Every face shows a single colour (in any orientation of the whole cube)."""
        faces = self.stickers.reshape(6, -1)
        return bool(np.all(faces == faces[:, :1]))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Cube)
            and other.n == self.n
            and bool(np.array_equal(other._flat, self._flat))
        )

    def __hash__(self) -> int:
        return hash((self.n, self._flat.tobytes()))

    def __repr__(self) -> str:
        text = self.to_facelets("scheme")
        return f"Cube(n={self.n}, {text[:54]}{'…' if len(text) > 54 else ''})"


def _size_from_count(count: int) -> int:
    size = math.isqrt(count // 6)
    if size < 1 or 6 * size * size != count:
        raise FaceletFormatError(
            f"{count} stickers is not 6·N² for any N (54 for 3x3, 96 for 4x4, ...)"
        )
    return size


def net(cube: Cube, *, ansi: bool = False, scheme: ColourScheme = DEFAULT_SCHEME) -> str:
    """The unfolded net (U above F, L F R B in a row, D below), as letters or ANSI colour."""
    text_rows = _net_rows(cube)

    def cell(value: int) -> str:
        letter = Face(value).name
        if not ansi:
            return letter
        r, g, b = COLOUR_RGB[scheme.colours[value]]
        fg = "30" if r + g + b > 400 else "97"
        return f"\x1b[48;2;{r};{g};{b}m\x1b[{fg}m {letter} \x1b[0m"

    blank = "   " if ansi else " "
    sep = "" if ansi else " "
    lines: list[str] = []
    for row in text_rows:
        cells = [blank if v < 0 else cell(v) for v in row]
        lines.append(sep.join(cells).rstrip())
    return "\n".join(lines)


def _net_rows(cube: Cube) -> list[list[int]]:
    n = cube.n
    grid = [[-1] * (4 * n) for _ in range(3 * n)]
    place = {
        Face.U: (0, n),
        Face.L: (n, 0),
        Face.F: (n, n),
        Face.R: (n, 2 * n),
        Face.B: (n, 3 * n),
        Face.D: (2 * n, n),
    }
    st = cube.stickers
    for face, (top, left) in place.items():
        for k in range(n):  # k = row on the net from the top
            for c in range(n):
                grid[top + k][left + c] = int(st[face, n - 1 - k, c])
    return grid


#: The 24 orientations of a whole cube, as rotation sequences (the identity first): one of six
#: faces brought up (none, x, x2, x', z, z'), then one of four turns about the vertical (y).
ORIENTATIONS: tuple[str, ...] = tuple(
    f"{pre} {post}".strip()
    for pre in ("", "x", "x2", "x'", "z", "z'")
    for post in ("", "y", "y2", "y'")
)


def cubes_equal_up_to_rotation(a: Cube, b: Cube) -> bool:
    """Whether two cubes are the same state held differently (one of the 24 orientations)."""
    if a.n != b.n:
        return False
    return any(a.apply(rot) == b for rot in ORIENTATIONS)


@lru_cache(maxsize=1)
def legal_centre_arrangements() -> tuple[tuple[int, ...], ...]:
    """The 24 ways the six centre colours can sit (``arr[face] = colour``), in the order of
    :data:`ORIENTATIONS`."""
    found: list[tuple[int, ...]] = []
    for rotation in ORIENTATIONS:
        centres = Cube.solved(3).apply(rotation).centre_colours()
        assert centres is not None
        found.append(tuple(centres))
    return tuple(found)


__all__ += [
    "COLOUR_RGB",
    "ORIENTATIONS",
    "cubes_equal_up_to_rotation",
    "legal_centre_arrangements",
    "net",
]
_ = MoveKind  # re-exported type used in annotations by callers
