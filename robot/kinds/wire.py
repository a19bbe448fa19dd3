"""A kind's actions on the wire: each action as moves of the firmware's motors.

No new message is needed (``firmware_protocol/PROTOCOL.md``, "Mechanism kinds"): every part
of a mechanism is one of the wire's six motors, and an action is a MOVES entry of that motor
with a signed count whose meaning the part defines.

==============  ======================  ============================================
kind            action                  wire move (motor, quarter turns)
==============  ======================  ============================================
turntable       ``spin(d)``             ``table_motor``, ``d`` (the table turns like D)
turntable       ``held_spin(d)``        ``table_motor``, ``d`` (the same, cover closed)
turntable       ``flip``                ``flipper_motor``, ``+1`` (a stroke out and back)
turntable       ``cover_close(k)``,     ``cover_motor``, ``k - c`` position steps from
                ``cover_open``          the cover's position ``c`` (0 = open, ``k`` =
                                        leaving ``k`` layers free), at most 2 a move
two-gripper     ``rotate[g](d)``        ``rotate_motors[g]``, ``d``
two-gripper     ``open[g]``,            ``grip_motors[g]``, ``-1`` / ``+1``
                ``close[g]``
==============  ======================  ============================================

:func:`wire_program` turns a plan into :class:`WireAction` s: the wire move, the effect on the
cube in the physical frame (face turns and whole-cube rotations, for the daemon's tracked
cube), and the orientation and parts' state after it (journaled with each action:
:meth:`WireAction.token`). :func:`block_moves` rewrites a solution into what every kind's
planner takes: block turns (outer layers 1..k of a face), whole-cube rotations absorbed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from firmware_protocol.moves import Move as WireMove
from robot.errors import PlanError
from robot.kinds.frames import Perm, frames, key
from robot.kinds.mechanism import Action, Mechanism, PartsState, Step
from robot.kinds.planner import PlannedAction
from robot.kinds.profile import TurntableConfig, TwoGripperConfig
from solver.cube.facelets import Cube, move_permutation
from solver.cube.geometry import Face
from solver.cube.notation import Move, MoveKind, format_moves, parse

__all__ = ["WireAction", "block_moves", "effect_moves", "wire_program"]

#: a cover's position steps per wire move (a move's count is at most 2)
_MAX_STEP = 2


@dataclass(frozen=True, slots=True)
class WireAction:
    """One wire move of a kind's program: what it is (``label``), the motor move, its effect
    on the cube in the physical frame (empty: the cube does not move), its time, and the
    orientation (index into :func:`robot.kinds.frames.frames`) and parts' state after it."""

    label: str
    motor: int
    turns: int
    effect: tuple[Move, ...]
    seconds: float
    orientation: int
    parts: PartsState

    @property
    def wire(self) -> WireMove:
        return WireMove(self.motor, self.turns)

    def apply(self, cube: Cube) -> Cube:
        """The physical cube after this action."""
        return cube.apply(self.effect) if self.effect else cube

    def __str__(self) -> str:
        return self.label

    def token(self) -> str:
        """The journal's form: ``label;effect;orientation;parts;seconds`` (``flip;x;7;0,1;0.7``)."""
        parts = ",".join(str(p) for p in self.parts)
        effect = format_moves(list(self.effect))
        return f"{self.label};{effect};{self.orientation};{parts};{self.seconds:g}"

    @classmethod
    def from_token(cls, token: str, motor: int, turns: int) -> WireAction:
        """The inverse of :meth:`token` (ValueError if ``token`` is not one)."""
        fields = token.split(";")
        if len(fields) != 5:
            raise ValueError(f"not a mechanism action: {token!r}")
        label, effect, orientation, parts, seconds = fields
        return cls(
            label,
            motor,
            turns,
            tuple(parse(effect)) if effect else (),
            float(seconds),
            int(orientation),
            tuple(int(p) for p in parts.split(",")) if parts else (),
        )


@cache
def _effect_names(n: int) -> dict[bytes, Move]:
    """Every physical effect a step can have, by permutation key: whole-cube rotations
    (``x y z``) and block turns of 1..n-1 layers of a face."""
    named: dict[bytes, Move] = {}
    for face in Face:
        for turns in (1, 2, -1):
            for depth in range(1, n):
                move = Move.block(face, 1, depth, turns)
                named.setdefault(key(move_permutation(move, n)), move)
    for letter in "xyz":
        for suffix in ("", "2", "'"):
            move = parse(letter + suffix)[0]
            named.setdefault(key(move_permutation(move, n)), move)
    return named


def effect_moves(effect: Perm | None, n: int) -> tuple[Move, ...]:
    """A step's effect (a permutation, physical frame) as a move (empty for None)."""
    if effect is None:
        return ()
    try:
        return (_effect_names(n)[key(effect)],)
    except KeyError:  # pragma: no cover - every mechanism's steps are rotations or block turns
        raise PlanError(
            "a mechanism step is neither a whole-cube rotation nor a block turn"
        ) from None


