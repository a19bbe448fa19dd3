"""Replay a mechanism's actions on a facelet cube: the machine as it would really move the cube.

Each action must be possible in the parts' state it is taken in (else :class:`PlanError`), and
acts on the physical cube by its step's effect alone (a flip or an open spin turns the whole
cube, a held spin turns layers), so a plan that replays to a solved cube is right whatever the
planner believed.
"""

from __future__ import annotations

from collections.abc import Iterable

from robot.errors import PlanError
from robot.kinds.mechanism import Action, Mechanism, PartsState
from solver.cube.facelets import Cube

__all__ = ["replay"]


def replay(
    mechanism: Mechanism, cube: Cube, actions: Iterable[Action], start: PartsState | None = None
) -> tuple[Cube, PartsState]:
    """The physical cube and parts' state after ``actions``, starting from ``cube`` as it sits
    in the machine and the parts at ``start`` (the mechanism's start by default)."""
    parts = mechanism.start if start is None else start
    flat = cube.flat
    for number, action in enumerate(actions, 1):
        steps = [*mechanism.free_steps(parts), *mechanism.turn_steps(parts)]
        step = next((s for s in steps if s.action == action), None)
        if step is None:
            raise PlanError(f"action {number} ({action}) is not possible with the parts at {parts}")
        if step.effect is not None:
            flat = flat[step.effect]
        parts = step.after
    return Cube(flat, cube.n), parts
