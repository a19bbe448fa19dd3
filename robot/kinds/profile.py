"""A mechanism kind in a robot profile: ``[robot] kind`` and the kind's own table.

::

    [robot]
    kind = "turntable"            # "six-face" (default) | "turntable" | "two-gripper"

    [robot.turntable]             # turntable + flipper + cover (CUBOTino, MultiCuber-like)
    table_motor = 3               # the wire's motor numbers (0..5) of the three parts
    flipper_motor = 1
    cover_motor = 0
    table_positions = [-1, 0, 1]  # quarter turns a servo turntable reaches; [] = a stepper
    cover_depths = [1]            # layers the closed cover leaves free below it
    flip = "x"                    # the whole-cube rotation one flip makes
    spin_quarter_s = 0.35 ...     # seconds of each action (the planner's cost model)

    [robot.two_gripper]           # two arms that rotate, open and close
    faces = ["D", "B"]            # the faces the arms hold
    rotate_motors = [0, 1]        # per arm, the motor that rotates it ...
    grip_motors = [3, 4]          # ... and the one that opens and closes it
    angles = [-1, 0, 1]           # quarter turns an arm reaches; [] = unlimited
    depth = 1                     # layers an arm turns

:func:`build_mechanism` makes the :class:`~robot.kinds.mechanism.Mechanism` of a profile;
:func:`largest_n` says which cube sizes it can solve (every block turn of an N cube must be
reachable: a cover or gripper that leaves ``k`` layers free turns the bottom ``k`` layers, or,
the cube turned over, the other ``N - k``). How each action reaches the firmware is
:mod:`robot.kinds.wire`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from robot.errors import PlanError
from robot.kinds.gripper import GripperTiming, TwoGripper
from robot.kinds.mechanism import Mechanism
from robot.kinds.turntable import Turntable, TurntableTiming
from solver.cube.geometry import Face
from solver.cube.notation import OPPOSITE, Move

__all__ = [
    "KIND_NAMES",
    "MAX_SIZE",
    "Kind",
    "TurntableConfig",
    "TwoGripperConfig",
    "build_mechanism",
    "depths_reach",
    "largest_n",
]

Kind = Literal["six-face", "turntable", "two-gripper"]
KIND_NAMES: tuple[Kind, ...] = ("six-face", "turntable", "two-gripper")
#: the largest cube the solver engines handle (``[robot] cube_size``'s bound)
MAX_SIZE = 7

_Motor = Annotated[int, Field(ge=0, le=5)]
_Seconds = Annotated[float, Field(gt=0, le=30)]


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _distinct_motors(named: dict[str, int]) -> None:
    seen: dict[int, str] = {}
    for name, motor in named.items():
        if motor in seen:
            raise ValueError(
                f"{name}: motor {motor} is already the {seen[motor]}; every part needs its own "
                "motor number (0..5)"
            )
        seen[motor] = name


class TurntableConfig(_Table):
    """``[robot.turntable]``: a turntable, a flipper and a cover (or a big-cube gripper that
    holds at several depths)."""

    table_motor: _Motor = 3
    flipper_motor: _Motor = 1
    cover_motor: _Motor = 0
    #: quarter turns from the start a servo turntable reaches (CUBOTino: -1, 0, 1); empty: a
    #: stepper turntable that turns without limits
    table_positions: tuple[int, ...] = (-1, 0, 1)
    #: layers the closed cover leaves free below it (one per depth the cover or gripper holds)
    cover_depths: tuple[int, ...] = (1,)
    flip: Literal["x", "x'", "z", "z'"] = "x"
    spin_quarter_s: _Seconds = 0.35
    spin_half_s: _Seconds = 0.60
    held_quarter_s: _Seconds = 0.45
    held_half_s: _Seconds = 0.75
    flip_s: _Seconds = 0.70
    cover_close_s: _Seconds = 0.25
    cover_open_s: _Seconds = 0.20
    #: search for the solution whose plan is fastest (3x3 two-phase only); off: the shortest
    #: solution found, then planned (the CUBOTino way)
    cooptimise: bool = True

    @model_validator(mode="after")
    def _check(self) -> TurntableConfig:
        _distinct_motors(
            {
                "table_motor": self.table_motor,
                "flipper_motor": self.flipper_motor,
                "cover_motor": self.cover_motor,
            }
        )
        if self.table_positions:
            if 0 not in self.table_positions:
                raise ValueError(
                    f"table_positions: {list(self.table_positions)} must include 0 (where the "
                    "table starts)"
                )
            if any(abs(p) > 2 for p in self.table_positions):
                raise ValueError(
                    f"table_positions: {list(self.table_positions)}; a servo reaches at most "
                    "two quarter turns either way (-2..2); use [] for a stepper turntable"
                )
            if len(set(self.table_positions)) != len(self.table_positions):
                raise ValueError(f"table_positions: {list(self.table_positions)} repeats one")
        if not self.cover_depths:
            raise ValueError("cover_depths: give at least one depth (1: CUBOTino's cover)")
        if any(k < 1 for k in self.cover_depths) or len(set(self.cover_depths)) != len(
            self.cover_depths
        ):
            raise ValueError(
                f"cover_depths: {list(self.cover_depths)}; depths are distinct layer counts >= 1"
            )
        return self

    @property
    def timing(self) -> TurntableTiming:
        return TurntableTiming(
            self.spin_quarter_s,
            self.spin_half_s,
            self.held_quarter_s,
            self.held_half_s,
            self.flip_s,
            self.cover_close_s,
            self.cover_open_s,
        )


class TwoGripperConfig(_Table):
    """``[robot.two_gripper]``: two arms on two faces, each rotating and opening/closing."""

    faces: tuple[Literal["U", "R", "F", "D", "L", "B"], Literal["U", "R", "F", "D", "L", "B"]] = (
        "D",
        "B",
    )
    rotate_motors: tuple[_Motor, _Motor] = (0, 1)
    grip_motors: tuple[_Motor, _Motor] = (3, 4)
    #: quarter turns from the start an arm reaches (a 180° servo: -1, 0, 1); empty: unlimited
    angles: tuple[int, ...] = (-1, 0, 1)
    depth: Annotated[int, Field(ge=1, le=MAX_SIZE - 1)] = 1
    rotate_quarter_s: _Seconds = 0.20
    rotate_half_s: _Seconds = 0.35
    open_s: _Seconds = 0.12
    close_s: _Seconds = 0.12
    cooptimise: bool = True

    @model_validator(mode="after")
    def _check(self) -> TwoGripperConfig:
        a, b = self.faces
        if a == b:
            raise ValueError(f"faces: both arms hold {a}; give two different faces")
        if OPPOSITE[Face[a]] is Face[b]:
            raise ValueError(
                f"faces: {a} and {b} are opposite; two opposed arms can only ever turn those two "
                "faces (no re-orientation brings a third face to an arm), so they cannot solve a "
                "cube; hold two adjacent faces (e.g. D and B)"
            )
        _distinct_motors(
            {
                f"rotate_motors[{a}]": self.rotate_motors[0],
                f"rotate_motors[{b}]": self.rotate_motors[1],
                f"grip_motors[{a}]": self.grip_motors[0],
                f"grip_motors[{b}]": self.grip_motors[1],
            }
        )
        if self.angles and 0 not in self.angles:
            raise ValueError(f"angles: {list(self.angles)} must include 0 (where the arms start)")
        if any(abs(x) > 2 for x in self.angles) or len(set(self.angles)) != len(self.angles):
            raise ValueError(
                f"angles: {list(self.angles)}; distinct quarter turns within -2..2 ([] for "
                "unlimited arms)"
            )
        return self

    @property
    def timing(self) -> GripperTiming:
        return GripperTiming(self.rotate_quarter_s, self.rotate_half_s, self.open_s, self.close_s)


def depths_reach(depths: tuple[int, ...], n: int) -> bool:
    """Whether turns that leave ``depths`` layers free (or, the cube turned over, the other
    ``n - k``) make every block turn of an ``n`` cube: each depth 1..n/2 from some side."""
    usable = {k for k in depths if 1 <= k < n} | {n - k for k in depths if 1 <= k < n}
    return all(j in usable for j in range(1, n // 2 + 1))


def largest_n(kind: Kind, table: TurntableConfig | TwoGripperConfig | None) -> int:
    """The largest cube (up to :data:`MAX_SIZE`) the mechanism can solve; 0 if none."""
    if kind == "six-face" or table is None:
        return MAX_SIZE
    sizes = [n for n in range(2, MAX_SIZE + 1) if depths_reach(_depths(table), n)]
    return max(sizes, default=0)


def build_mechanism(
    kind: Kind, table: TurntableConfig | TwoGripperConfig | None, n: int
) -> Mechanism:
    """The mechanism of a profile's kind for an ``n`` cube (ValueError for six-face, which
    has no :class:`Mechanism`: :mod:`robot.planner` plans it)."""
    if isinstance(table, TurntableConfig) and kind == "turntable":
        return Turntable(
            n=n,
            timing=table.timing,
            table_positions=table.table_positions or None,
            depths=tuple(sorted(k for k in table.cover_depths if k < n)),
            flip=table.flip,
        )
    if isinstance(table, TwoGripperConfig) and kind == "two-gripper":
        return TwoGripper(
            n=n,
            timing=table.timing,
            positions=(Face[table.faces[0]], Face[table.faces[1]]),
            angles=table.angles or None,
            depth=table.depth,
        )
    raise ValueError(f"no mechanism for kind {kind!r} with {type(table).__name__}")


def table_defaults(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """``[robot]`` as read, with the kind's table added (empty: its defaults) when missing."""
    key = {"turntable": "turntable", "two-gripper": "two_gripper"}.get(kind)
    if key is not None and key not in data:
        return {**data, key: {}}
    return data


