"""The simulated mechanism: a turntable or two-gripper robot's parts, moved by the simulated
firmware's motors, and the virtual cube they move.

The simulated firmware (:mod:`firmware_protocol.sim`) calls ``apply(motor name, count)`` when a
motor finishes a move (motor names as the wire's face codes: ``U`` = motor 0 ... ``B`` = 5).
:class:`MechanismCube` knows which motor is which part (:mod:`robot.kinds.wire`'s mapping,
from the profile) and the parts' positions, and moves the cube only as the machine would:

* turntable: the table motor turns the cradle; with the cover open the whole cube turns with
  it (like D), with the cover closed leaving ``k`` layers free only those bottom layers turn;
  the flipper tips the cube over (the profile's ``flip`` rotation), and a flip against a
  closed cover jams (nothing moves); the cover motor moves the cover between its positions;
* two-gripper: an arm's rotate motor turns what the arm holds: with both arms closed the
  ``depth`` layers under it, with the other arm open the whole cube, with its own arm open
  nothing; an arm opened while the other one is open drops the cube (an error).

It does not consult the planner: a plan that replays to a solved cube here is right whatever
the planner believed. Misuse the real machine would not survive is logged and refused (the
cube stays as it is), so a test sees the cube unsolved.
"""

from __future__ import annotations

import logging

from firmware_protocol.sim.motors import MotorProfile
from robot.kinds.profile import TurntableConfig, TwoGripperConfig
from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import Move, MoveKind, parse

__all__ = ["MechanismCube", "motor_profiles"]

logger = logging.getLogger(__name__)

_MOTOR_NAMES = ("U", "R", "F", "D", "L", "B")
#: whole-cube rotation about a face's axis, turning like that face
_AXIS_ROTATION = {
    Face.R: ("x", 1),
    Face.L: ("x", -1),
    Face.U: ("y", 1),
    Face.D: ("y", -1),
    Face.F: ("z", 1),
    Face.B: ("z", -1),
}


def _rotation(face: Face, turns: int) -> Move:
    letter, sign = _AXIS_ROTATION[face]
    move = parse(letter)[0]
    return Move(MoveKind.ROTATION, move.face, 0, 0, move.with_turns(sign * turns).turns)


