"""The planner on big cubes: grippers holding 1..max_depth layers, wide and inner-slice turns
re-expressed as motor turns at a depth, and the refusal of a move no gripper can hold."""

from __future__ import annotations

import random

import pytest

from robot.config import MotorConfig, MotorsConfig
from robot.errors import PlanError
from robot.planner import Planner
from solver.cost import CostModel
from solver.cube.facelets import Cube, cubes_equal_up_to_rotation
from solver.cube.geometry import Face
from solver.cube.notation import OPPOSITE, Move, format_moves, parse

COST = CostModel()


def deep(max_depth: int, *, simultaneous: bool = True, faces: str = "URFDLB") -> MotorsConfig:
    return MotorsConfig.model_validate(
        {
            "simultaneous": simultaneous,
            **{
                name: MotorConfig(motor="URFDLB".index(name), max_depth=max_depth) for name in faces
            },
        }
    )


def big_cube_tokens(n: int) -> list[str]:
    """Outer, wide (every depth), inner slices (every layer), middles, rotations on an N cube."""
    tokens = [*"URFDLBxyz"]
    for face in "URFDLB":
        tokens += [f"{face}w", *(f"{k}{face}w" for k in range(3, n))]
        tokens += [f"{k}{face}" for k in range(2, n)]
    if n % 2:
        tokens += ["M", "E", "S"]
    return tokens


def random_sequence(rng: random.Random, n: int, length: int) -> list[Move]:
    tokens = big_cube_tokens(n)
    return parse(" ".join(rng.choice(tokens) + rng.choice(["", "'", "2"]) for _ in range(length)))


@pytest.mark.parametrize(
    ("n", "max_depth"), [(4, 2), (5, 2), (6, 3), (7, 3), (7, 6)], ids=lambda v: str(v)
)
def test_every_block_turn_runs_with_enough_depth(n: int, max_depth: int) -> None:
    """Random sequences of every kind of move: the motor program turns the physical cube
    exactly as the notation turns it (up to the whole cube's orientation), with no move deeper
    than the grippers hold and no simultaneous pair whose grips overlap."""
    planner = Planner(deep(max_depth), COST, n)
    rng = random.Random(n * 100 + max_depth)
    for _ in range(6):
        start = Cube.solved(n).apply(random_sequence(rng, n, 12))
        sequence = random_sequence(rng, n, 30)
        program = planner.plan(sequence)
        assert all(1 <= m.depth <= min(max_depth, n - 1) for m in program.moves), str(program)
        for a, b in zip(program.moves, program.moves[1:], strict=False):
            if a.simultaneous_with_next:
                assert b.face is OPPOSITE[a.face]
                assert a.depth + b.depth <= n
        assert cubes_equal_up_to_rotation(start.apply(program.face_moves), start.apply(sequence)), (
            format_moves(sequence),
            str(program),
        )
        assert [w.depth for w in program.wire_moves()] == [m.depth for m in program.moves]


def test_wide_turn_is_one_motor_gripping_two_layers() -> None:
    """Rw: motor R holds 2 layers. 3Lw' would need L to hold 3; its complement is R's outer
    layer turned back (the frame follows the rotation). One axis: both merge into one run."""
    program = Planner(deep(2), COST, 4).plan(parse("Rw 3Lw'"))
    assert [(m.face, m.depth, m.turns) for m in program.moves] == [(Face.R, 1, -1), (Face.R, 2, 1)]
    assert [(w.motor, w.depth) for w in program.wire_moves()] == [(1, 1), (1, 2)]
    assert str(program) == "R' Rw"


def test_inner_slice_chooses_the_cheaper_of_its_forms() -> None:
    """2R on a 4x4: one simultaneous pair (R 1 layer back + L 2 layers) beats two turns of R
    (2 layers, then 1 back); without simultaneous turns the two forms cost the same."""
    together = Planner(deep(2), COST, 4).plan(parse("2R"))
    assert together.groups == 1 and len(together.moves) == 2
    assert {(m.face, m.depth) for m in together.moves} == {(Face.R, 1), (Face.L, 2)}
    apart = Planner(deep(2, simultaneous=False), COST, 4).plan(parse("2R"))
    assert apart.groups == 2
    assert apart.estimate_s > together.estimate_s
    for program in (together, apart):
        assert cubes_equal_up_to_rotation(
            Cube.solved(4).apply(program.face_moves), Cube.solved(4).apply("2R")
        )


def test_inner_slice_on_a_deep_side_uses_the_same_motor_twice() -> None:
    """2R on a 6x6 with grippers of 2 layers: the pair needs L to hold 4, so R turns twice."""
    program = Planner(deep(2), COST, 6).plan(parse("2R"))
    assert [(m.face, m.depth) for m in program.moves] == [(Face.R, 1), (Face.R, 2)]
    assert program.groups == 2


def test_a_move_deeper_than_max_depth_is_refused_naming_the_move_and_the_field() -> None:
    with pytest.raises(PlanError) as caught:
        Planner(deep(1), COST, 4).plan(parse("R U 2R' F"))
    message = str(caught.value)
    assert "cannot execute 2R'" in message
    assert "[motors.R] max_depth = 1" in message and "[motors.L] max_depth = 1" in message
    assert "motor R gripping 2 layers" in message
    with pytest.raises(PlanError, match=r"cannot execute 3Rw .*\[motors.L\] max_depth = 2"):
        Planner(deep(2), COST, 7).plan(parse("3Rw"))


def test_a_face_without_a_motor_is_refused_for_deep_turns() -> None:
    """A five-motor robot (no D) with grippers of 2 layers on a 5x5: 3Dw runs as U gripping
    the other 2 layers; 2D would need D's gripper at depth 2 or U's at 3 or 4, and is
    refused."""
    motors = deep(2, faces="URFLB")
    planner = Planner(motors, COST, 5)
    program = planner.plan(parse("3Dw"))
    assert [(m.face, m.depth) for m in program.moves] == [(Face.U, 2)]
    with pytest.raises(PlanError, match=r"D has no motor \(\[motors.D\] missing\)"):
        planner.plan(parse("2D"))


def test_max_depth_and_depth_layers_exclude_each_other() -> None:
    with pytest.raises(ValueError, match="exclude each other"):
        MotorConfig(motor=0, max_depth=3, depth_layers=2)
    assert MotorConfig(motor=0, max_depth=9).depths(4) == (1, 2, 3)
    assert MotorConfig(motor=0, depth_layers=2).depths(4) == (2,)
