"""Move notation: WCA and SiGN, for any cube size.

Grammar (whitespace between moves is optional)::

    sequence := item*
    item     := move | "(" sequence ")" [count] ["'"]
    move     := [range | layer] face [suffix]
    face     := U R F D L B          outer layer (layer 1 of that face)
              | Uw Rw ... / u r ...  wide: layers 1..k (k from the prefix, default 2)
              | M E S                the inner layers 2..N-1 turning like L, D, F
              | x y z                the whole cube turning like R, U, F
    layer    := digits               with an upper-case face: that inner layer only ("2R");
                                     with a wide face: the wide depth ("3Rw", "3r")
    range    := digits "-" digits    layers lo..hi ("2-3Rw", "2-3r")
    suffix   := "'" | "2" | "2'"

``(R U)3`` repeats a group, ``(R U)'`` inverts it. Parsed sequences are flat lists of
:class:`Move`; :func:`format_moves` prints them back so that print(parse(s)) is stable.

Metrics (see :func:`count`): HTM counts every block turn (a move touching an outer layer) as 1
and an inner slice as 2; QTM counts quarter turns the same way (half turns twice); STM counts
any layer move as 1; ETM counts every move, rotations included. Rotations count 0 otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from solver.cube.geometry import Face
from solver.errors import NotationError, UnsupportedError

__all__ = [
    "Metric",
    "Move",
    "MoveKind",
    "count",
    "format_moves",
    "invert",
    "parse",
]

OPPOSITE: dict[Face, Face] = {
    Face.U: Face.D,
    Face.D: Face.U,
    Face.R: Face.L,
    Face.L: Face.R,
    Face.F: Face.B,
    Face.B: Face.F,
}


class MoveKind(StrEnum):
    OUTER = "outer"  # R
    WIDE = "wide"  # Rw, r, 3Rw, 3r
    SLICE = "slice"  # 2R: one inner layer
    RANGE = "range"  # 2-3Rw
    MIDDLE = "middle"  # M E S
    ROTATION = "rotation"  # x y z


_MIDDLE_FACE = {"M": Face.L, "E": Face.D, "S": Face.F}
_ROTATION_FACE = {"x": Face.R, "y": Face.U, "z": Face.F}
_MIDDLE_NAME = {v: k for k, v in _MIDDLE_FACE.items()}
_ROTATION_NAME = {v: k for k, v in _ROTATION_FACE.items()}


@dataclass(frozen=True, slots=True)
class Move:
    """One move. ``face`` is the face the turn is seen from; ``lo``/``hi`` are 1-based layers
    counted from that face (0 for "depends on N": MIDDLE and ROTATION); ``turns`` is 1, 2, -1
    (prime) or -2 (written ``2'``); ``lower`` records the SiGN lower-case spelling of a wide
    move so that printing gives back what was written."""

    kind: MoveKind
    face: Face
    lo: int
    hi: int
    turns: int
    lower: bool = False

    @property
    def quarter_turns(self) -> int:
        """Clockwise quarter turns, 1..3."""
        return self.turns % 4

    def layers(self, n: int) -> tuple[int, int]:
        """The layer range (1-based from ``face``) on an ``n``-cube; raises if impossible."""
        if self.kind is MoveKind.ROTATION:
            return 1, n
        if self.kind is MoveKind.MIDDLE:
            if n < 3:
                raise UnsupportedError(f"{self} needs a cube with inner layers (N >= 3), not N={n}")
            return 2, n - 1
        if self.hi > n:
            raise UnsupportedError(f"{self} turns layer {self.hi}, but an N={n} cube has {n}")
        return self.lo, self.hi

    def with_turns(self, turns: int) -> Move:
        """The same layers turned ``turns`` (normalised to 1, 2 or -1; 0 is not a move)."""
        q = turns % 4
        if q == 0:
            raise ValueError("a move of zero turns")
        return Move(self.kind, self.face, self.lo, self.hi, {1: 1, 2: 2, 3: -1}[q], self.lower)

    def inverse(self) -> Move:
        return Move(self.kind, self.face, self.lo, self.hi, _invert_turns(self.turns), self.lower)

    def __str__(self) -> str:
        suffix = {1: "", 2: "2", -1: "'", -2: "2'"}[self.turns]
        name = self.face.name
        match self.kind:
            case MoveKind.OUTER:
                body = name
            case MoveKind.WIDE:
                letter = name.lower() if self.lower else name + "w"
                body = letter if self.hi == 2 else f"{self.hi}{letter}"
            case MoveKind.SLICE:
                body = f"{self.lo}{name}"
            case MoveKind.RANGE:
                letter = name.lower() if self.lower else name + "w"
                body = f"{self.lo}-{self.hi}{letter}"
            case MoveKind.MIDDLE:
                body = _MIDDLE_NAME[self.face]
            case MoveKind.ROTATION:
                body = _ROTATION_NAME[self.face]
        return body + suffix

    @classmethod
    def outer(cls, face: Face, turns: int = 1) -> Move:
        return cls(MoveKind.OUTER, face, 1, 1, turns)

    @classmethod
    def block(cls, face: Face, lo: int, hi: int, turns: int) -> Move:
        """The simplest spelling of layers ``lo..hi`` of ``face`` (outer, wide, slice, range)."""
        if lo == hi == 1:
            return cls(MoveKind.OUTER, face, 1, 1, turns)
        if lo == 1:
            return cls(MoveKind.WIDE, face, 1, hi, turns)
        if lo == hi:
            return cls(MoveKind.SLICE, face, lo, lo, turns)
        return cls(MoveKind.RANGE, face, lo, hi, turns)


def _invert_turns(turns: int) -> int:
    return {1: -1, -1: 1, 2: 2, -2: 2}[turns]


_TOKEN = re.compile(
    r"(?:(?P<lo>\d+)-(?P<hi>\d+)|(?P<num>\d+))?"
    r"(?P<face>[URFDLB]w|[URFDLBurfdlbMESxyz])"
    r"(?P<suffix>2'|2’|2|'|’)?"
)
_SPACE = re.compile(r"\s+")
_COUNT = re.compile(r"(?P<count>\d+)?(?P<prime>'|’)?")

#: layers deeper than this are refused at parse time (no cube is that big)
MAX_LAYER = 127  # N = 101 solutions name layers up to 100
#: deepest nesting of ``( )`` groups accepted (deeper input is refused, never a RecursionError)
MAX_NESTING = 64
#: most moves a sequence may expand to once repeats are applied (``((R)1000)1000`` is refused
#: before it is built, never a MemoryError); a solved 101x101x101 takes about 150,000
MAX_EXPANDED_MOVES = 500_000


def parse(text: str) -> list[Move]:
    """Parse a move sequence; raises :class:`NotationError` naming the column and token."""
    moves, pos = _parse_sequence(text, 0, depth=0)
    if pos != len(text):
        raise NotationError("unmatched ')'", text=text, column=pos + 1, token=text[pos])
    return moves


def _parse_sequence(text: str, pos: int, depth: int) -> tuple[list[Move], int]:
    moves: list[Move] = []
    while pos < len(text):
        space = _SPACE.match(text, pos)
        if space:
            pos = space.end()
            continue
        char = text[pos]
        if char == "(":
            start = pos
            if depth >= MAX_NESTING:
                raise NotationError(
                    f"groups nested more than {MAX_NESTING} deep",
                    text=text,
                    column=start + 1,
                    token="(",
                )
            inner, pos = _parse_sequence(text, pos + 1, depth + 1)
            if pos >= len(text) or text[pos] != ")":
                raise NotationError("'(' is never closed", text=text, column=start + 1, token="(")
            pos += 1
            tail = _COUNT.match(text, pos)
            assert tail is not None  # the pattern matches the empty string
            repeat = int(tail.group("count")) if tail.group("count") else 1
            if repeat > 1000:
                raise NotationError(
                    "repeat count too large", text=text, column=pos + 1, token=tail.group(0)
                )
            if len(moves) + len(inner) * repeat > MAX_EXPANDED_MOVES:
                raise NotationError(
                    f"the sequence expands to more than {MAX_EXPANDED_MOVES} moves",
                    text=text,
                    column=start + 1,
                    token=text[start : tail.end()],
                )
            group = invert(inner) if tail.group("prime") else inner
            moves.extend(group * repeat)
            pos = tail.end()
            continue
        if char == ")":
            if depth == 0:
                raise NotationError("unmatched ')'", text=text, column=pos + 1, token=")")
            return moves, pos
        match = _TOKEN.match(text, pos)
        if match is None:
            end = pos + 1
            while end < len(text) and not text[end].isspace() and text[end] not in "()":
                end += 1
            raise NotationError("not a move", text=text, column=pos + 1, token=text[pos:end])
        if len(moves) >= MAX_EXPANDED_MOVES:
            raise NotationError(
                f"the sequence has more than {MAX_EXPANDED_MOVES} moves",
                text=text,
                column=pos + 1,
                token=match.group(0),
            )
        moves.append(_make_move(match, text))
        pos = match.end()
    if depth:
        return moves, pos
    return moves, pos


def _make_move(match: re.Match[str], text: str) -> Move:
    token = match.group(0)
    column = match.start() + 1
    face_text = match.group("face")
    suffix = (match.group("suffix") or "").replace("’", "'")
    turns = {"": 1, "2": 2, "'": -1, "2'": -2}[suffix]
    num = match.group("num")
    lo_text, hi_text = match.group("lo"), match.group("hi")

    def fail(reason: str) -> NotationError:
        return NotationError(reason, text=text, column=column, token=token)

    if face_text in ("M", "E", "S", "x", "y", "z"):
        if num or lo_text:
            raise fail(f"{face_text} takes no layer number")
        if face_text in _MIDDLE_FACE:
            return Move(MoveKind.MIDDLE, _MIDDLE_FACE[face_text], 0, 0, turns)
        return Move(MoveKind.ROTATION, _ROTATION_FACE[face_text], 0, 0, turns)
    lower = face_text[0].islower()
    wide = lower or face_text.endswith("w")
    face = Face[face_text[0].upper()]
    if lo_text is not None:
        lo, hi = int(lo_text), int(hi_text)
        if not 1 <= lo <= hi <= MAX_LAYER:
            raise fail(f"layer range {lo}-{hi} must count up from 1")
        return Move(MoveKind.RANGE, face, lo, hi, turns, lower)
    layer = int(num) if num else None
    if layer is not None and not 1 <= layer <= MAX_LAYER:
        raise fail(f"layer {layer} must be between 1 and {MAX_LAYER}")
    if wide:
        depth = 2 if layer is None else layer
        if depth == 1:
            return Move(MoveKind.OUTER, face, 1, 1, turns)
        return Move(MoveKind.WIDE, face, 1, depth, turns, lower)
    if layer is None or layer == 1:
        return Move(MoveKind.OUTER, face, 1, 1, turns)
    return Move(MoveKind.SLICE, face, layer, layer, turns)


def format_moves(moves: Iterable[Move]) -> str:
    """Moves in notation, separated by single spaces."""
    return " ".join(str(m) for m in moves)


def invert(moves: Sequence[Move]) -> list[Move]:
    """The inverse sequence: reversed, each move inverted."""
    return [m.inverse() for m in reversed(moves)]


class Metric(StrEnum):
    HTM = "htm"
    QTM = "qtm"
    STM = "stm"
    ETM = "etm"


def count(moves: Iterable[Move], metric: Metric | str = Metric.HTM, n: int = 3) -> int:
    """Length of a sequence in a metric (see the module docstring)."""
    metric = Metric(metric)
    total = 0
    for move in moves:
        if metric is Metric.ETM:
            total += 1
            continue
        if move.kind is MoveKind.ROTATION:
            continue
        if metric is Metric.STM:
            total += 1
            continue
        lo, hi = move.layers(n)
        weight = 1 if (lo == 1 or hi == n) else 2
        if metric is Metric.QTM and move.quarter_turns == 2:
            weight *= 2
        total += weight
    return total
