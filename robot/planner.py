"""The move planner: a solver's sequence → this robot's motor program.

A face-turning robot holds the cube still, so it can only turn outer blocks of the faces that
have motors: each motor's gripper holds 1..``max_depth`` layers, chosen move by move (or a
fixed ``depth_layers``). The planner re-expresses every move in those terms, in four passes:

1. **Fixed centres** (seed 001's fixed-orientation rule). The solver's notation frame turns with
   ``x y z`` rotations and with slice and wide moves (which move centres); the robot's frame never
   does. An *orientation* maps each face name of the notation frame to the physical face that
   currently shows it (identity at the start). A rotation only updates the orientation. A block
   of layers ``lo..hi`` seen from face ``F`` (opposite face ``O``) turned ``t`` can run as

   * ``lo = 1``: motor ``F`` gripping ``hi`` layers; or motor ``O`` gripping the other
     ``N - hi`` layers and turning them back, the frame turning with ``F`` (``Rw = L x``):
     ``block(F, 1..hi, t) = rot(F, t) · block(O, 1..N-hi, t)``;
   * an inner block (``lo > 1``, e.g. ``2R``, ``M``): two turns of motor ``F`` (``1..hi`` by
     ``t``, ``1..lo-1`` back); or two of motor ``O`` (``1..N-lo+1`` by ``-t``, ``1..N-hi`` by
     ``t``); or one turn of each, the frame turning with ``F`` (``M = R L' x'``):
     ``block(F, lo..hi, t) = rot(F, t) · block(F, 1..lo-1, -t) · block(O, 1..N-hi, t)``

   (all on one axis, so they commute). Of the ways the grippers allow, the cheapest under the
   cost model runs (the last is one simultaneous pair where the profile allows pairs); a move
   no gripper can hold is refused with :class:`~robot.errors.PlanError` naming the move and the
   ``max_depth`` it needs. (The seed's example "orange top, green front: U becomes L'" has the
   direction wrong: with orange on top, U turns the orange face clockwise seen from outside
   it, which is L; the facelet model confirms ``z U z' == L``.)
2. **Simplify**: consecutive turns on one axis commute; each run is merged into at most one turn
   per face and depth (``R L R' L`` → ``L2``), in the order U R F before D L B.
3. **Missing faces**: a turn of a face with no motor is replaced by the cheapest shortest
   sequence over the other five faces (:mod:`robot.replacements`; 13 turns in 7 motion groups
   for any D turn), then simplified again.
4. **Group**: the two turns of an axis run become a simultaneous pair when the profile allows it
   and their grips do not overlap (depths summing to at most N).

The result, :class:`MotorProgram`, holds the motor moves (wire form with each move's depth, for
the firmware link), the same moves as physical outer-block turns (to track the physical cube
move by move), the final orientation and the estimated robot time under the profile's cost
model.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NoReturn

from firmware_protocol.moves import Move as WireMove
from robot.config import MotorsConfig
from robot.errors import PlanError
from robot.replacements import face_rotations, replacement_for
from solver.cost import CostModel
from solver.cube.geometry import FACE_FRAMES, Face, face_from_normal
from solver.cube.notation import OPPOSITE, Move, format_moves

__all__ = [
    "MotorProgram",
    "Orientation",
    "PlannedMove",
    "Planner",
    "rotation_map",
]

logger = logging.getLogger(__name__)

#: notation frame face -> physical face
Orientation = dict[Face, Face]
#: one outer-block turn a candidate needs: physical face, layers, signed quarter turns
_Turn = tuple[Face, int, int]

_AXIS = {Face.U: 0, Face.D: 0, Face.R: 1, Face.L: 1, Face.F: 2, Face.B: 2}


def _norm_turns(turns: int) -> int:
    """1, 2 or -1 for a non-zero quarter count (0 stays 0)."""
    return {0: 0, 1: 1, 2: 2, 3: -1}[turns % 4]


def rotation_map(face: Face, turns: int) -> dict[Face, Face]:
    """Where each face's content goes when the whole cube turns like ``face`` by ``turns``."""
    q = turns % 4
    # Find the rotation whose quarter-turn cycle about ``face`` matches: pick among the 24.
    for mapping in face_rotations():
        if mapping[face] is not face:
            continue
        # the clockwise quarter turn about face carries its "up" neighbour to its "right" one
        if q == 0 and all(mapping[f] is f for f in Face):
            return mapping
        if q and _is_quarter_power(mapping, face, q):
            return mapping
    raise AssertionError(f"no rotation about {face.name} by {turns}")  # pragma: no cover