__all__ += ["table_defaults"]


def describe(kind: Kind, table: TurntableConfig | TwoGripperConfig | None, n: int) -> list[str]:
    """What the mechanism is and can do, for ``cuberobot config check`` (one line each, no
    leading label): its parts and motors, its actions and their times, the cube sizes it
    solves, and the planned robot time of a face turn on this profile's cube (a sample of
    random solutions; :class:`PlanError` if some face turn cannot be made)."""
    from robot.kinds.planner import KindPlanner
    from robot.kinds.wire import block_moves
    from solver.cube.notation import invert
    from solver.scramble import random_moves

    largest = largest_n(kind, table)
    if kind == "six-face" or table is None:
        return [f"six-face: a motor turns each face; cubes N = 2..{largest}"]
    lines: list[str] = []
    if isinstance(table, TurntableConfig):
        reach = (
            "any angle (stepper)"
            if not table.table_positions
            else f"{min(table.table_positions):+d}..{max(table.table_positions):+d} quarter turns"
        )
        depths = ", ".join(str(k) for k in sorted(table.cover_depths))
        lines += [
            f"turntable: table motor {table.table_motor} ({reach}), flipper motor "
            f"{table.flipper_motor} (flip {table.flip}), cover motor {table.cover_motor} "
            f"(leaves {depths} layer(s) free)",
            f"actions: spin {table.spin_quarter_s}/{table.spin_half_s} s, held spin "
            f"{table.held_quarter_s}/{table.held_half_s} s (quarter/half), flip {table.flip_s} s, "
            f"cover close {table.cover_close_s} s / open {table.cover_open_s} s",
        ]
    else:
        reach = (
            "unlimited"
            if not table.angles
            else f"{min(table.angles):+d}..{max(table.angles):+d} quarter turns"
        )
        lines += [
            f"two-gripper: arms on {table.faces[0]} (rotate motor {table.rotate_motors[0]}, grip "
            f"motor {table.grip_motors[0]}) and {table.faces[1]} (rotate motor "
            f"{table.rotate_motors[1]}, grip motor {table.grip_motors[1]}), {reach}, "
            f"{table.depth} layer(s) each",
            f"actions: rotate {table.rotate_quarter_s}/{table.rotate_half_s} s (quarter/half), "
            f"open {table.open_s} s, close {table.close_s} s",
        ]
    sizes = [m for m in range(2, MAX_SIZE + 1) if depths_reach(_depths(table), m)]
    lines.append(
        f"solves: N = {', '.join(str(m) for m in sizes)} (largest N = {largest})"
        if sizes
        else "solves: no cube size (add depths)"
    )
    planner = KindPlanner(build_mechanism(kind, table, n))
    for face in Face:
        for turns in (1, 2, -1):
            move = Move.block(face, 1, 1, turns)
            if not planner.can_make(move):
                raise PlanError(f"this {kind} robot cannot make {move} on an N={n} cube")
    samples = [invert(random_moves(n, 20, seed)) for seed in range(3)]
    seconds = sum(planner.home(planner.plan(block_moves(s, n))).seconds for s in samples)
    lines.append(
        f"plans: {seconds / (20 * len(samples)):.2f} s per solution move on N={n} (the fastest "
        "actions for 3 random 20-move sequences)"
    )
    return lines


def _depths(table: TurntableConfig | TwoGripperConfig) -> tuple[int, ...]:
    return table.cover_depths if isinstance(table, TurntableConfig) else (table.depth,)


__all__ += ["describe"]
