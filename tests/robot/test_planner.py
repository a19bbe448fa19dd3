"""The planner: every profile's motor program does exactly what the solver's sequence does."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robot.config import MotorConfig, MotorsConfig, load_config
from robot.errors import PlanError
from robot.planner import Planner, rotation_map
from solver.cost import CostModel
from solver.cube.facelets import Cube, cubes_equal_up_to_rotation
from solver.cube.geometry import Face
from solver.cube.notation import Move, MoveKind, format_moves, invert, parse

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
COST = CostModel()


def motors(faces: str = "URFDLB", simultaneous: bool = True) -> MotorsConfig:
    return MotorsConfig.model_validate(
        {
            "simultaneous": simultaneous,
            **{name: MotorConfig(motor="URFDLB".index(name)) for name in faces},
        }
    )


PROFILES = {
    "six": motors(),
    "six-sequential": motors(simultaneous=False),
    "five-no-D": motors("URFLB"),
    "five-no-F": motors("URDLB"),
    "example-five": load_config(CONFIGS / "five_motor.toml").motors,
    "example-six": load_config(CONFIGS / "six_motor.toml").motors,
}

TOKENS_3 = [
    "U",
    "R",
    "F",
    "D",
    "L",
    "B",
    "M",
    "E",
    "S",
    "x",
    "y",
    "z",
    "Rw",
    "Uw",
    "Fw",
    "Dw",
    "Lw",
    "Bw",
    "r",
    "u",
    "f",
]
SUFFIXES = ["", "'", "2", "2'"]


def random_sequence(rng: random.Random, length: int, tokens: list[str]) -> list[Move]:
    return parse(" ".join(rng.choice(tokens) + rng.choice(SUFFIXES) for _ in range(length)))


def check_program(planner: Planner, start: Cube, solution: list[Move]) -> Cube:
    program = planner.plan(solution)
    for move in program.moves:
        assert move.face in planner.motors.faces, f"{move} turns a face without a motor"
    physical = start.apply(program.face_moves)
    logical = start.apply(solution)
    assert cubes_equal_up_to_rotation(physical, logical), (
        format_moves(solution),
        str(program),
    )
    return physical


@pytest.mark.parametrize("profile", sorted(PROFILES))
@pytest.mark.parametrize("seed", range(25))
def test_random_state_is_solved_by_the_motor_program(profile: str, seed: int) -> None:
    """A random state (scrambled with slices, wide moves and rotations, which move centres) and
    a solution written with them too: the robot's program leaves the cube exactly solved."""
    rng = random.Random(seed)
    scramble = random_sequence(rng, 30, TOKENS_3)
    start = Cube.solved(3).apply(scramble)
    solution = invert(scramble)
    planner = Planner(PROFILES[profile], COST, 3)
    physical = check_program(planner, start, solution)
    assert physical.is_solved()


@pytest.mark.parametrize("n", [2, 4, 5])
@pytest.mark.parametrize("profile", ["six", "five-no-D"])
def test_other_sizes_outer_turns_and_rotations(n: int, profile: str) -> None:
    rng = random.Random(n)
    tokens = ["U", "R", "F", "D", "L", "B", "x", "y", "z"]
    scramble = random_sequence(rng, 25, tokens)
    planner = Planner(PROFILES[profile], COST, n)
    start = Cube.solved(n).apply(scramble)
    assert check_program(planner, start, invert(scramble)).is_solved()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([t + s for t in TOKENS_3 for s in SUFFIXES]), max_size=20))
def test_any_sequence_equals_its_program(tokens: list[str]) -> None:
    moves = parse(" ".join(tokens))
    for name in ("six", "five-no-D"):
        check_program(Planner(PROFILES[name], COST, 3), Cube.solved(3), moves)


def test_a_planner_reused_plans_as_a_fresh_one() -> None:
    """A planner keeps the turns it chose for each block turn (by the face it lands on after
    the rotations so far): planning many sequences with one planner, the daemon's way, gives
    every sequence the program a fresh planner gives it, and refuses what a fresh one refuses."""
    rng = random.Random(7)
    for name, n in (("six", 3), ("five-no-D", 3), ("six", 4)):
        kept = Planner(PROFILES[name], COST, n)
        tokens = TOKENS_3 if n == 3 else ["U", "R", "F", "D", "L", "B", "x", "y", "z", "Rw", "Uw"]
        for _ in range(40):
            moves = random_sequence(rng, rng.randrange(1, 25), tokens)
            try:
                fresh = Planner(PROFILES[name], COST, n).plan(moves)
            except PlanError as exc:
                with pytest.raises(PlanError) as again:
                    kept.plan(moves)
                assert str(again.value) == str(exc)
                continue
            assert kept.plan(moves) == fresh