def _clockwise_neighbours(face: Face) -> list[Face]:
    """The four neighbours of ``face`` in the order a clockwise turn carries them."""
    _, right, up = FACE_FRAMES[face]
    down = (-up[0], -up[1], -up[2])
    left = (-right[0], -right[1], -right[2])
    # clockwise seen from outside: up -> right -> down -> left
    return [face_from_normal(v) for v in (up, right, down, left)]


def _is_quarter_power(mapping: dict[Face, Face], face: Face, q: int) -> bool:
    ring = _clockwise_neighbours(face)
    return all(mapping[ring[i]] is ring[(i + q) % 4] for i in range(4))


@dataclass(frozen=True, slots=True)
class PlannedMove:
    """One motor move: the physical face, signed quarter turns (clockwise seen from outside the
    face), the motor number on the wire, and whether it starts together with the next move."""

    face: Face
    turns: int
    motor: int
    simultaneous_with_next: bool = False
    reversed: bool = False
    depth: int = 1

    def to_wire(self) -> WireMove:
        turns = -self.turns if self.reversed else self.turns
        return WireMove(self.motor, turns, self.simultaneous_with_next, self.depth)

    def as_move(self) -> Move:
        """The physical turn (outer, or the gripper's block of layers), to track the cube."""
        return Move.block(self.face, 1, self.depth, self.turns)

    def __str__(self) -> str:
        suffix = {1: "", 2: "2", -1: "'", -2: "2'"}[self.turns]
        wide = f"{'' if self.depth == 2 else self.depth}{self.face.name}w"
        name = self.face.name if self.depth == 1 else wide
        return name + suffix + ("+" if self.simultaneous_with_next else "")


@dataclass(frozen=True, slots=True)
class MotorProgram:
    """A solution as this robot executes it."""

    moves: tuple[PlannedMove, ...]
    source: tuple[Move, ...]
    orientation: tuple[tuple[Face, Face], ...]
    replaced_turns: int
    estimate_s: float
    groups: int
    notes: tuple[str, ...] = field(default=())

    @property
    def face_moves(self) -> tuple[Move, ...]:
        """Physical outer turns in execution order (apply them to the scanned cube)."""
        return tuple(m.as_move() for m in self.moves)

    def wire_moves(self) -> list[WireMove]:
        return [m.to_wire() for m in self.moves]

    def __len__(self) -> int:
        return len(self.moves)

    def __str__(self) -> str:
        return " ".join(str(m) for m in self.moves).replace("+ ", "+")

    def to_dict(self) -> dict[str, object]:
        return {
            "moves": str(self),
            "count": len(self.moves),
            "groups": self.groups,
            "replaced_turns": self.replaced_turns,
            "estimate_s": round(self.estimate_s, 4),
        }


