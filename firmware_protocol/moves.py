"""Moves as the firmware knows them: a motor (face code), signed quarter turns, a simultaneous
flag, and the depth (layers the motor's gripper holds: 1, the outer layer, unless the robot
turns big cubes).

Face codes on the wire (motor numbers)::

    U=0  R=1  F=2  D=3  L=4  B=5        opposite(f) = (f + 3) % 6

A positive quarter-turn count is clockwise looking at the face from outside (WCA ``R``), negative
is anticlockwise (``R'``); ±2 is a half turn in that direction. A move flagged
``simultaneous_with_next`` starts together with the following move, which must be on the opposite
face (``U+D'`` in the text form below); the pair completes when both motors have finished.

This module knows nothing else of cubes: slices, wide turns and rotations are the robot planner's
business (it re-expresses them as moves of motorised faces before they reach the link).

Text form, used by ``cuberobot send`` and the tests: whitespace-separated face turns
``U R' F2 B2'``; two opposite-face turns joined by ``+`` run at the same time (``U+D'``). A
deeper grip is written as SiGN writes a wide turn: ``Rw`` (two layers), ``3Rw'`` (three).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum

from firmware_protocol.codes import MAX_MOVE_DEPTH
from firmware_protocol.errors import InvalidMoveError

__all__ = [
    "Face",
    "Move",
    "format_moves",
    "groups",
    "opposite",
    "parse_moves",
    "validate_moves",
]

logger = logging.getLogger(__name__)


class Face(IntEnum):
    """Motor numbers of a six-motor face-turning robot (the wire's face codes)."""

    U = 0
    R = 1
    F = 2
    D = 3
    L = 4
    B = 5


def opposite(motor: int) -> int:
    """The motor on the opposite face."""
    return (motor + 3) % 6


@dataclass(frozen=True, slots=True)
class Move:
    """One motor move as the host requests it (the link assigns its firmware move index)."""

    motor: int
    quarter_turns: int
    simultaneous_with_next: bool = False
    #: layers the motor's gripper turns (1: the outer layer alone)
    depth: int = 1

    def __post_init__(self) -> None:
        if not 0 <= self.motor <= 5:
            raise InvalidMoveError(f"motor must be 0..5 (U R F D L B), got {self.motor}")
        if self.quarter_turns not in (-2, -1, 1, 2):
            raise InvalidMoveError(
                f"motor {self.face_name}: quarter turns must be ±1 or ±2, got {self.quarter_turns}"
            )
        if not 1 <= self.depth <= MAX_MOVE_DEPTH:
            raise InvalidMoveError(
                f"motor {self.face_name}: depth must be 1..{MAX_MOVE_DEPTH} layers, "
                f"got {self.depth}"
            )

    @property
    def face_name(self) -> str:
        return Face(self.motor).name if 0 <= self.motor <= 5 else f"motor{self.motor}"

    @property
    def notation(self) -> str:
        """``U``, ``U'``, ``U2`` or ``U2'`` (without the ``+`` of a simultaneous pair); a deeper
        grip as a wide turn: ``Uw`` (two layers), ``3Uw'`` (three)."""
        suffix = {1: "", -1: "'", 2: "2", -2: "2'"}[self.quarter_turns]
        if self.depth == 1:
            return self.face_name + suffix
        prefix = "" if self.depth == 2 else str(self.depth)
        return f"{prefix}{self.face_name}w{suffix}"

    def __str__(self) -> str:
        return self.notation + ("+" if self.simultaneous_with_next else "")


_TOKEN = re.compile(r"^(?:(\d+)(?=[URFDLB]w))?([URFDLB])(w?)(2'|2|'|)$")


def _parse_turn(token: str, column: int) -> Move:
    match = _TOKEN.match(token)
    if match is None:
        raise InvalidMoveError(
            f"column {column}: {token!r} is not a face turn; use U R F D L B with '' ' 2 or 2' "
            "(Rw, 3Rw: a gripper holding 2, 3 layers)"
        )
    turns = {"": 1, "'": -1, "2": 2, "2'": -2}[match.group(4)]
    depth = int(match.group(1)) if match.group(1) else 2 if match.group(3) else 1
    if depth < 2 and match.group(3):
        raise InvalidMoveError(
            f"column {column}: {token!r}: a wide turn holds at least 2 layers, got {depth}"
        )
    try:
        return Move(Face[match.group(2)], turns, depth=depth)
    except InvalidMoveError as exc:
        raise InvalidMoveError(f"column {column}: {exc}") from None


def parse_moves(text: str) -> list[Move]:
    """Parse ``"U R' F2 U+D'"`` into moves; :class:`InvalidMoveError` names the column."""
    moves: list[Move] = []
    for match in re.finditer(r"\S+", text):
        parts = match.group(0).split("+")
        column = match.start() + 1
        parsed = []
        for part in parts:
            parsed.append(_parse_turn(part, column))
            column += len(part) + 1
        for k, move in enumerate(parsed):
            last = k == len(parsed) - 1
            moves.append(
                Move(
                    move.motor,
                    move.quarter_turns,
                    simultaneous_with_next=not last,
                    depth=move.depth,
                )
            )
    validate_moves(moves)
    return moves


def format_moves(moves: Iterable[Move]) -> str:
    """The text form of ``moves`` (inverse of :func:`parse_moves`)."""
    out: list[str] = []
    joined = ""
    for move in moves:
        joined += move.notation
        if move.simultaneous_with_next:
            joined += "+"
        else:
            out.append(joined)
            joined = ""
    if joined:
        out.append(joined)
    return " ".join(out)


def groups(moves: Sequence[Move]) -> list[tuple[int, int]]:
    """``(start, stop)`` slices of ``moves`` that start together (single moves or pairs)."""
    out = []
    start = 0
    for i, move in enumerate(moves):
        if not move.simultaneous_with_next:
            out.append((start, i + 1))
            start = i + 1
    if start < len(moves):
        out.append((start, len(moves)))
    return out


def validate_moves(moves: Sequence[Move], motor_count: int = 6) -> None:
    """Check what the firmware would refuse: motors that do not exist, groups that are not two
    opposite faces, a sequence ending in an open group. Raises :class:`InvalidMoveError`."""
    for i, move in enumerate(moves):
        if move.motor >= motor_count:
            raise InvalidMoveError(f"move {i + 1} ({move}): this firmware has {motor_count} motors")
    for start, stop in groups(moves):
        group = moves[start:stop]
        if group[-1].simultaneous_with_next:
            raise InvalidMoveError(
                f"move {stop} ({group[-1]}) is marked simultaneous with a next move, "
                "but it is the last move"
            )
        if len(group) > 2:
            raise InvalidMoveError(
                f"moves {start + 1}..{stop} form a simultaneous group of {len(group)}; "
                "at most two opposite faces turn together"
            )
        if len(group) == 2 and group[1].motor != opposite(group[0].motor):
            raise InvalidMoveError(
                f"moves {start + 1} and {stop} ({format_moves(group)}) turn together but "
                "are not opposite faces"
            )
