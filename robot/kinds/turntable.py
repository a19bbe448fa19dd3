"""Turntable + flipper + cover robots (CUBOTino, MindCuber; MultiCuber-like for big cubes).

The cube sits in a cradle on a turntable. Physical frame: the turntable turns the **D**
position; the cover comes down on the **U** side; the flipper tips the cube over.

* ``spin(d)`` with the cover open turns the whole cube like D by ``d`` quarter turns;
* ``held_spin(d)`` with the cover closed holding all but the bottom ``k`` layers turns those
  ``k`` layers like D (``k`` = 1 on a CUBOTino; a big-cube gripper chooses ``k``);
* ``flip`` (cover open) rolls the whole cube by the profile's ``flip`` rotation (``x`` by
  default: the face at the back comes to the bottom, the bottom goes to the front);
* ``cover(k)`` closes the cover leaving ``k`` layers free below it; ``cover`` (0) opens it.

A servo turntable has a limited range: ``table_positions`` lists the angles it can reach, in
quarter turns from its start (CUBOTino's 180° servo: -1, 0, +1). A held spin and a free spin
both move the table; only a free spin can bring it back without turning a layer, and that
turns the whole cube, which the planner tracks. ``None`` means a stepper turntable without
limits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from robot.kinds.frames import Perm, rotation
from robot.kinds.mechanism import Action, Mechanism, PartsState, Step
from solver.cube.facelets import move_permutation
from solver.cube.geometry import Face
from solver.cube.notation import Move, MoveKind, parse

__all__ = ["Turntable", "TurntableTiming"]

_OPEN = 0


@dataclass(frozen=True, slots=True)
class TurntableTiming:
    """Seconds each action takes (CUBOTino-like servo figures by default)."""

    spin_quarter_s: float = 0.35
    spin_half_s: float = 0.60
    held_quarter_s: float = 0.45
    held_half_s: float = 0.75
    flip_s: float = 0.70
    cover_close_s: float = 0.25
    cover_open_s: float = 0.20


@dataclass(frozen=True, eq=False)
class Turntable(Mechanism):
    """A turntable robot for an ``n`` cube; ``depths`` are the bottom-layer counts the cover
    can leave free (``(1,)`` for a 3x3 robot)."""

    n: int = 3
    timing: TurntableTiming = TurntableTiming()
    table_positions: tuple[int, ...] | None = (-1, 0, 1)
    depths: tuple[int, ...] = (1,)
    flip: str = "x"

    def __post_init__(self) -> None:
        bad = [k for k in self.depths if not 1 <= k < self.n]
        if not self.depths or bad:
            raise ValueError(f"cover depths must be 1..{self.n - 1} layers, got {self.depths}")
        if self.table_positions is not None and 0 not in self.table_positions:
            raise ValueError(f"table_positions must include 0, got {self.table_positions}")
        moves = parse(self.flip)
        if len(moves) != 1 or moves[0].kind is not MoveKind.ROTATION:
            raise ValueError(
                f"flip must be one whole-cube rotation (x, x', z, ...), not {self.flip!r}"
            )
        if moves[0].face in (Face.U, Face.D):
            raise ValueError("flip must tip the cube over (x or z), not spin it (y)")

    @cached_property
    def flip_effect(self) -> Perm:
        """The whole-cube rotation a flip makes (physical frame)."""
        return move_permutation(parse(self.flip)[0], self.n)

    @property
    def start(self) -> PartsState:
        return (_OPEN, 0)

    def _turns(self, angle: int) -> list[tuple[int, int]]:
        """(quarter turns, angle after) for every spin the table can make from ``angle``."""
        out = []
        for d in (1, -1, 2, -2):
            target = angle + d
            if self.table_positions is None:
                target %= 4
            elif target not in self.table_positions:
                continue
            out.append((d, target))
        return out

    def states(self) -> list[PartsState]:
        """The states a plan reaches, then the cover's in-between positions: a cover move of
        more than two steps is split into wire moves (:mod:`robot.kinds.wire`), and a stop
        between them leaves the cover where no plan puts it. A plan may start there (the
        next scan after the stop); from there the cover only opens (see :meth:`free_steps`,
        :meth:`turn_steps`)."""
        reached = super().states()
        angles = sorted({angle for _, angle in reached})
        deepest = max(self.depths)  # a split move stops short of it, past the open cover
        between = [(c, a) for c in range(1, deepest) if c not in self.depths for a in angles]
        return reached + between

    def free_steps(self, state: PartsState) -> Sequence[Step]:
        cover, angle = _unpack(state)
        t = self.timing
        if cover != _OPEN:
            return [Step(Action("cover", value=0), (_OPEN, angle), None, t.cover_open_s)]
        steps = [
            Step(Action("cover", value=k), (k, angle), None, t.cover_close_s) for k in self.depths
        ]
        steps.append(Step(Action("flip"), (_OPEN, angle), self.flip_effect, t.flip_s))
        for d, after in self._turns(angle):
            seconds = t.spin_half_s if abs(d) == 2 else t.spin_quarter_s
            steps.append(
                Step(Action("spin", value=d), (_OPEN, after), rotation(Face.D, d, self.n), seconds)
            )
        return steps

    def turn_steps(self, state: PartsState) -> Sequence[Step]:
        cover, angle = _unpack(state)
        if cover == _OPEN or cover not in self.depths:  # in between: the cover only opens
            return []
        t = self.timing
        steps = []
        for d, after in self._turns(angle):
            seconds = t.held_half_s if abs(d) == 2 else t.held_quarter_s
            layers = move_permutation(Move.block(Face.D, 1, cover, _norm(d)), self.n)
            steps.append(Step(Action("held_spin", value=d), (cover, after), layers, seconds))
        return steps


def _unpack(state: PartsState) -> tuple[int, int]:
    cover, angle = state
    return cover, angle


def _norm(turns: int) -> int:
    return {1: 1, 2: 2, 3: -1}[turns % 4]