@pytest.mark.parametrize(
    ("sequence", "program"),
    [
        pytest.param("M", "R+L'", id="M-is-R-L'"),
        pytest.param("M U", "R+L' B", id="M-then-U-turns-B"),
        pytest.param("x U", "F", id="x-then-U-is-F"),
        pytest.param("z U", "L", id="z-then-U-is-L"),
        pytest.param("Rw R'", "R'+L", id="wide-is-L-plus-x"),
        pytest.param("R L R' L", "L2", id="merge-axis-run"),
        pytest.param("R R'", "", id="cancel"),
        pytest.param("U D'", "U+D'", id="pair"),
        pytest.param("R U R' U'", "R U R' U'", id="sexy"),
        pytest.param("E", "U+D'", id="E"),
        pytest.param("S", "F'+B", id="S"),
    ],
)
def test_known_translations(sequence: str, program: str) -> None:
    planned = Planner(PROFILES["six"], COST, 3).plan(parse(sequence))
    assert str(planned) == program


def test_sequential_profile_never_pairs() -> None:
    program = Planner(PROFILES["six-sequential"], COST, 3).plan(parse("U D' R L"))
    assert not any(m.simultaneous_with_next for m in program.moves)
    assert program.groups == 4


def test_wire_moves_validate_in_the_firmware_codec() -> None:
    from firmware_protocol.moves import validate_moves

    rng = random.Random(7)
    program = Planner(PROFILES["six"], COST, 3).plan(random_sequence(rng, 40, TOKENS_3))
    validate_moves(program.wire_moves())
    assert program.groups == sum(1 for m in program.moves if not m.simultaneous_with_next)


def test_reversed_motor_inverts_the_wire_direction_only() -> None:
    cfg = MotorsConfig.model_validate(
        {n: MotorConfig(motor=i, reversed=(n == "R")) for i, n in enumerate("URFDLB")}
    )
    program = Planner(cfg, COST, 3).plan(parse("R U"))
    assert [(m.motor, m.quarter_turns) for m in program.wire_moves()] == [(1, -1), (0, 1)]
    assert format_moves(program.face_moves) == "R U"


def test_five_motor_d_cost_is_stated() -> None:
    planner = Planner(PROFILES["five-no-D"], COST, 3)
    moves, groups, seconds = planner.cost_of_face_turn(Face.D)
    assert (moves, groups) == (13, 7)
    assert seconds == pytest.approx(1.02)
    moves2, _groups2, _ = planner.cost_of_face_turn(Face.D, 2)
    assert moves2 == 9
    assert Planner(PROFILES["six"], COST, 3).cost_of_face_turn(Face.D) == (1, 1, 0.1)


def test_estimate_is_the_cost_model_of_the_physical_moves() -> None:
    planner = Planner(PROFILES["six"], COST, 3)
    program = planner.plan(parse("R L' U2 M"))
    assert program.estimate_s == pytest.approx(COST.estimate(program.face_moves))


def test_inner_slice_needs_a_deeper_gripper_on_4x4() -> None:
    with pytest.raises(PlanError, match="cannot execute"):
        Planner(PROFILES["six"], COST, 4).plan(parse("2R"))


def test_gripper_depth_lets_wide_moves_run_on_4x4() -> None:
    """A 4x4 robot whose L gripper holds three layers: 3Lw is that gripper's own turn, and an
    outer R turn is R's motor; the physical cube follows the notation exactly."""
    cfg = MotorsConfig.model_validate(
        {n: MotorConfig(motor=i, depth_layers=3 if n == "L" else 1) for i, n in enumerate("URFDLB")}
    )
    planner = Planner(cfg, COST, 4)
    moves = parse("3Lw U 3Lw' R")
    start = Cube.solved(4)
    program = planner.plan(moves)
    physical = start.apply(program.face_moves)
    assert cubes_equal_up_to_rotation(physical, start.apply(moves))
    assert all(m.kind in (MoveKind.OUTER, MoveKind.WIDE) for m in program.face_moves)


def test_rotation_map_is_a_quarter_turn() -> None:
    m = rotation_map(Face.U, 1)  # y: F goes to L
    assert m[Face.F] is Face.L and m[Face.U] is Face.U
    m = rotation_map(Face.R, 1)  # x: F goes to U
    assert m[Face.F] is Face.U


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_engine_solutions_of_random_states(profile: str) -> None:
    """Random states solved by the two-phase engine (asked to avoid a missing face, as the
    daemon does): the motor program leaves the cube exactly solved."""
    from solver.api import solve

    motors_cfg = PROFILES[profile]
    planner = Planner(motors_cfg, COST, 3)
    faces = [f.name for f in sorted(motors_cfg.faces)] if motors_cfg.missing else None
    for seed in range(4):
        rng = random.Random(1000 + seed)
        start = Cube.solved(3).apply(random_sequence(rng, 30, list("URFDLB")))
        solution = solve(
            start, "twophase", budget_s=0.0, max_length=26 if faces else None, faces=faces
        )
        assert check_program(planner, start, list(solution.moves)).is_solved()
