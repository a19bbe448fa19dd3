"""Runs of solution moves for the planners (:mod:`robot.kinds.planner`): neighbouring turns of
the same layers merged, turns about one axis grouped (they commute), a half turn's ways, and
the min-plus product of two time matrices."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from solver.cube.geometry import Face
from solver.cube.notation import Move, MoveKind

__all__ = ["MAX_RUN_ORDERS", "commuting_runs", "merge_repeats", "min_plus", "ways"]


def min_plus(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The min-plus product ``out[i, j] = min_k a[i, k] + b[k, j]``, over the ``k`` that
    ``a`` reaches (a turn ends in few states), a few rows at a time."""
    live = np.flatnonzero(np.isfinite(a).any(axis=0))
    a, b = a[:, live], b[live]
    out = np.empty((a.shape[0], b.shape[1]))
    for i in range(0, a.shape[0], 8):
        out[i : i + 8] = (a[i : i + 8, :, None] + b[None, :, :]).min(axis=1)
    return out


def merge_repeats(moves: Iterable[Move]) -> list[Move]:
    """Neighbouring turns of the same layers merged (``D D2`` -> ``D'``, ``R R'`` -> nothing),
    so that each planned turn is one the cube needs."""
    out: list[Move] = []
    for move in moves:
        if out and move.kind is not MoveKind.ROTATION and _same_layers(out[-1], move):
            total = (out[-1].turns + move.turns) % 4
            out.pop()
            if total:
                out.append(move.with_turns(total))
        else:
            out.append(move)
    return out


#: longest run of commuting turns whose every order is tried (4! = 24 orders)
MAX_RUN_ORDERS = 4

_AXIS = {Face.U: 0, Face.D: 0, Face.R: 1, Face.L: 1, Face.F: 2, Face.B: 2}


def commuting_runs(moves: list[Move]) -> list[list[Move]]:
    """The moves cut into runs of neighbouring turns about one axis (they commute, so any
    order makes the same cube); a rotation is a run of its own."""
    runs: list[list[Move]] = []
    for move in moves:
        last = runs[-1][-1] if runs else None
        if (
            last is not None
            and MoveKind.ROTATION not in (move.kind, last.kind)
            and _AXIS[move.face] == _AXIS[last.face]
        ):
            runs[-1].append(move)
        else:
            runs.append([move])
    return runs


def ways(move: Move) -> list[list[Move]]:
    """A move as one turn, or a half turn as two quarter turns either way."""
    if move.quarter_turns == 2:
        return [[move], [move.with_turns(1)] * 2, [move.with_turns(-1)] * 2]
    return [[move]]


def _same_layers(a: Move, b: Move) -> bool:
    return (a.kind, a.face, a.lo, a.hi) == (b.kind, b.face, b.lo, b.hi)
