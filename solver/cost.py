"""Robot execution time of a move sequence: the cost model a solver optimises for.

A face-turning robot turns one face (one motor) at a time, except that the two faces of one
axis (U/D, R/L, F/B) may turn at the same time. The model:

* a quarter turn takes ``quarter_turn_s``, a half turn ``half_turn_s``;
* consecutive outer turns of opposite faces run together as one *group*, taking the longer of
  the two plus ``pair_extra_s`` (both motors start and settle together);
* every group is followed by ``settle_s`` before the next one starts.

Only outer face turns are priced; a sequence with slice, wide or rotation moves must first be
re-expressed for fixed centres (the robot planner does that).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from solver.cube.notation import OPPOSITE, Move, MoveKind
from solver.errors import UnsupportedError

__all__ = ["DEFAULT_COST_MODEL", "MAX_MOTION_S", "CostModel", "group_simultaneous"]

#: The longest a robot's motion (a turn, a pair's extra, a settle) may be priced, in seconds:
#: beyond it a plan's sums could overflow to infinity (1e308 s made every five-motor
#: replacement "infinitely" dear and none was found).
MAX_MOTION_S = 60.0


@dataclass(frozen=True, slots=True)
class CostModel:
    """Seconds per motion of this robot (see the module docstring)."""

    quarter_turn_s: float = 0.10
    half_turn_s: float = 0.17
    pair_extra_s: float = 0.01
    settle_s: float = 0.02
    simultaneous: bool = True

    def __post_init__(self) -> None:
        for name in ("quarter_turn_s", "half_turn_s", "pair_extra_s", "settle_s"):
            value = getattr(self, name)
            if not 0 <= value <= MAX_MOTION_S:
                raise ValueError(
                    f"cost model: {name} must be a finite number of seconds, 0..{MAX_MOTION_S:g}, "
                    f"got {value!r}"
                )

    def move_time(self, move: Move) -> float:
        if move.kind is not MoveKind.OUTER:
            raise UnsupportedError(
                f"cost model prices outer face turns only; re-express {move} for fixed centres"
            )
        return self.half_turn_s if move.quarter_turns == 2 else self.quarter_turn_s

    def estimate(self, moves: Iterable[Move]) -> float:
        """Seconds this robot needs to execute ``moves``."""
        total = 0.0
        groups = group_simultaneous(list(moves)) if self.simultaneous else [[m] for m in moves]
        for group in groups:
            times = [self.move_time(m) for m in group]
            total += max(times) + (self.pair_extra_s if len(group) > 1 else 0.0)
        if groups:
            total += self.settle_s * (len(groups) - 1)
        return total


def group_simultaneous(moves: Sequence[Move]) -> list[list[Move]]:
    """Split into groups that run at once: a single turn, or two adjacent turns of opposite
    outer faces (``R L'``)."""
    groups: list[list[Move]] = []
    i = 0
    while i < len(moves):
        m = moves[i]
        if (
            i + 1 < len(moves)
            and m.kind is MoveKind.OUTER
            and moves[i + 1].kind is MoveKind.OUTER
            and moves[i + 1].face is OPPOSITE[m.face]
        ):
            groups.append([m, moves[i + 1]])
            i += 2
        else:
            groups.append([m])
            i += 1
    return groups


DEFAULT_COST_MODEL = CostModel()
