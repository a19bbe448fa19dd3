"""Cycle tracing for blindfolded memorisation (seed 002), and an Old Pochmann solver built on it.

**Letters** (the Speffz scheme, which is what seed 002's data describes: ``a`` white-blue,
``b`` white-red, ``c`` white-green with green front). Each face gets four letters, in the face
order U L F R B D, going clockwise from the top as the face is seen from outside with the
project's orientation (U's top edge touches B, D's touches F, the side faces' touch U)::

    edges   a-d U   e-h L   i-l F   m-p R   q-t B   u-x D     top, right, bottom, left
    corners A-D U   E-H L   I-L F   M-P R   Q-T B   U-X D     top-left, top-right,
                                                             bottom-right, bottom-left

Edge letters are written in lower case and corner letters in upper case. The default buffers
are ``b`` (UR, seed 002's only buffer) and ``A`` (ULB, the Old Pochmann corner buffer); both are
settings of the tracer.

**Tracing** (seed 002's ``do_full_trace``, for edges and the same for corners): from the buffer,
write where the sticker at the current position belongs, move there, and repeat until the
buffer's own piece comes back; this first cycle is written *without* its closing letter. Then
start a new cycle at the first letter (alphabetically) of a piece not traced yet, write that
letter, follow the cycle and write its closing letter (the start letter, or another sticker of
the same piece when the cycle also turns the piece). Where the seed and its own test disagree
we follow the test and the notes: a piece already home is skipped (a solved cube has no
cycles), and pieces that are home but flipped (edges) or twisted (corners) come last, each as
the two letters that fix it, and are also listed in ``flipped`` / ``twisted``. The number of
letters is the number of swaps; when it is odd there is *parity*.

**Solving** (:func:`solve_trace`): one swap per letter, in order: setup moves that bring the
target sticker to the helper position without moving the buffer or the pieces the swap
disturbs, the swap, and the setup undone. Edges swap the buffer UR with UL by the T perm,
corners swap the buffer ULB with DFR by the Old Pochmann "modified Y" (which also swaps UL and
UB). Setups are optimal, read off an exact table of the four pieces involved. With parity, an
R-perm-like PLL after the edges swaps UFR/UBR back and UL/UB over; the odd number of corner
swaps swaps UL/UB back.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from solver.cube.cubie import CubieCube, cubie_layout
from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import Move, format_moves, parse
from solver.cube.validate import check
from solver.engines.common.cases import Family, recogniser
from solver.engines.common.settings import parse_settings
from solver.engines.common.stage_search import (
    CORNER,
    EDGE,
    MOVES,
    Piece,
    PieceState,
    StageSearch,
    TableCache,
    default_tables,
)
from solver.engines.common.stages import Assembler, add_direct, finish
from solver.errors import OptionError, UnsupportedError
from solver.options import SolveOptions
from solver.solution import Solution

__all__ = [
    "CORNER_LETTERS",
    "EDGE_LETTERS",
    "OP_CORNER_BUFFER",
    "OP_EDGE_BUFFER",
    "PieceTrace",
    "Trace",
    "TraceSettings",
    "letter_position",
    "piece_letters",
    "solve_trace",
    "sticker_index",
    "trace",
    "trace_corners",
    "trace_edges",
]

logger = logging.getLogger(__name__)

#: the default buffers, the Old Pochmann solver's: edge ``b`` (UR), corner ``A`` (ULB)
OP_EDGE_BUFFER = "b"
OP_CORNER_BUFFER = "A"

EDGE_LETTERS = "abcdefghijklmnopqrstuvwx"
CORNER_LETTERS = EDGE_LETTERS.upper()
_LETTER_FACES = (Face.U, Face.L, Face.F, Face.R, Face.B, Face.D)
# (row, col) in the LTR frame of a face: edges top, right, bottom, left; corners from top-left
_EDGE_CELLS = ((2, 1), (1, 2), (0, 1), (1, 0))
_CORNER_CELLS = ((2, 0), (2, 2), (0, 2), (0, 0))

EDGE_SWAP = "R U R' U' R' F R2 U' R' U' R U R' F'"  # T perm: UR <-> UL (and UFR <-> UBR)
CORNER_SWAP = "R U' R' U' R U R' F' R U R' U' R' F R"  # ULB <-> DFR (and UL <-> UB)


def letter_position(letter: str) -> tuple[Face, int, int]:
    """The face and LTR (row, col) of a letter's sticker."""
    kind_letters = EDGE_LETTERS if letter.islower() else CORNER_LETTERS
    index = kind_letters.find(letter)
    if len(letter) != 1 or index < 0:
        raise ValueError(f"{letter!r} is not a sticker letter (a-x for edges, A-X for corners)")
    cells = _EDGE_CELLS if letter.islower() else _CORNER_CELLS
    row, col = cells[index % 4]
    return _LETTER_FACES[index // 4], row, col


def sticker_index(letter: str) -> int:
    """The flat facelet index (LTR, :mod:`solver.cube.facelets`) of a letter's sticker."""
    face, row, col = letter_position(letter)
    return int(face) * 9 + row * 3 + col


def piece_letters(letter: str) -> tuple[str, ...]:
    """The letters of the piece a letter is on, that letter first, then its partner (edges) or
    the other two going clockwise around the corner."""
    kind = _kind(EDGE if letter.islower() else CORNER)
    return tuple(kind.letters[i] for i in kind.mates[kind.index(letter)])


@dataclass(frozen=True, slots=True)
class _Kind:
    """The letters of one kind of piece and how they sit on the cube."""

    name: str  # "edges" or "corners"
    piece_kind: int
    letters: str
    flat: tuple[int, ...]  # flat facelet index of each letter
    code: tuple[int, ...]  # piece-state code (stage_search) of each letter's sticker
    mates: tuple[tuple[int, ...], ...]  # per letter: the letters of its piece, itself first
    by_code: tuple[int, ...]  # letter index of each code
    faces: tuple[tuple[Face, ...], ...]  # per letter: its face, then the piece's other faces

    def index(self, letter: str) -> int:
        i = self.letters.find(letter)
        if len(letter) != 1 or i < 0:
            span = f"{self.letters[0]}-{self.letters[-1]}"
            raise UnsupportedError(f"{letter!r} is not one of the {self.name} letters ({span})")
        return i


@cache
def _kind(piece_kind: int) -> _Kind:
    layout = cubie_layout(3)
    if piece_kind == EDGE:
        name, letters, cells = "edges", EDGE_LETTERS, _EDGE_CELLS
        stickers = [(layout.edges[i][0][k], 2 * i + k) for i in range(12) for k in range(2)]
        size = 2
    else:
        name, letters, cells = "corners", CORNER_LETTERS, _CORNER_CELLS
        stickers = [(layout.corners[i][k], 3 * i + k) for i in range(8) for k in range(3)]
        size = 3
    code_of_flat = dict(stickers)
    flat = tuple(int(f) * 9 + r * 3 + c for f in _LETTER_FACES for (r, c) in cells)
    code = tuple(code_of_flat[x] for x in flat)
    by_code = [0] * 24
    for i, c in enumerate(code):
        by_code[c] = i
    mates = []
    faces = []
    for i in range(24):
        slot, k = divmod(code[i], size)
        ring = [by_code[slot * size + (k + j) % size] for j in range(size)]
        mates.append(tuple(ring))
        faces.append(tuple(Face(flat[j] // 9) for j in ring))
    return _Kind(name, piece_kind, letters, flat, code, tuple(mates), tuple(by_code), tuple(faces))


@dataclass(frozen=True, slots=True)
class PieceTrace:
    """The trace of one kind of piece (module docstring).

    ``cycles``: the first cycle (from the buffer, no closing letter; possibly empty), then the
    other cycles (start letter first, closing letter last), then the flipped or twisted pieces
    (two letters each). ``misoriented``: the letters of those last cycles. ``buffer_twist``:
    how the buffer's own piece is turned when it is home (0 otherwise)."""

    kind: str
    buffer: str
    cycles: tuple[tuple[str, ...], ...]
    misoriented: tuple[str, ...]
    buffer_twist: int
    stickers_traced: int

    @property
    def targets(self) -> tuple[str, ...]:
        """Every letter in order: one swap each."""
        return tuple(letter for cycle in self.cycles for letter in cycle)

    @property
    def parity(self) -> bool:
        return len(self.targets) % 2 == 1

    @property
    def is_complete(self) -> bool:
        return self.stickers_traced == 24

    def letters(self) -> str:
        """The memo as people write it: cycles separated by spaces, letters joined in pairs."""
        flat = "".join(self.targets)
        return " ".join(flat[i : i + 2] for i in range(0, len(flat), 2))

    def to_dict(self) -> dict[str, Any]:
        return {
            "buffer": self.buffer,
            "cycles": [list(c) for c in self.cycles if c],
            "flipped" if self.kind == "edges" else "twisted": list(self.misoriented),
            "targets": "".join(self.targets),
            "letters": self.letters(),
            "parity": self.parity,
            "buffer_twist": self.buffer_twist,
            "total_pieces": self.stickers_traced,
            "is_complete": self.is_complete,
        }


@dataclass(frozen=True, slots=True)
class Trace:
    """Edge and corner traces of one state; ``parity`` when the swap counts are odd."""

    edges: PieceTrace
    corners: PieceTrace

    @property
    def parity(self) -> bool:
        return self.edges.parity

    def to_dict(self) -> dict[str, Any]:
        return {
            "edges": self.edges.to_dict(),
            "corners": self.corners.to_dict(),
            "parity": self.parity,
        }


def _where(cube: Cube, kind: _Kind) -> list[int]:
    """For each letter, the letter where the sticker now on it belongs."""
    centres = cube.centre_colours()
    if centres is None or len(set(centres)) != 6:  # pragma: no cover - check() refused it
        raise UnsupportedError("tracing needs a 3x3 cube with six distinct centres")
    face_of = [0] * 6
    for face, colour in enumerate(centres):
        face_of[colour] = face
    flat = cube.flat
    home = {kind.faces[i]: i for i in range(24)}
    result = []
    for i in range(24):
        seen = tuple(Face(face_of[int(flat[kind.flat[j]])]) for j in kind.mates[i])
        result.append(home[seen])
    return result


def _trace(cube: Cube, kind: _Kind, buffer: str) -> PieceTrace:
    where = _where(cube, kind)
    start = kind.index(buffer)

    def piece(i: int) -> frozenset[int]:
        return frozenset(kind.mates[i])

    traced: set[int] = set(piece(start))
    cycles: list[tuple[str, ...]] = []

    def follow(first: int) -> tuple[list[int], list[int]]:
        """seed 002's do_cycle: the letters written and the positions visited."""
        written: list[int] = []
        visited: list[int] = []
        seen: set[int] = set()
        current = first
        while current not in seen:
            nxt = where[current]
            written.append(nxt)
            visited.append(current)
            seen |= piece(current)
            current = nxt
        return written, visited

    written, visited = follow(start)
    for v in visited:
        traced |= piece(v)
    first_cycle = written[:-1]  # without the closing letter (the buffer's own piece)
    cycles.append(tuple(kind.letters[i] for i in first_cycle))
    buffer_twist = 0
    if len(visited) == 1:  # the buffer piece is home, maybe turned
        buffer_twist = kind.mates[start].index(where[start])
    misoriented: list[tuple[str, ...]] = []
    for i in range(24):
        if i in traced:
            continue
        traced |= piece(i)
        if where[i] == i:
            continue  # solved piece: no cycle
        written, visited = follow(i)
        for v in visited:
            traced |= piece(v)
        cycle = tuple(kind.letters[j] for j in [i, *written])
        if len(visited) == 1:
            misoriented.append(cycle)  # home but flipped / twisted
        else:
            cycles.append(cycle)
    cycles.extend(misoriented)
    return PieceTrace(
        kind.name,
        buffer,
        tuple(cycles),
        tuple(letter for cycle in misoriented for letter in cycle),
        buffer_twist,
        len(traced),
    )


def trace_edges(cube: Cube, buffer: str = OP_EDGE_BUFFER) -> PieceTrace:
    """Seed 002's edge trace of a 3x3 (validated first)."""
    return _trace(_checked(cube), _kind(EDGE), buffer)


def trace_corners(cube: Cube, buffer: str = OP_CORNER_BUFFER) -> PieceTrace:
    """The corner trace, the same way (buffer ULB by default)."""
    return _trace(_checked(cube), _kind(CORNER), buffer)


def trace(
    cube: Cube, edge_buffer: str = OP_EDGE_BUFFER, corner_buffer: str = OP_CORNER_BUFFER
) -> Trace:
    """Edge and corner traces of a 3x3 state; raises :class:`InvalidCubeError` for an
    impossible one."""
    cube = _checked(cube)
    return Trace(_trace(cube, _kind(EDGE), edge_buffer), _trace(cube, _kind(CORNER), corner_buffer))


def _checked(cube: Cube) -> Cube:
    if cube.n != 3:
        raise UnsupportedError(f"tracing is defined for the 3x3, not {cube.n}x{cube.n}")
    return check(cube)


# --- the Old Pochmann solver ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Swapper:
    """Swaps the buffer sticker with any other sticker of its kind: setup, swap, undo."""

    kind: _Kind
    buffer: int  # letter index
    helper: int  # letter index the swap exchanges with the buffer
    swap: tuple[Move, ...]
    search: StageSearch  # buffer, helper (virtual), side-effect pieces: all home at the end

    def setup(self, target: int) -> list[int]:
        """Optimal moves taking the sticker at ``target`` to the helper position while the
        buffer and the pieces the swap disturbs stay exactly where they are."""
        kind = self.kind
        size = 2 if kind.piece_kind == EDGE else 3
        t_slot, t_k = divmod(kind.code[target], size)
        _, h_k = divmod(kind.code[self.helper], size)
        virtual = t_slot * size + (t_k - h_k) % size
        codes = list(self.search.goal)
        codes[1] = virtual
        path = self.search.solve_codes(tuple(codes), max_depth=12)
        if path is None:  # pragma: no cover - every sticker can be set up
            raise AssertionError(f"no setup for {kind.letters[target]}")
        return path


_SWAPPERS: dict[int, _Swapper] = {}
_SWAP_LOCK = threading.Lock()


def _swapper(piece_kind: int, tables: TableCache) -> _Swapper:
    with _SWAP_LOCK:
        found = _SWAPPERS.get(piece_kind)
        if found is None:
            found = _build_swapper(piece_kind, tables)
            _SWAPPERS[piece_kind] = found
        return found


def _build_swapper(piece_kind: int, tables: TableCache) -> _Swapper:
    kind = _kind(piece_kind)
    alg = EDGE_SWAP if piece_kind == EDGE else CORNER_SWAP
    swap = tuple(parse(alg))
    effect = CubieCube().apply(swap)
    solved = PieceState.solved()
    after = solved.apply(swap)
    size = 2 if piece_kind == EDGE else 3
    own = after.edges if piece_kind == EDGE else after.corners
    moved = [p for p in range(len(own)) if own[p] != p * size]
    other = after.corners if piece_kind == EDGE else after.edges
    other_size = 3 if piece_kind == EDGE else 2
    side = [p for p in range(len(other)) if other[p] != p * other_size]
    buffer_piece = 0 if piece_kind == EDGE else 2  # UR / ULB
    (helper_piece,) = [p for p in moved if p != buffer_piece]
    buffer = kind.by_code[buffer_piece * size]
    # where the swap sends the buffer sticker, and it must send that one back: a swap
    helper_code = own[buffer_piece]
    helper = kind.by_code[helper_code]
    assert helper_code // size == helper_piece and len(moved) == 2 and len(side) == 2
    assert effect == effect.inverse(), "the swap algorithm must be an involution"
    other_kind = CORNER if piece_kind == EDGE else EDGE
    pieces = (
        Piece(piece_kind, buffer_piece),
        Piece(piece_kind, helper_piece),
        *(Piece(other_kind, p) for p in side),
    )
    search = StageSearch(pieces, (pieces,), tables)
    return _Swapper(kind, buffer, helper, swap, search)


@cache
def _parity_fix() -> tuple[Move, ...]:
    """Swaps UFR/UBR and UL/UB (the side effects of an odd number of T perms and of the corner
    swaps), found among the PLL cases."""
    effect = CubieCube(cp=(3, 1, 2, 0, 4, 5, 6, 7), ep=(0, 1, 3, 2, 4, 5, 6, 7, 8, 9, 10, 11))
    (option, *_) = recogniser(Family.PLL).options(effect)
    assert CubieCube().apply(option.moves) == effect
    return option.moves


@dataclass(frozen=True, slots=True)
class TraceSettings:
    """The trace solver's options: the buffers, which it cannot change (it swaps with the Old
    Pochmann buffers, edges b and corners A); other buffers are for :func:`trace` only."""

    edge_buffer: str = OP_EDGE_BUFFER
    corner_buffer: str = OP_CORNER_BUFFER

    def __post_init__(self) -> None:
        for option, value, default in (
            ("edge_buffer", self.edge_buffer, OP_EDGE_BUFFER),
            ("corner_buffer", self.corner_buffer, OP_CORNER_BUFFER),
        ):
            if value != default:
                raise OptionError(
                    option,
                    "the trace solver swaps with the Old Pochmann buffers (edges "
                    f"{OP_EDGE_BUFFER}, corners {OP_CORNER_BUFFER}); {option}={value!r} is for "
                    "tracing only (solver.engines.trace.trace)",
                )

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> TraceSettings:
        """The settings in ``SolveOptions.extra``; unknown names are refused."""
        return parse_settings(cls, "trace", extra)


def solve_trace(cube: Cube, options: SolveOptions) -> Solution:
    """Engine entry point (``solver.api.ENGINES["trace"]``): the Old Pochmann solve of the
    trace; ``options.extra`` may only repeat the standard buffers (:class:`TraceSettings`)."""
    started = time.perf_counter()
    TraceSettings.from_extra(options.extra)
    assembler = Assembler()
    stats: dict[str, Any] = {}
    if not add_direct(assembler, cube):
        result = trace(cube)
        tables = default_tables()
        for kind, piece_trace in ((EDGE, result.edges), (CORNER, result.corners)):
            if kind == CORNER and result.parity:
                fix = _parity_fix()
                assembler.add("parity", fix, {"algorithm": format_moves(fix)})
            swapper = _swapper(kind, tables)
            moves, steps = _swaps(swapper, piece_trace.targets)
            detail = {**piece_trace.to_dict(), "swap": format_moves(swapper.swap), "steps": steps}
            assembler.add(piece_trace.kind, moves, detail)
        stats["parity"] = result.parity
    stats["time_s"] = round(time.perf_counter() - started, 6)
    return finish("trace", assembler, stats, options.max_length, options.faces, options.cost_model)


def _swaps(swapper: _Swapper, targets: Sequence[str]) -> tuple[list[Move], list[dict[str, str]]]:
    moves: list[Move] = []
    steps = []
    for letter in targets:
        setup = [MOVES[m] for m in swapper.setup(swapper.kind.index(letter))]
        undo = [m.inverse() for m in reversed(setup)]
        moves += setup + list(swapper.swap) + undo
        steps.append({"letter": letter, "setup": format_moves(setup)})
    return moves, steps
