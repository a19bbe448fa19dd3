"""Two-gripper robots: two arms that grip the cube on two faces, open and close, and rotate.

Physical frame: the grippers hold the faces at ``positions`` (default D and B: two
perpendicular arms, as most two-arm robots are built; with opposed arms only the two held faces
can ever be turned, and :func:`robot.kinds.planner.KindPlanner` reports which moves a profile
cannot make). Each gripper is open or closed and has an angle within ``angles`` (quarter turns
from its start; a 90° servo: 0 and 1; a 180° servo: -1, 0, 1; ``None``: unlimited).

* ``rotate[g](d)`` with both grippers closed turns the ``depth`` layers under ``g`` (a face turn);
* with the other gripper open it turns the whole cube about ``g``'s axis (a re-orientation);
* with ``g`` open it only turns the empty gripper (to get back within its range);
* ``grip[g](0)`` opens ``g`` (only while the other one holds the cube), ``grip[g](1)`` closes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from robot.kinds.frames import rotation
from robot.kinds.mechanism import Action, Mechanism, PartsState, Step
from solver.cube.facelets import move_permutation
from solver.cube.geometry import Face
from solver.cube.notation import OPPOSITE, Move

__all__ = ["GripperTiming", "TwoGripper"]

_OPEN, _CLOSED = 0, 1


@dataclass(frozen=True, slots=True)
class GripperTiming:
    """Seconds each action takes."""

    rotate_quarter_s: float = 0.20
    rotate_half_s: float = 0.35
    open_s: float = 0.12
    close_s: float = 0.12


@dataclass(frozen=True, eq=False)
class TwoGripper(Mechanism):
    """A two-gripper robot for an ``n`` cube; each gripper turns ``depth`` layers."""

    n: int = 3
    timing: GripperTiming = GripperTiming()
    positions: tuple[Face, Face] = (Face.D, Face.B)
    angles: tuple[int, ...] | None = (-1, 0, 1)
    depth: int = 1

    def __post_init__(self) -> None:
        if self.positions[0] is self.positions[1]:
            raise ValueError("the two grippers must hold different faces")
        if not 1 <= self.depth < self.n:
            raise ValueError(f"a gripper turns 1..{self.n - 1} layers, not {self.depth}")
        if self.angles is not None and 0 not in self.angles:
            raise ValueError(f"gripper angles must include 0, got {self.angles}")

    @property
    def opposed(self) -> bool:
        return OPPOSITE[self.positions[0]] is self.positions[1]

    @property
    def start(self) -> PartsState:
        return (_CLOSED, 0, _CLOSED, 0)

    def _rotations(self, angle: int) -> list[tuple[int, int]]:
        out = []
        for d in (1, -1, 2, -2):
            target = angle + d
            if self.angles is None:
                target %= 4
            elif target not in self.angles:
                continue
            out.append((d, target))
        return out

    def _seconds(self, d: int) -> float:
        return self.timing.rotate_half_s if abs(d) == 2 else self.timing.rotate_quarter_s

    def free_steps(self, state: PartsState) -> Sequence[Step]:
        steps = []
        for g in (0, 1):
            grip, angle = state[2 * g], state[2 * g + 1]
            other = state[2 * (1 - g)]
            face = self.positions[g]
            name = face.name
            if grip == _CLOSED and other == _CLOSED:
                after = _set(state, g, _OPEN, angle)
                steps.append(Step(Action("grip", name, 0), after, None, self.timing.open_s))
            if grip == _OPEN:
                after = _set(state, g, _CLOSED, angle)
                steps.append(Step(Action("grip", name, 1), after, None, self.timing.close_s))
            for d, target in self._rotations(angle):
                after = _set(state, g, grip, target)
                if grip == _OPEN:
                    effect = None
                elif other == _OPEN:
                    effect = rotation(face, d, self.n)
                else:
                    continue  # both closed: a turn step, below
                steps.append(Step(Action("rotate", name, d), after, effect, self._seconds(d)))
        return steps

    def turn_steps(self, state: PartsState) -> Sequence[Step]:
        if state[0] != _CLOSED or state[2] != _CLOSED:
            return []
        steps = []
        for g in (0, 1):
            face, angle = self.positions[g], state[2 * g + 1]
            for d, target in self._rotations(angle):
                layers = move_permutation(Move.block(face, 1, self.depth, _norm(d)), self.n)
                after = _set(state, g, _CLOSED, target)
                steps.append(Step(Action("rotate", face.name, d), after, layers, self._seconds(d)))
        return steps


def _set(state: PartsState, g: int, grip: int, angle: int) -> PartsState:
    parts = list(state)
    parts[2 * g], parts[2 * g + 1] = grip, angle
    return tuple(parts)


def _norm(turns: int) -> int:
    return {1: 1, 2: 2, 3: -1}[turns % 4]
