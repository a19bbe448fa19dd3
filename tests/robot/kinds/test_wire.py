"""A kind's plans on the wire and in the simulated mechanism: the motor moves each action
becomes, the journal token of each, and the simulated mechanism, driven only by those motor
moves, ending with the cube solved."""

from __future__ import annotations

import numpy as np
import pytest

from firmware_protocol.moves import Face as WireFace
from firmware_protocol.sim.motors import turn_time_s
from robot.kinds import KindPlanner
from robot.kinds.choreography import MachineState, choreograph
from robot.kinds.frames import frames, key
from robot.kinds.mechanism import Action
from robot.kinds.planner import PlannedAction
from robot.kinds.profile import TurntableConfig, TwoGripperConfig, build_mechanism
from robot.kinds.simulated import MechanismCube, motor_profiles
from robot.kinds.wire import WireAction, block_moves, wire_program
from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import Move, invert, parse
from solver.scramble import random_moves

PROFILES: dict[str, tuple[TurntableConfig | TwoGripperConfig, int]] = {
    "cubotino": (TurntableConfig(), 3),
    "bigcube-4": (TurntableConfig(table_positions=(), cover_depths=(1, 2, 3)), 4),
    "bigcube-5": (TurntableConfig(table_positions=(), cover_depths=(1, 2)), 5),
    "two-gripper": (TwoGripperConfig(), 3),
    "two-gripper-unlimited": (TwoGripperConfig(angles=(), faces=("R", "D")), 3),
}


def _same_up_to_rotation(a: Cube, b: Cube) -> bool:
    return any(np.array_equal(a.flat[q], b.flat) for q in frames(a.n).perms)


@pytest.mark.parametrize("n", [3, 4, 5])
def test_block_moves_make_the_same_cube(n: int) -> None:
    extra = parse("x y' 2R M' 2-3Rw z2" if n > 3 else "x y' M' E S z2")
    for seed in range(4):
        moves = random_moves(n, 15, seed) + extra + random_moves(n, 5, seed + 100)
        blocks = block_moves(moves, n)
        assert all(m.lo == 1 and m.hi < n for m in blocks)
        start = Cube.solved(n).apply(random_moves(n, 20, seed + 7))
        assert _same_up_to_rotation(start.apply(moves), start.apply(blocks))


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_planned_wire_moves_solve_the_simulated_mechanism(name: str) -> None:
    table, n = PROFILES[name]
    kind = "turntable" if isinstance(table, TurntableConfig) else "two-gripper"
    mechanism = build_mechanism(kind, table, n)
    planner = KindPlanner(mechanism)
    fr = frames(n)
    for seed in range(3 if n == 3 else 1):
        scramble = random_moves(n, 25, seed)
        cube = Cube.solved(n).apply(scramble)
        solution = block_moves(invert(scramble), n)
        plan = planner.home(planner.plan(solution))
        actions = wire_program(table, mechanism, plan.actions, mechanism.start)
        assert actions[-1].parts == mechanism.start  # every job ends with the parts at home
        assert actions[-1].orientation == plan.orientation
        sim = MechanismCube(cube, table)
        for action in actions:
            wire = action.wire  # a valid MOVES entry (motor 0..5, count +-1/+-2)
            sim.apply(WireFace(wire.motor).name, wire.quarter_turns)
        assert sim.faults == 0 and sim.cube.is_solved(), name
        # the tracked cube (the effects) is the simulated one after every action
        tracked = cube
        for action in actions:
            tracked = action.apply(tracked)
        assert tracked == sim.cube
        # orientation: the physical cube is the notation cube (solution so far) turned by it
        done = [a for a in plan.actions if a.move is not None]
        assert len(done) >= len(solution) - 2
        notation = cube.apply(solution)
        assert np.array_equal(notation.flat[fr.perms[plan.orientation]], sim.cube.flat)
        assert sum(a.seconds for a in actions) == pytest.approx(plan.seconds)


def test_turntable_actions_on_the_documented_motors() -> None:
    table = TurntableConfig(table_motor=5, flipper_motor=2, cover_motor=4)
    mechanism = build_mechanism("turntable", table, 3)
    plan = KindPlanner(mechanism).plan(parse("D R"))
    actions = wire_program(table, mechanism, plan.actions, mechanism.start)
    by_label: dict[str, set[tuple[int, int]]] = {}
    for a in actions:
        by_label.setdefault(a.label.split("(")[0], set()).add((a.motor, a.turns))
    assert {m for m, _ in by_label["held_spin"]} == {5}
    assert by_label["flip"] == {(2, 1)}
    assert by_label["cover_close"] == {(4, 1)}  # leaving 1 layer free
    assert by_label["cover_open"] == {(4, -1)}


def test_a_deep_cover_move_is_split_into_wire_moves() -> None:
    table = TurntableConfig(table_positions=(), cover_depths=(3,))
    mechanism = build_mechanism("turntable", table, 4)
    planner = KindPlanner(mechanism)
    plan = planner.home(planner.plan([Move.block(Face.U, 1, 1, 1)]))
    actions = wire_program(table, mechanism, plan.actions, mechanism.start)
    cover = [(a.label, a.motor, a.turns) for a in actions if a.label.startswith("cover")]
    assert cover == [
        ("cover_close(3)", 0, 2),
        ("cover_close(3)", 0, 1),
        ("cover_open", 0, -2),
        ("cover_open", 0, -1),
    ]