class Planner:
    """Plans motor programs for one robot (motors and cost model from its profile)."""

    def __init__(self, motors: MotorsConfig, cost_model: CostModel, n: int = 3) -> None:
        self.motors = motors
        self.cost_model = cost_model
        self.n = n
        self._faces = motors.faces
        #: the outer-block turns chosen for a block turn (:meth:`to_physical`), by its physical
        #: face, layers and turns: the profile and the cost model are fixed, and plans repeat
        #: the same few turns
        self._chosen: dict[tuple[Face, int, int, int], tuple[tuple[Move, ...], bool]] = {}
        for face in self._faces:
            cfg = motors.motor_of(face)
            assert cfg is not None
            if cfg.depth_layers >= n:
                raise PlanError(
                    f"motor {face.name} turns {cfg.depth_layers} layers, but an N={n} cube has "
                    f"{n}; its gripper would turn the whole cube"
                )
        if self.motors.missing and any(
            (c := motors.motor_of(f)) is not None and c.depth_layers != 1 for f in self._faces
        ):
            raise PlanError(
                "a robot with a face missing needs outer-layer grippers (depth_layers = 1) on "
                "the other five faces"
            )

    # --- pass 1: fixed centres ----------------------------------------------------------------
    def _grips(self, face: Face, depth: int) -> bool:
        """Whether a turn of ``depth`` outer layers of ``face`` can run (a face without a motor
        only at depth 1: pass 3 replaces its turns)."""
        cfg = self.motors.motor_of(face)
        return depth == 1 if cfg is None else depth in cfg.depths(self.n)

    def _grip_text(self, face: Face) -> str:
        cfg = self.motors.motor_of(face)
        if cfg is None:
            return f"{face.name} has no motor ([motors.{face.name}] missing)"
        if cfg.max_depth > 1:
            return f"[motors.{face.name}] max_depth = {cfg.max_depth}"
        return f"[motors.{face.name}] max_depth = 1" + (
            f" (depth_layers = {cfg.depth_layers})" if cfg.depth_layers != 1 else ""
        )

    def _candidate_cost(self, turns: Sequence[_Turn]) -> float:
        """Robot seconds of a candidate (a face without a motor: the cost of its replacement)."""
        moves: list[Move] = []
        for face, _, q in turns:
            if face in self._faces:
                moves.append(Move.outer(face, q))
            else:
                moves.extend(replacement_for(face, q, self._faces, self.cost_model))
        return self.cost_model.estimate(moves)

    def _block_candidates(
        self, physical: Face, lo: int, hi: int, turns: int
    ) -> list[tuple[list[_Turn], bool]]:
        """Ways to turn layers ``lo..hi`` (from ``physical``, ``hi < N``) with outer-block
        turns: ``(turns, rotates)``, ``rotates`` when the notation frame turns with the block's
        face (the motors turned the complement instead)."""
        n, opposite = self.n, OPPOSITE[physical]
        if lo == 1:
            return [([(physical, hi, turns)], False), ([(opposite, n - hi, turns)], True)]
        return [
            # the same motor twice: layers 1..hi turned, layers 1..lo-1 back
            ([(physical, hi, turns), (physical, lo - 1, -turns)], False),
            # the opposite motor twice, seen from its side
            ([(opposite, n - lo + 1, -turns), (opposite, n - hi, turns)], False),
            # both motors (a simultaneous pair where allowed): the rotation, less both sides
            ([(physical, lo - 1, -turns), (opposite, n - hi, turns)], True),
        ]

    def _refuse(
        self, move: Move, physical: Face, options: list[tuple[list[_Turn], bool]]
    ) -> NoReturn:
        needs = "; or ".join(
            " and ".join(f"motor {f.name} gripping {d} layer{'s' * (d > 1)}" for f, d, _ in t)
            for t, _ in options
        )
        faces = (physical, OPPOSITE[physical])
        raise PlanError(
            f"this robot cannot execute {move} on the {self.n}x{self.n}x{self.n} cube: it needs "
            f"{needs}; the profile gives {', '.join(self._grip_text(f) for f in faces)}. Raise "
            "max_depth of those motors in the profile (a gripper holding more layers), or solve "
            "with a robot that grips deeper"
        )

    def to_physical(self, moves: Iterable[Move]) -> tuple[list[Move], Orientation]:
        """Outer-block turns of physical faces (``Move.block(face, 1, depth, turns)``, depth
        within what that face's gripper holds; faces without a motor included at depth 1, to
        be replaced later), and the final orientation. Of the ways to turn a block, the
        cheapest under the cost model runs."""
        n = self.n
        orient: Orientation = {f: f for f in Face}
        out: list[Move] = []

        def rotate(face: Face, turns: int) -> None:
            mapping = rotation_map(face, turns)
            inverse = {v: k for k, v in mapping.items()}
            # the content named f now is the content that was named inverse[f]
            new = {f: orient[inverse[f]] for f in Face}
            orient.clear()
            orient.update(new)

        for move in moves:
            face, (lo, hi), turns = move.face, move.layers(n), move.turns
            if lo == 1 and hi == n:
                rotate(face, turns)
                continue
            if hi == n:  # a block that holds the far face: the outer block seen from there
                face, lo, hi, turns = OPPOSITE[face], 1, n - lo + 1, -turns
            key = (orient[face], lo, hi, turns)
            choice = self._chosen.get(key)
            if choice is None:
                options = self._block_candidates(orient[face], lo, hi, turns)
                feasible = [
                    (self._candidate_cost(t), k, t, r)
                    for k, (t, r) in enumerate(options)
                    if all(self._grips(f, d) for f, d, _ in t)
                ]
                if not feasible:
                    self._refuse(move, orient[face], options)
                _, _, chosen, rotates = min(feasible)
                blocks = tuple(Move.block(f, 1, d, _norm_turns(q)) for f, d, q in chosen)
                choice = self._chosen[key] = (blocks, rotates)
            blocks, rotates = choice
            out.extend(blocks)
            if rotates:
                rotate(face, turns)
        return out, orient

    # --- pass 2: simplify ---------------------------------------------------------------------
    @staticmethod
    def simplify(moves: Sequence[Move]) -> list[Move]:
        """Merge each run of same-axis outer-block turns into at most one turn per face and
        depth (turns of one axis commute)."""
        out: list[Move] = []
        i = 0
        while i < len(moves):
            axis = _AXIS[moves[i].face]
            j = i
            totals: dict[tuple[Face, int], int] = {}
            while j < len(moves) and _AXIS[moves[j].face] == axis:
                key = (moves[j].face, moves[j].hi)
                totals[key] = totals.get(key, 0) + moves[j].turns
                j += 1
            # canonical: U R F before D L B, shallower first
            for face, depth in sorted(totals, key=lambda k: (int(k[0]), k[1])):
                q = _norm_turns(totals[face, depth])
                if q:
                    out.append(Move.block(face, 1, depth, q))
            i = j
        # merging can make new neighbours of one axis meet: repeat until stable
        if len(out) < len(moves) and any(
            a.face is b.face and a.hi == b.hi for a, b in itertools.pairwise(out)
        ):
            return Planner.simplify(out)
        return out

    # --- pass 3: replace faces without motors ---------------------------------------------------
    def replace_missing(self, moves: Sequence[Move]) -> tuple[list[Move], int]:
        out: list[Move] = []
        replaced = 0
        for move in moves:
            if move.face in self._faces:
                out.append(move)
                continue
            replaced += 1
            out.extend(replacement_for(move.face, move.quarter_turns, self._faces, self.cost_model))
        return out, replaced

    # --- pass 4: group and map to motors ------------------------------------------------------
    def _motor_moves(self, moves: Sequence[Move]) -> list[PlannedMove]:
        """Motor moves; two turns of opposite faces in a row start together when the profile
        allows it and their grips do not overlap (depths summing to at most N)."""
        planned: list[PlannedMove] = []
        for k, move in enumerate(moves):
            cfg = self.motors.motor_of(move.face)
            if cfg is None:  # pragma: no cover - pass 3 removed them
                raise PlanError(f"no motor turns {move.face.name}")
            together = (
                self.motors.simultaneous
                and k + 1 < len(moves)
                and moves[k + 1].face is OPPOSITE[move.face]
                and move.hi + moves[k + 1].hi <= self.n
                and not (planned and planned[-1].simultaneous_with_next)
            )
            planned.append(
                PlannedMove(move.face, move.turns, cfg.motor, together, cfg.reversed, move.hi)
            )
        return planned

    def _estimate(self, planned: Sequence[PlannedMove]) -> float:
        """Seconds under the cost model, grouped as the motors run (a turn's time does not
        depend on how many layers its gripper holds)."""
        cost = self.cost_model
        total, group, groups = 0.0, 0.0, 0
        for i, move in enumerate(planned):
            group = max(group, cost.move_time(Move.outer(move.face, move.turns)))
            if move.simultaneous_with_next:
                continue
            paired = i > 0 and planned[i - 1].simultaneous_with_next
            total += group + (cost.pair_extra_s if paired else 0.0)
            group, groups = 0.0, groups + 1
        return total + cost.settle_s * max(groups - 1, 0)

    def plan(self, moves: Iterable[Move]) -> MotorProgram:
        """The motor program for a solver sequence."""
        source = tuple(moves)
        physical, orient = self.to_physical(source)
        simple = self.simplify(physical)
        replaced_total = 0
        while any(m.face not in self._faces for m in simple):
            simple, replaced = self.replace_missing(simple)
            replaced_total += replaced
            simple = self.simplify(simple)
        planned = self._motor_moves(simple)
        groups = sum(1 for m in planned if not m.simultaneous_with_next)
        estimate = self._estimate(planned)
        notes: list[str] = []
        if replaced_total:
            notes.append(
                f"{replaced_total} turn(s) of {''.join(f.name for f in self.motors.missing)} "
                "replaced (no motor)"
            )
        if logger.isEnabledFor(logging.DEBUG):  # (the text costs more than the plan)
            logger.debug(
                "planned %s -> %s (%d moves, %d groups, %.2f s)",
                format_moves(source),
                " ".join(str(m) for m in planned),
                len(planned),
                groups,
                estimate,
            )
        return MotorProgram(
            tuple(planned),
            source,
            tuple(sorted(orient.items())),
            replaced_total,
            estimate,
            groups,
            tuple(notes),
        )

    def cost_of_face_turn(self, face: Face, turns: int = 1) -> tuple[int, int, float]:
        """(moves, motion groups, seconds) this robot needs to turn ``face`` once."""
        program = self.plan([Move.outer(face, _norm_turns(turns))])
        return len(program.moves), program.groups, program.estimate_s
