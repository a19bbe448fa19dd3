"""Mechanism kinds: the planner's plans replay to a solved cube, and are as fast as an
exhaustive search over the machine's actions on the facelet cube finds."""

from __future__ import annotations

import heapq
import itertools
import random
from functools import partial

import numpy as np
import pytest

from robot.errors import PlanError
from robot.kinds import KindPlanner, Mechanism, Turntable, TwoGripper, replay
from robot.kinds.frames import N_ORIENTATIONS, frames, key, notation_effect
from robot.kinds.layered import plan_layered
from robot.kinds.planner import merge_repeats
from solver.cube.facelets import Cube, sequence_permutation
from solver.cube.geometry import Face
from solver.cube.notation import Move, MoveKind, invert, parse
from solver.scramble import random_moves

MECHANISMS = {
    "cubotino": Turntable(),
    "stepper-turntable": Turntable(table_positions=None),
    "grippers-180": TwoGripper(),
    "grippers-90": TwoGripper(angles=(0, 1)),
}


def _scrambled(n: int, seed: int) -> tuple[Cube, list[Move]]:
    moves = random_moves(n, seed=seed)
    return Cube.solved(n).apply(moves), invert(moves)


@pytest.mark.parametrize("name", MECHANISMS)
def test_plans_replay_to_a_solved_cube(name: str) -> None:
    mechanism = MECHANISMS[name]
    planner = KindPlanner(mechanism)
    for seed in range(12):
        cube, solution = _scrambled(3, seed)
        plan = planner.plan(solution)
        final, _ = replay(mechanism, cube, [a.action for a in plan.actions])
        assert final.is_solved(), (name, seed, str(plan))
        assert plan.seconds == pytest.approx(sum(a.seconds for a in plan.actions))
        assert [a.move for a in plan.actions if a.move is not None] != []


def _exhaustive(mechanism: Mechanism, start: Cube, moves: list[Move]) -> float:
    """Least time of any action sequence that leaves the physical cube in the state the moves
    give (held any way): uniform-cost search over (stickers, parts), no planner tables."""
    n = start.n
    target = start.flat[sequence_permutation(moves, n)]
    goals = {key(target[q]) for q in frames(n).perms}
    begin = (start.flat.tobytes(), mechanism.start)
    best = {begin: 0.0}
    heap = [(0.0, 0, begin)]
    counter = itertools.count(1)
    while heap:
        cost, _, (stickers, parts) = heapq.heappop(heap)
        if cost > best[(stickers, parts)]:
            continue
        flat = np.frombuffer(stickers, dtype=np.uint8)
        if key(flat.astype(np.intp)) in goals:
            return cost
        for step in (*mechanism.free_steps(parts), *mechanism.turn_steps(parts)):
            nxt = flat if step.effect is None else flat[step.effect]
            node = (nxt.tobytes(), step.after)
            if cost + step.seconds < best.get(node, np.inf) - 1e-12:
                best[node] = cost + step.seconds
                heapq.heappush(heap, (cost + step.seconds, next(counter), node))
    raise AssertionError("the exhaustive search found no way")


def _sequences() -> list[str]:
    rng = random.Random(17)
    faces = "URFDLB"
    singles = [f + s for f in faces for s in ("", "'", "2")]
    pairs = [f"{rng.choice(singles)} {rng.choice(singles)}" for _ in range(6)]
    return [*rng.sample(singles, 6), *pairs, "R U R'", "x R y' U2"]


@pytest.mark.slow
@pytest.mark.parametrize("name", MECHANISMS)
def test_planner_is_optimal_against_exhaustive_search(name: str) -> None:
    mechanism = MECHANISMS[name]
    planner = KindPlanner(mechanism)
    start = _scrambled(3, 99)[0]  # a scrambled start: no symmetry lets a wrong turn pass
    for text in _sequences():
        moves = parse(text)
        planned = planner.plan(moves)
        final, _ = replay(mechanism, start, [a.action for a in planned.actions])
        target = start.flat[sequence_permutation(moves, 3)]
        assert any(np.array_equal(final.flat, target[q]) for q in frames(3).perms), text
        assert planned.seconds == pytest.approx(_exhaustive(mechanism, start, moves)), text


def test_frames_form_the_rotation_group() -> None:
    f = frames(3)
    assert len(f.perms) == N_ORIENTATIONS and len(f.index) == N_ORIENTATIONS
    for a, b, c in itertools.product(range(0, 24, 5), repeat=3):
        assert f.after[f.after[a, b], c] == f.after[a, f.after[b, c]]
    for i, p in enumerate(f.perms):
        assert np.array_equal(p[f.inverse[i]], f.perms[0])