def block_moves(moves: Iterable[Move], n: int) -> list[Move]:
    """``moves`` as block turns (outer layers 1..k of a face, k < n) with the same effect on
    the cube up to a whole-cube rotation: a slice or range is two block turns, a whole-cube
    rotation is carried to the end (the moves after it are conjugated) and dropped."""
    names = _effect_names(n)
    frame = np.arange(6 * n * n, dtype=np.intp)  # the rotations so far
    out: list[Move] = []
    for move in moves:
        for block in _blocks(move, n):
            perm = move_permutation(block, n)
            if block.kind is MoveKind.ROTATION or _whole(block, n):
                frame = frame[perm]
                continue
            moved = frame[perm][np.argsort(frame)]
            out.append(names[key(moved)])
    return out


def _whole(move: Move, n: int) -> bool:
    lo, hi = move.layers(n)
    return lo == 1 and hi == n


def _blocks(move: Move, n: int) -> list[Move]:
    if move.kind is MoveKind.ROTATION:
        return [move]
    lo, hi = move.layers(n)
    out = [Move.block(move.face, 1, hi, move.turns)]
    if lo > 1:
        out.append(Move.block(move.face, 1, lo - 1, move.turns).inverse())
    return out


def _chunks(steps: int) -> list[int]:
    """A position change as wire counts of at most :data:`_MAX_STEP` each."""
    sign = 1 if steps > 0 else -1
    out = []
    while steps:
        part = sign * min(abs(steps), _MAX_STEP)
        out.append(part)
        steps -= part
    return out


def _motor_moves(
    table: TurntableConfig | TwoGripperConfig, mechanism: Mechanism, step: Step, before: PartsState
) -> list[tuple[int, int]]:
    action = step.action
    if isinstance(table, TurntableConfig):
        if action.name in ("spin", "held_spin"):
            return [(table.table_motor, action.value)]
        if action.name == "flip":
            return [(table.flipper_motor, 1)]
        if action.name == "cover":
            return [(table.cover_motor, c) for c in _chunks(action.value - before[0])]
    else:
        g = 0 if action.part == table.faces[0] else 1
        if action.name == "rotate":
            return [(table.rotate_motors[g], action.value)]
        if action.name == "grip":
            return [(table.grip_motors[g], 1 if action.value else -1)]
    raise PlanError(f"{type(mechanism).__name__}: no motor for action {action}")


def _label(action: Action) -> str:
    """An action as the events and the journal name it: ``spin(+1)``, ``held_spin(-1)``,
    ``flip``, ``cover_close(1)`` / ``cover_open``, ``rotate[D](+1)``, ``close[B]`` /
    ``open[B]``."""
    if action.name == "cover":
        return f"cover_close({action.value})" if action.value else "cover_open"
    if action.name == "grip":
        return f"{'close' if action.value else 'open'}[{action.part}]"
    return str(action)


def _find_step(mechanism: Mechanism, parts: PartsState, planned: PlannedAction) -> Step:
    steps = mechanism.turn_steps(parts) if planned.move is not None else mechanism.free_steps(parts)
    for step in steps:
        if step.action == planned.action:
            return step
    raise PlanError(f"action {planned.action} is not possible with the parts at {parts}")


def wire_program(
    table: TurntableConfig | TwoGripperConfig,
    mechanism: Mechanism,
    actions: Sequence[PlannedAction],
    start: PartsState,
) -> list[WireAction]:
    """The wire moves of ``actions`` (a plan from ``start``, the identity orientation), each
    with its physical effect, and the orientation and parts' state after it."""
    fr = frames(mechanism.n)
    orientation, parts = 0, start
    out: list[WireAction] = []
    for planned in actions:
        step = _find_step(mechanism, parts, planned)
        if step.effect is not None:
            if planned.move is None:  # a whole-cube rotation of the machine
                orientation = int(fr.after[orientation, fr.of(step.effect)])
            else:  # Q[A] == M[Q']: Q' = M^-1[Q[A]]
                inverse = np.argsort(move_permutation(planned.move, mechanism.n))
                orientation = fr.of(inverse[fr.perms[orientation][step.effect]])
        moves = _motor_moves(table, mechanism, step, parts)
        effect = effect_moves(step.effect, mechanism.n)
        for i, (motor, turns) in enumerate(moves):
            last = i == len(moves) - 1
            if not last and step.action.name == "cover":  # split: where this one leaves it
                parts = (parts[0] + turns, *parts[1:])
            out.append(
                WireAction(
                    _label(planned.action),
                    motor,
                    turns,
                    effect if last else (),
                    planned.seconds if last else 0.0,
                    orientation,
                    step.after if last else parts,
                )
            )
        parts = step.after
    return out
