"""Stepper timing model used by the simulated firmware and the link benchmark.

Each motor follows a trapezoidal velocity profile: constant acceleration ``accel_dps2`` up to
``max_speed_dps``, cruise, constant deceleration. For a turn of ``θ`` degrees::

    θ ≥ v²/a :  t = θ/v + v/a            (reaches top speed)
    θ < v²/a :  t = 2·√(θ/a)             (triangular profile)

A move group (one move, or two opposite faces turning together) takes the longest of its motors'
times plus ``settle_s`` (the gripper settling before the next turn). With the defaults a quarter
turn takes 97.5 ms and a half turn 157.5 ms, typical of a hobby cube robot.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

__all__ = ["MotorProfile", "group_time_s", "turn_time_s"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class MotorProfile:
    """Kinematic limits of one motor."""

    max_speed_dps: float = 1500.0
    accel_dps2: float = 40000.0
    settle_s: float = 0.005

    def __post_init__(self) -> None:
        if not self.max_speed_dps > 0:
            raise ValueError(f"max_speed_dps must be > 0, got {self.max_speed_dps}")
        if not self.accel_dps2 > 0:
            raise ValueError(f"accel_dps2 must be > 0, got {self.accel_dps2}")
        if not self.settle_s >= 0:
            raise ValueError(f"settle_s must be ≥ 0, got {self.settle_s}")

    def scaled(self, factor: float) -> MotorProfile:
        """The same motor running ``factor`` times faster (every duration divided by it)."""
        if not factor > 0:
            raise ValueError(f"speed factor must be > 0, got {factor}")
        return replace(
            self,
            max_speed_dps=self.max_speed_dps * factor,
            accel_dps2=self.accel_dps2 * factor * factor,
            settle_s=self.settle_s / factor,
        )


def turn_time_s(profile: MotorProfile, quarter_turns: int) -> float:
    """Seconds for one motor to turn ``quarter_turns`` (sign ignored)."""
    theta = 90.0 * abs(quarter_turns)
    v, a = profile.max_speed_dps, profile.accel_dps2
    if theta >= v * v / a:
        return theta / v + v / a
    return 2.0 * math.sqrt(theta / a)


def group_time_s(profiles: Sequence[MotorProfile], turns: Sequence[tuple[int, int]]) -> float:
    """Seconds for a group of ``(motor, quarter_turns)`` moves that start together."""
    if not turns:
        return 0.0
    longest = max(turn_time_s(profiles[m], q) for m, q in turns)
    settle = max(profiles[m].settle_s for m, _ in turns)
    return longest + settle
