"""What the method engines (LBL, CFOP, tracing) share: the orientation they solve in, naming
pieces for people, a short exhaustive search before the stages, and putting stages together.

**Frames.** A method solves its first layer on the bottom. To start from another face the
engine solves the cube as seen after a whole-cube rotation that brings that face down; a move of
face ``f`` in that view is a move of the physical face ``frame.physical[f]`` (the robot never
rotates the cube; its centres stay where they are).

**Assembly.** Stages are concatenated with cancellation at their borders (``R`` then ``R'``
disappear, ``U`` then ``U`` become ``U2``, also across a turn of the opposite face). A merged
move belongs to the earlier stage, so the stages' moves always concatenate to the solution.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from solver.cube.cubie import CORNER_FACES, EDGE_FACES, Corner, Edge
from solver.cube.facelets import DEFAULT_SCHEME, SCHEMES, ColourScheme, Cube
from solver.cube.geometry import Face
from solver.cube.notation import OPPOSITE, Metric, Move, count, format_moves, parse
from solver.engines.common.stage_search import CORNER, MOVES, Piece, PieceState
from solver.errors import OptionError, UnsupportedError
from solver.solution import Solution, Stage

__all__ = [
    "Assembler",
    "Frame",
    "check_result",
    "face_setting",
    "finish",
    "merged_length",
    "scheme_setting",
    "short_solution",
]

logger = logging.getLogger(__name__)

_BOTTOM_ROTATION = {Face.D: "", Face.U: "x2", Face.F: "x'", Face.B: "x", Face.R: "z", Face.L: "z'"}


@dataclass(frozen=True, slots=True)
class Frame:
    """The cube seen with ``bottom`` turned to D (module docstring)."""

    bottom: Face
    rotation: tuple[Move, ...]
    physical: tuple[Face, ...]  # physical[f]: the physical face seen in position f

    @classmethod
    def with_bottom(cls, bottom: Face) -> Frame:
        return _frame(bottom)

    def state(self, cube: Cube) -> PieceState:
        """The pieces as seen in this frame (colours taken relative to the centres)."""
        return PieceState.from_cube(cube.apply(self.rotation) if self.rotation else cube)

    def to_physical(self, moves: Iterable[Move | int]) -> tuple[Move, ...]:
        out = []
        for move in moves:
            m = MOVES[move] if isinstance(move, int) else move
            out.append(Move.outer(self.physical[m.face], m.turns))
        return tuple(out)

    def piece_name(self, piece: Piece) -> str:
        """The physical slot name of a frame piece's home (``DFR`` seen with white down on a
        white-up cube is ``UBR``...)."""
        faces = (CORNER_FACES if piece.kind == CORNER else EDGE_FACES)[piece.index]
        physical = frozenset(self.physical[f] for f in faces)
        return _slot_names(piece.kind)[physical]

    def face_name(self, face: Face) -> str:
        return self.physical[face].name


@cache
def _frame(bottom: Face) -> Frame:
    rotation = tuple(parse(_BOTTOM_ROTATION[bottom]))
    centres = Cube.solved(3).apply(rotation).centre_colours()
    assert centres is not None
    return Frame(bottom, rotation, tuple(Face(c) for c in centres))


@cache
def _slot_names(kind: int) -> dict[frozenset[Face], str]:
    if kind == CORNER:
        return {frozenset(CORNER_FACES[c]): c.name for c in Corner}
    return {frozenset(EDGE_FACES[e]): e.name for e in Edge}


def piece_colours(name: str, cube: Cube, scheme: ColourScheme) -> str:
    """The colours of the piece that belongs in physical slot ``name`` ("white-green-red")."""
    centres = cube.centre_colours()
    assert centres is not None
    return "-".join(scheme.colours[centres[Face[letter]]] for letter in name)


# --- settings -------------------------------------------------------------------------------


def scheme_setting(extra: Mapping[str, Any]) -> ColourScheme:
    """``extra["scheme"]``: a :class:`ColourScheme` or a name in :data:`SCHEMES`."""
    value = extra.get("scheme", DEFAULT_SCHEME)
    if isinstance(value, ColourScheme):
        return value
    try:
        return SCHEMES[str(value)]
    except KeyError:
        raise OptionError(
            "scheme", f"unknown colour scheme {value!r}; choose one of: {', '.join(SCHEMES)}"
        ) from None


def face_setting(
    value: object, scheme: ColourScheme, what: str, cube: Cube | None = None
) -> list[Face]:
    """A face given as a face letter ("D"), a colour of ``scheme`` ("white": the face whose
    centre has that colour on ``cube``, however the cube is held), or "neutral" (all six)."""
    if isinstance(value, Face):
        return [value]
    text = str(value).strip()
    if text.lower() in ("neutral", "all", "any"):
        return list(Face)
    if text.upper() in Face.__members__:
        return [Face[text.upper()]]
    try:
        colour = scheme.face_of(text)  # the colour index: the face it belongs to when solved
    except ValueError:
        raise OptionError(
            what,
            f"{what}: {value!r} is neither a face (U R F D L B), a colour of scheme "
            f"{scheme.name} ({', '.join(scheme.colours)}), nor 'neutral'",
        ) from None
    centres = cube.centre_colours() if cube is not None else None
    if centres is None:
        return [colour]
    return [Face(centres.index(int(colour)))]


# --- short exhaustive search -----------------------------------------------------------------


def short_solution(state: PieceState, max_depth: int = 2) -> list[int] | None:
    """The shortest solution of at most ``max_depth`` (≤ 2) moves, or None."""
    if state.is_solved():
        return []
    solved = PieceState.solved()
    if max_depth >= 1:
        for m in range(len(MOVES)):
            if state.apply([m]) == solved:
                return [m]
    if max_depth >= 2:
        for m1 in range(len(MOVES)):
            first = state.apply([m1])
            for m2 in range(len(MOVES)):
                if m2 // 3 == m1 // 3:
                    continue
                if first.apply([m2]) == solved:
                    return [m1, m2]
    return None


def add_direct(assembler: Assembler, cube: Cube) -> bool:
    """If ``cube`` is within two moves of solved, add that as the one stage and say so: every
    engine answers a solved or one-move cube with the empty or one-move solution."""
    direct = short_solution(PieceState.from_cube(cube))
    if direct is None:
        return False
    if direct:
        assembler.add("direct", [MOVES[m] for m in direct], {"note": "within two moves of solved"})
    return True


# --- assembling stages ----------------------------------------------------------------------


class Assembler:
    """Concatenate stages with cancellation at their borders (module docstring)."""

    def __init__(self) -> None:
        self.moves: list[Move] = []
        self._owner: list[int] = []
        self._stages: list[tuple[str, dict[str, Any]]] = []

    def add(
        self, name: str, moves: Iterable[Move], detail: Mapping[str, Any] | None = None
    ) -> None:
        index = len(self._stages)
        self._stages.append((name, dict(detail or {})))
        for move in moves:
            self._push(move, index)

    def _push(self, move: Move, owner: int) -> None:
        # the previous move on this face, reachable across one turn of the opposite face
        for back in (1, 2):
            if len(self.moves) < back:
                break
            prev = self.moves[-back]
            if prev.face == move.face:
                turns = (prev.turns + move.turns) % 4
                if turns == 0:
                    del self.moves[-back]
                    del self._owner[-back]
                else:
                    self.moves[-back] = Move.outer(move.face, {1: 1, 2: 2, 3: -1}[turns])
                return
            if prev.face != OPPOSITE[move.face]:
                break
        self.moves.append(move)
        self._owner.append(owner)

    def stages(self) -> tuple[Stage, ...]:
        result = []
        for index, (name, detail) in enumerate(self._stages):
            moves = tuple(m for m, o in zip(self.moves, self._owner, strict=True) if o == index)
            result.append(Stage(name, moves, detail))
        return tuple(result)


def merged_length(parts: Iterable[Iterable[Move | int]]) -> int:
    """HTM of the concatenation of ``parts`` after cancellation (as :class:`Assembler` does)."""
    assembler = Assembler()
    for part in parts:
        assembler.add("", (MOVES[m] if isinstance(m, int) else m for m in part))
    return len(assembler.moves)


def check_result(
    engine: str, moves: Sequence[Move], max_length: int | None, faces: frozenset[Face] | None
) -> None:
    """Refuse a solution that breaks the caller's limits (these engines cannot search for
    shorter ones or avoid a face)."""
    htm = count(moves, Metric.HTM)
    if max_length is not None and htm > max_length:
        raise UnsupportedError(
            f"the {engine} solution has {htm} moves, more than max_length={max_length}; "
            "use the twophase engine for short solutions"
        )
    if faces is not None:
        used = {m.face for m in moves} - set(faces)
        if used:
            names = "".join(sorted(f.name for f in used))
            raise UnsupportedError(
                f"the {engine} solution turns {names}, which this robot cannot turn; "
                "use the twophase engine, which can avoid a face"
            )


def finish(
    engine: str,
    assembler: Assembler,
    stats: Mapping[str, Any],
    max_length: int | None,
    faces: frozenset[Face] | None,
    cost_model: Any = None,
) -> Solution:
    moves = tuple(assembler.moves)
    check_result(engine, moves, max_length, faces)
    robot_time = None if cost_model is None else float(cost_model.estimate(moves))
    logger.debug("%s: %d moves: %s", engine, len(moves), format_moves(moves))
    return Solution(moves, engine, 3, robot_time, assembler.stages(), dict(stats))
