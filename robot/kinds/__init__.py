"""Mechanism kinds beyond six face motors: turntable + flipper + cover robots, big-cube
grippers and two-gripper robots, with a planner that finds each kind's fastest action sequence
for a solution and a replay of those actions on a facelet cube.

* :mod:`~robot.kinds.frames`: the 24 orientations, and the one formula that relates what the
  machine does (physical frame) to what the solution asks (notation frame).
* :mod:`~robot.kinds.mechanism`: a kind as a state machine of its parts (free and turn steps).
* :mod:`~robot.kinds.turntable`, :mod:`~robot.kinds.gripper`: the kinds.
* :mod:`~robot.kinds.planner`: the exact fastest plan by dynamic programming.
* :mod:`~robot.kinds.simulate`: replay on a facelet cube.
"""

from robot.kinds.gripper import GripperTiming, TwoGripper
from robot.kinds.mechanism import Action, Mechanism, PartsState, Step
from robot.kinds.planner import ActionPlan, KindPlanner, PlannedAction
from robot.kinds.simulate import replay
from robot.kinds.turntable import Turntable, TurntableTiming

__all__ = [
    "Action",
    "ActionPlan",
    "GripperTiming",
    "KindPlanner",
    "Mechanism",
    "PartsState",
    "PlannedAction",
    "Step",
    "Turntable",
    "TurntableTiming",
    "TwoGripper",
    "replay",
]
