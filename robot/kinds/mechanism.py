"""What a mechanism can do, as a small state machine over its own parts.

A mechanism kind (turntable + flipper + cover, two grippers, ...) is described by its *parts'
state* (cover open or closed, table angle, gripper open/closed and angle: :attr:`Mechanism.start`
and the states reachable from it) and two kinds of :class:`Step` from each state:

* a **free** step changes only the machine and, perhaps, how the whole cube sits in it (a flip,
  a spin with the cover open, a gripper opening): its ``effect`` is a whole-cube rotation in the
  physical frame, or None when the cube does not move;
* a **turn** step turns layers of the cube against each other (a spin with the cover holding
  the upper layers, a gripper turning while the other holds): its ``effect`` is that layer turn
  in the physical frame.

Every step has the time it takes (seconds). The planner (:mod:`robot.kinds.planner`) works out
from these alone which steps execute a solution fastest; the simulator
(:mod:`robot.kinds.simulate`) replays them on a facelet cube.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from robot.kinds.frames import Perm

__all__ = ["Action", "Mechanism", "PartsState", "Step"]

#: the state of a mechanism's parts (its meaning is the kind's own)
PartsState = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Action:
    """One thing the machine does: ``name`` (``"flip"``, ``"spin"``, ``"held_spin"``,
    ``"cover"``, ``"grip"``, ``"rotate"``), the ``part`` it moves (a gripper's face, or ``""``)
    and its ``value`` (quarter turns for spins and rotations, layers held for a closed cover,
    0/1 for open/closed)."""

    name: str
    part: str = ""
    value: int = 0

    def __str__(self) -> str:
        part = f"[{self.part}]" if self.part else ""
        return f"{self.name}{part}({self.value:+d})" if self.value else f"{self.name}{part}"


@dataclass(frozen=True, slots=True)
class Step:
    """A possible step from a machine state: the action, the state after it, its effect on the
    cube (physical frame; None = the cube does not move) and its duration in seconds."""

    action: Action
    after: PartsState
    effect: Perm | None
    seconds: float


class Mechanism(ABC):
    """A mechanism kind with its parameters. Subclasses say what each state allows."""

    #: cube size this instance is built for
    n: int

    @property
    @abstractmethod
    def start(self) -> PartsState:
        """The parts' state when a job begins (the cube has just been put in)."""

    @abstractmethod
    def free_steps(self, state: PartsState) -> Sequence[Step]:
        """Steps that do not turn layers (effect: a whole-cube rotation or None)."""

    @abstractmethod
    def turn_steps(self, state: PartsState) -> Sequence[Step]:
        """Steps that turn layers of the cube (effect: the layer turn, physical frame)."""

    def states(self) -> list[PartsState]:
        """Every parts' state reachable from :attr:`start` (breadth first, start first)."""
        seen = [self.start]
        known = {self.start}
        for state in seen:
            for step in (*self.free_steps(state), *self.turn_steps(state)):
                if step.after not in known:
                    known.add(step.after)
                    seen.append(step.after)
        return seen