@pytest.mark.parametrize(("depths", "between"), [((3,), 2), ((1, 2, 3), 2), ((1, 3), 2)])
def test_a_stop_inside_a_split_cover_move_leaves_a_state_a_scan_starts_from(
    depths: tuple[int, ...], between: int
) -> None:
    """Each wire move of a split cover move carries where it leaves the cover (journaled as
    the parts after it): a stop between them leaves the cover there, and the next scan
    plans from there, opening the cover before it flips (found by the chaos campaign on the
    big-cube gripper: the next scan took the cover for open, and the flipper pushed against
    it)."""
    table = TurntableConfig(table_positions=(), cover_depths=depths)
    mechanism = build_mechanism("turntable", table, 4)
    close = wire_program(table, mechanism, [PlannedAction(Action("cover", value=3), 0.45)], (0, 1))
    assert [(a.turns, a.parts) for a in close] == [(2, (between, 1)), (1, (3, 1))]
    stopped = close[0].parts  # executed; the second was interrupted
    assert stopped in mechanism.states()
    sim = MechanismCube(Cube.solved(4).apply("R U"), table)
    sim.apply("D", 1)
    sim.apply("U", close[0].turns)
    assert sim.parts == stopped
    scan = choreograph(mechanism, start=MachineState(0, stopped))
    assert scan.actions[0].action == Action("cover", value=0)
    for action in wire_program(table, mechanism, scan.actions, stopped):
        sim.apply(WireFace(action.motor).name, action.turns)
    assert sim.faults == 0


def test_gripper_actions_on_the_documented_motors() -> None:
    table = TwoGripperConfig(rotate_motors=(2, 5), grip_motors=(0, 1))
    mechanism = build_mechanism("two-gripper", table, 3)
    planner = KindPlanner(mechanism)
    plan = planner.home(planner.plan(parse("R U")))
    actions = wire_program(table, mechanism, plan.actions, mechanism.start)
    for a in actions:
        if a.label.startswith(("open", "close")):
            assert a.motor in (0, 1) and a.turns == (1 if a.label.startswith("close") else -1)
        else:
            assert a.label.startswith("rotate") and a.motor in (2, 5)


def test_token_round_trip() -> None:
    table, n = PROFILES["cubotino"]
    mechanism = build_mechanism("turntable", table, n)
    plan = KindPlanner(mechanism).plan(parse("R U F'"))
    for action in wire_program(table, mechanism, plan.actions, mechanism.start):
        again = WireAction.from_token(action.token(), action.motor, action.turns)
        assert again == action
    with pytest.raises(ValueError, match="not a mechanism action"):
        WireAction.from_token("R", 1, 1)


def test_simulated_turntable_refuses_what_the_machine_cannot_do() -> None:
    table = TurntableConfig()
    cube = Cube.solved(3).apply("R U")
    sim = MechanismCube(cube, table)
    sim.apply("U", 1)  # cover motor: close, leaving the bottom layer free
    sim.apply("R", 1)  # flipper against the closed cover: jams
    assert sim.faults == 1 and sim.cube == cube
    sim.apply("D", 1)  # held spin: the bottom layer turns
    assert sim.cube == cube.apply("D")
    sim.apply("D", 1)  # a 180° servo cannot go past +1
    assert sim.faults == 2
    sim.apply("U", -1)
    sim.apply("D", -2)  # cover open: the whole cube turns like D
    assert key(sim.cube.flat) == key(cube.apply("D y2").flat)
    sim.apply("R", 1)
    assert sim.cube == cube.apply("D y2 x")


def test_simulated_grippers_drop_nothing() -> None:
    table = TwoGripperConfig()
    cube = Cube.solved(3).apply("F")
    sim = MechanismCube(cube, table)
    sim.apply("U", 1)  # rotate the D arm, both closed: D turns
    assert sim.cube == cube.apply("D")
    sim.apply("L", -1)  # open the B arm
    sim.apply("D", -1)  # open the D arm too: the cube would fall
    assert sim.faults == 1
    sim.apply("U", -1)  # rotate D with B open: the whole cube turns like D'
    assert sim.cube == cube.apply("D y")
    sim.apply("R", 1)  # rotate the open B arm: nothing moves
    assert sim.cube == cube.apply("D y") and sim.faults == 1


def test_simulated_parts_move_at_the_profiles_pace() -> None:
    table = TurntableConfig()
    motors = motor_profiles(table)
    assert turn_time_s(motors[table.table_motor], 1) == pytest.approx(table.held_quarter_s)
    assert turn_time_s(motors[table.table_motor], -2) == pytest.approx(table.held_half_s)
    assert turn_time_s(motors[table.flipper_motor], 1) == pytest.approx(table.flip_s)
    arms = TwoGripperConfig(rotate_quarter_s=0.3, rotate_half_s=0.7, close_s=0.2)
    motors = motor_profiles(arms)
    assert turn_time_s(motors[0], 1) == pytest.approx(0.3)
    assert turn_time_s(motors[1], 2) == pytest.approx(0.6)  # 0.7 s asked: two quarters
    assert turn_time_s(motors[3], -1) == pytest.approx(0.2)