class MechanismCube:
    """A :class:`Cube` in a simulated turntable or two-gripper mechanism (the simulated
    firmware's ``TurnableCube``). ``faults`` counts refused motions (jams, drops)."""

    def __init__(
        self,
        cube: Cube,
        table: TurntableConfig | TwoGripperConfig,
        *,
        facelets_by: str = "auto",
    ) -> None:
        self.cube = cube
        self.table = table
        self.facelets_by = facelets_by
        self.faults = 0
        self.cover = 0  # turntable: 0 open, k: closed leaving k layers free
        self.table_angle = 0
        self.closed = [True, True]  # two-gripper: each arm holds the cube
        self.angles = [0, 0]

    @property
    def parts(self) -> tuple[int, ...]:
        """The parts' positions as the kind's planner numbers them (its ``PartsState``):
        turntable (cover, table angle); two-gripper (closed, angle) of each arm."""
        if isinstance(self.table, TurntableConfig):
            return (self.cover, self.table_angle)
        return (
            int(self.closed[0]),
            self.angles[0],
            int(self.closed[1]),
            self.angles[1],
        )

    def set_start_pose(self) -> None:
        """The operator puts the parts at their start pose by hand (the answer to
        ``parts_unknown``): the cover open and the table at its start angle, or both arms
        closed at their start angles; the cube lifted meanwhile, so not turned."""
        self.cover, self.table_angle = 0, 0
        self.closed, self.angles = [True, True], [0, 0]

    def facelets(self) -> str:
        """The facelet string, faces U R F D L B (the physical cube as it sits)."""
        return self.cube.to_facelets(self.facelets_by)

    def apply(self, face: str, quarter_turns: int, depth: int = 1) -> None:
        """Motor ``face`` (its wire name) finished a move of ``quarter_turns``; a mechanism's
        parts have no grip depth on the wire (the kind's own depths are actions), so a move with
        ``depth`` > 1 moves nothing."""
        motor = _MOTOR_NAMES.index(face)
        if depth != 1:
            self._refuse(f"motor {motor} was sent a grip depth of {depth}, which no part has")
            return
        logger.debug("simulated mechanism: motor %d moved %+d", motor, quarter_turns)
        if isinstance(self.table, TurntableConfig):
            self._turntable(self.table, motor, quarter_turns)
        else:
            self._grippers(self.table, motor, quarter_turns)

    def _refuse(self, what: str) -> None:
        self.faults += 1
        logger.error("simulated mechanism: %s; the cube does not move", what)

    def _turntable(self, table: TurntableConfig, motor: int, count: int) -> None:
        n = self.cube.n
        if motor == table.table_motor:
            target = self.table_angle + count
            if table.table_positions and target not in table.table_positions:
                self._refuse(f"the turntable cannot reach {target} quarter turns")
                return
            self.table_angle = target if table.table_positions else target % 4
            if self.cover:
                self.cube = self.cube.apply([Move.block(Face.D, 1, self.cover, count)])
            else:
                self.cube = self.cube.apply([_rotation(Face.D, count)])
        elif motor == table.flipper_motor:
            if self.cover:
                self._refuse("the flipper pushed against the closed cover")
                return
            self.cube = self.cube.apply(table.flip)
        elif motor == table.cover_motor:
            position = self.cover + count
            if not 0 <= position < n:
                self._refuse(f"the cover cannot go to position {position} on an N={n} cube")
                return
            self.cover = position
        else:
            self._refuse(f"motor {motor} is not connected")

    def _grippers(self, table: TwoGripperConfig, motor: int, count: int) -> None:
        if motor in table.rotate_motors:
            g = table.rotate_motors.index(motor)
            face = Face[table.faces[g]]
            target = self.angles[g] + count
            if table.angles and target not in table.angles:
                self._refuse(f"arm {face.name} cannot reach {target} quarter turns")
                return
            self.angles[g] = target if table.angles else target % 4
            if not self.closed[g]:
                return
            if self.closed[1 - g]:
                self.cube = self.cube.apply([Move.block(face, 1, table.depth, count)])
            else:
                self.cube = self.cube.apply([_rotation(face, count)])
        elif motor in table.grip_motors:
            g = table.grip_motors.index(motor)
            close = count > 0
            if not close and not self.closed[1 - g]:
                self._refuse(f"arm {table.faces[g]} opened while the other arm was open")
                return
            self.closed[g] = close
        else:
            self._refuse(f"motor {motor} is not connected")


def _timed(quarter_s: float, half_s: float | None = None) -> MotorProfile:
    """A motor whose quarter turn takes ``quarter_s`` and half turn ``half_s`` (trapezoidal:
    ``t = θ/v + v/a``); without ``half_s``, or with one no shorter than two quarters, a motor
    at constant speed (a half turn takes two quarters)."""
    if half_s is not None and quarter_s < half_s < 2 * quarter_s:
        speed = 90.0 / (half_s - quarter_s)
        return MotorProfile(speed, speed / (2 * quarter_s - half_s), 0.0)
    return MotorProfile(90.0 / quarter_s, 1e12, 0.0)


def motor_profiles(table: TurntableConfig | TwoGripperConfig) -> tuple[MotorProfile, ...]:
    """The simulated firmware's six motors timed like the profile's actions (a move of a part
    takes the action's time: the table's quarter and half turns those of a held spin, a flip
    stroke ``flip_s``, a cover step ``cover_close_s``; an arm's rotation and grip theirs);
    motors no part uses keep the default face-motor timing."""
    motors = [MotorProfile()] * 6
    if isinstance(table, TurntableConfig):
        motors[table.table_motor] = _timed(table.held_quarter_s, table.held_half_s)
        motors[table.flipper_motor] = _timed(table.flip_s)
        motors[table.cover_motor] = _timed(table.cover_close_s)
    else:
        for g in (0, 1):
            motors[table.rotate_motors[g]] = _timed(table.rotate_quarter_s, table.rotate_half_s)
            motors[table.grip_motors[g]] = _timed(table.close_s)
    return tuple(motors)