def test_notation_effect_of_a_bottom_turn_in_the_start_orientation_is_d() -> None:
    f = frames(3)
    d = sequence_permutation(parse("D"), 3)
    assert np.array_equal(notation_effect(f, 0, d, 0), d)
    # turned upside down (x2), the bottom turn is the notation's U
    x2 = f.of(sequence_permutation(parse("x2"), 3))
    u = sequence_permutation(parse("U"), 3)
    assert np.array_equal(notation_effect(f, x2, d, x2), u)


def test_big_cube_turntable_makes_wide_moves() -> None:
    mechanism = Turntable(n=4, depths=(1, 2, 3), table_positions=None)
    planner = KindPlanner(mechanism)
    for seed in range(3):
        cube, solution = _scrambled(4, seed)
        plan = planner.plan(solution)
        final, _ = replay(mechanism, cube, [a.action for a in plan.actions])
        assert final.is_solved()
    assert planner.can_make(parse("3Rw")[0]) and not planner.can_make(parse("2R")[0])


def test_a_move_the_mechanism_cannot_make_is_named() -> None:
    shallow = KindPlanner(Turntable(n=4, depths=(1,)))
    for plan in (shallow.plan, shallow.seconds, partial(plan_layered, shallow)):
        with pytest.raises(PlanError, match="cannot make 2R"):
            plan(parse("R 2R"))
    opposed = KindPlanner(TwoGripper(positions=(Face.D, Face.U)))
    assert opposed.can_make(parse("D")[0]) and not opposed.can_make(parse("R")[0])
    with pytest.raises(PlanError, match="R"):
        opposed.plan(parse("R"))


@pytest.mark.parametrize(
    ("build", "message"),
    [
        pytest.param(lambda: Turntable(depths=(3,)), "cover depths", id="depth-too-deep"),
        pytest.param(lambda: Turntable(depths=()), "cover depths", id="no-depth"),
        pytest.param(lambda: Turntable(flip="y"), "tip the cube", id="flip-spins"),
        pytest.param(lambda: Turntable(flip="R"), "whole-cube rotation", id="flip-not-rotation"),
        pytest.param(lambda: Turntable(table_positions=(1, 2)), "include 0", id="table-range"),
        pytest.param(
            lambda: TwoGripper(positions=(Face.D, Face.D)), "different faces", id="same-face"
        ),
        pytest.param(lambda: TwoGripper(depth=3), "turns 1..2", id="gripper-depth"),
    ],
)
def test_mechanism_parameters_are_checked(build: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()  # type: ignore[operator]


@pytest.mark.parametrize("name", MECHANISMS)
def test_plan_equals_the_layered_plan(name: str) -> None:
    """The dense-vector plan (the default) and the layered one that keeps every segment's
    actions find the same optimum, with rotations, commuting runs and half turns in the way;
    each plan's time is the sum of its actions' and it replays solved."""
    mechanism = MECHANISMS[name]
    planner = KindPlanner(mechanism)
    texts = ["U D2 U' D R2 L2", "x U y R2 z' F D", "F2 B F2 R R", "U2", "", "y2"]
    rng = random.Random(3)
    for seed in range(4):
        _, solution = _scrambled(3, seed)
        moves = list(solution)
        if seed % 2:  # rotations inside the solution, which only relabel the orientation
            moves.insert(rng.randrange(len(moves)), parse(rng.choice(["x", "y'", "z2"]))[0])
        texts.append(" ".join(str(m) for m in moves))
    for text in texts:
        moves = parse(text)
        plan, layered = planner.plan(moves), plan_layered(planner, moves)
        assert plan.seconds == pytest.approx(layered.seconds, abs=1e-9), text
        assert plan.seconds == pytest.approx(sum(a.seconds for a in plan.actions), abs=1e-9)
        turned = [a.move for a in plan.actions if a.move is not None]
        assert len(turned) >= len(
            [m for m in merge_repeats(moves) if m.kind is not MoveKind.ROTATION]
        )
        start = Cube.solved(3).apply(invert(moves))
        final, _ = replay(mechanism, start, [a.action for a in plan.actions])
        assert final.is_solved(), text


def test_big_cube_plan_equals_the_layered_plan() -> None:
    planner = KindPlanner(Turntable(n=4, depths=(1, 2, 3), table_positions=None))
    for seed in range(2):
        _, solution = _scrambled(4, seed)
        assert planner.plan(solution).seconds == pytest.approx(
            plan_layered(planner, solution).seconds, abs=1e-9
        )
