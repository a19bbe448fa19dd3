"""Results of the solver: a :class:`Solution` with moves, metrics, stages and statistics."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from solver.cube.notation import Metric, Move, count, format_moves

__all__ = ["Solution", "Stage"]


@dataclass(frozen=True, slots=True)
class Stage:
    """One annotated part of a solution (a CFOP pair, an OLL case, ...)."""

    name: str
    moves: tuple[Move, ...]
    detail: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self, n: int = 3) -> dict[str, Any]:
        return {
            "name": self.name,
            "moves": format_moves(self.moves),
            "htm": count(self.moves, Metric.HTM, n),
            "stm": count(self.moves, Metric.STM, n),
            **dict(self.detail),
        }


@dataclass(frozen=True, slots=True)
class Solution:
    """Moves that solve a state, with the engine that found them and how."""

    moves: tuple[Move, ...]
    engine: str
    n: int = 3
    robot_time_s: float | None = None
    stages: tuple[Stage, ...] = ()
    stats: Mapping[str, Any] = field(default_factory=dict)

    @property
    def htm(self) -> int:
        return count(self.moves, Metric.HTM, self.n)

    @property
    def qtm(self) -> int:
        return count(self.moves, Metric.QTM, self.n)

    @property
    def stm(self) -> int:
        return count(self.moves, Metric.STM, self.n)

    def __str__(self) -> str:
        return format_moves(self.moves)

    def __len__(self) -> int:
        return len(self.moves)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the ``--format json`` contract: moves, htm, qtm, stm, engine,
        robot_time_s, stages, stats)."""
        return {
            "moves": format_moves(self.moves),
            "htm": self.htm,
            "qtm": self.qtm,
            "stm": self.stm,
            "engine": self.engine,
            "robot_time_s": self.robot_time_s,
            "stages": [s.to_dict(self.n) for s in self.stages],
            "stats": dict(self.stats),
        }
