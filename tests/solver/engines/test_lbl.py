"""LBL engine: seed 004's seven stages, the last-layer case tables of the beginner method, and
the engine on random, solved and one-move states."""

from __future__ import annotations

import random
import statistics

import pytest

from solver.api import solve
from solver.cube.cubie import CubieCube
from solver.cube.facelets import Cube
from solver.cube.notation import parse
from solver.engines.common.cases import (
    AUF_MOVES,
    CP_CASES,
    EO_CASES,
    EP_CASES,
    OCLL_CASES,
    Case,
    Family,
    case_state,
    recogniser,
    signature,
)
from solver.engines.common.f2l import CROSS_EDGES, SLOTS
from solver.engines.common.stage_search import MOVES
from solver.engines.lbl import LAST_LAYER_STAGES, plan_lbl
from solver.errors import UnsupportedError

U_TURNS = [CubieCube().apply(m) for m in AUF_MOVES]
STAGES = [
    "cross",
    "first-layer corners",
    "middle-layer edges",
    "last-layer cross",
    "orient last-layer corners",
    "permute corners",
    "permute edges",
]


def _random_cubes(seed: int, count: int) -> list[CubieCube]:
    rng = random.Random(seed)
    return [CubieCube.random(rng) for _ in range(count)]


def _f2l_intact(cc: CubieCube) -> bool:
    return all(cc.ep[i] == i and cc.eo[i] == 0 for i in range(4, 12)) and all(
        cc.cp[i] == i and cc.co[i] == 0 for i in range(4, 8)
    )


# --- the beginner last-layer tables ----------------------------------------------------------

FAMILIES = [
    (Family.EO, EO_CASES, 8),  # 2^3 edge flips
    (Family.OCLL, OCLL_CASES, 27),  # 3^3 corner twists
    (Family.CP, CP_CASES, 24),  # 4! corner orders
    (Family.EP, EP_CASES, 48),  # 4 corner turns x 12 even edge permutations
]


@pytest.mark.parametrize(
    "case",
    [c for _, cases, _ in FAMILIES for c in cases],
    ids=lambda c: f"{c.family}-{c.name}",
)
def test_case_algorithm_makes_its_listed_case(case: Case) -> None:
    for i, alg in enumerate(case.algorithms):
        state = case_state(alg)
        assert _f2l_intact(state), f"{alg} breaks the first two layers"
        if i == 0:
            assert signature(case.family, state) == case.signature
        options = recogniser(case.family).options(state)
        assert any(o.case == case for o in options)


def test_step_algorithms_keep_what_earlier_steps_did() -> None:
    for case in OCLL_CASES:  # corner orientation keeps the edges oriented
        assert case_state(case.algorithms[0]).eo == (0,) * 12
    for case in (*CP_CASES, *EP_CASES):  # permutation keeps every orientation
        for alg in case.algorithms:
            state = case_state(alg)
            assert state.co == (0,) * 8 and state.eo == (0,) * 12
    for case in EP_CASES:  # edges only: corners in their order (up to AUF)
        state = case_state(case.algorithms[0])
        assert any((state * u).cp[:4] == (0, 1, 2, 3) for u in U_TURNS)


@pytest.mark.parametrize(("family", "cases", "states"), FAMILIES, ids=lambda x: str(x))
def test_families_cover_every_state_of_their_step(
    family: Family, cases: object, states: int
) -> None:
    rec = recogniser(family)
    assert len(rec.keys()) == states
    for key in rec.keys():  # noqa: SIM118 - keys() is the recogniser's method
        assert rec.by_signature(key), key  # every state has at least one option


def test_case_names() -> None:
    assert [c.name for c in EO_CASES] == ["line", "L", "dot"]
    assert [c.name for c in OCLL_CASES] == [
        "H",
        "Pi",
        "Headlights",
        "Chameleon",
        "Bowtie",
        "Anti-Sune",
        "Sune",
    ]
    assert [c.name for c in CP_CASES] == ["adjacent", "diagonal"]
    assert [c.name for c in EP_CASES] == ["H", "Ua", "Ub", "Z"]
    assert list(LAST_LAYER_STAGES) == [Family.EO, Family.OCLL, Family.CP, Family.EP]
    assert [str(f) for f in LAST_LAYER_STAGES] == STAGES[3:]


def test_each_step_reaches_its_goal_from_random_last_layers() -> None:
    """Every OLL x PLL combination (a sample) goes through the four steps to solved."""
    from solver.engines.common.cases import OLL_CASES, PLL_CASES

    for oll in OLL_CASES[::3]:
        for pll in PLL_CASES[::4]:
            state = case_state(pll.algorithms[0]) * case_state(oll.algorithms[0])
            for family in LAST_LAYER_STAGES:
                (option, *_) = recogniser(family).options(state)
                state = state.apply(option.moves)
                if family is Family.EO:
                    assert state.eo == (0,) * 12
                if family is Family.OCLL:
                    assert state.co == (0,) * 8 and state.eo == (0,) * 12
                if family is Family.CP:
                    assert any((state * u).cp[:4] == (0, 1, 2, 3) for u in U_TURNS)
            assert state.is_solved()


# --- the engine ------------------------------------------------------------------------------


def test_solved_cube_gives_the_empty_solution() -> None:
    assert solve(Cube.solved(3), engine="lbl").moves == ()


@pytest.mark.parametrize("move", [str(m) for m in MOVES])
def test_one_move_states_get_one_move(move: str) -> None:
    solution = solve(Cube.solved(3).apply(move), engine="lbl")
    assert solution.moves == (parse(move)[0].inverse(),)


@pytest.mark.slow
def test_lbl_solves_1000_random_states() -> None:
    lengths = []
    for cc in _random_cubes(1004, 1000):
        cube = cc.to_cube()
        solution = solve(cube, engine="lbl")
        assert cube.apply(solution.moves).is_solved()
        lengths.append(solution.htm)
    assert statistics.mean(lengths) <= 110  # the target


def test_stages_do_what_they_say() -> None:
    for cc in _random_cubes(404, 40):
        cube = cc.to_cube()
        plan = plan_lbl(cube)
        state = plan.frame.state(cube).apply(plan.cross)
        assert state.all_home(CROSS_EDGES) and len(plan.cross) <= 8
        placed = list(CROSS_EDGES)
        for slot, moves in plan.corners:
            state = state.apply(moves)
            placed.append(slot.corner)
            assert state.all_home(placed)
        for slot, moves in plan.edges:
            state = state.apply(moves)
            placed.append(slot.edge)
            assert state.all_home(placed)
        assert len(placed) == 12
        for family, option in zip(LAST_LAYER_STAGES, plan.last_layer, strict=True):
            state = state.apply(option.moves)
            cubies = state.to_cubie()
            assert _f2l_intact(cubies)
            if family is Family.EO:
                assert cubies.eo == (0,) * 12
            if family is Family.OCLL:
                assert cubies.co == (0,) * 8
        assert state.is_solved()

        solution = solve(cube, engine="lbl")
        assert [s.name for s in solution.stages] == STAGES
        assert [m for s in solution.stages for m in s.moves] == list(solution.moves)
        assert solution.htm <= plan.length
        cross, corners, edges = (s.detail for s in solution.stages[:3])
        # white (U on the default scheme) is the first layer: its pieces are U pieces
        assert cross["face"] == "U" and cross["colour"] == "white"
        assert sorted(cross["pieces"]) == ["UB", "UF", "UL", "UR"]
        assert sorted(corners["pieces"]) == ["UBR", "UFL", "ULB", "URF"]
        assert [step["piece"] for step in corners["steps"]] == corners["pieces"]
        assert sorted(edges["pieces"]) == ["BL", "BR", "FL", "FR"]
        assert all("white" in c for c in corners["colours"])
        for stage, option in zip(solution.stages[3:], plan.last_layer, strict=True):
            expected = option.case.name if option.case is not None else "skip"
            assert stage.detail["case"] == expected
            assert all(len(name) == 2 for name in solution.stages[3].detail["pieces"])
            assert {len(name) for name in solution.stages[4].detail["pieces"]} == {3}
            assert all(name.startswith("D") or "D" in name for name in stage.detail["pieces"])


def test_first_layer_is_a_setting() -> None:
    for cc in _random_cubes(77, 5):
        cube = cc.to_cube()
        yellow = solve(cube, engine="lbl", first_layer="yellow")
        assert yellow.stages[0].detail["face"] == "D"
        assert cube.apply(yellow.moves).is_solved()
        red_front = solve(cube, engine="lbl", scheme="white-red", first_layer="red")
        # seed 004's scheme: red is the front colour
        assert red_front.stages[0].detail["face"] == "F"
        assert cube.apply(red_front.moves).is_solved()
        default = solve(cube, engine="lbl")
        neutral = solve(cube, engine="lbl", first_layer="neutral")
        assert neutral.htm <= default.htm and neutral.htm <= yellow.htm
        assert cube.apply(neutral.moves).is_solved()


def test_settings_are_checked() -> None:
    cube = _random_cubes(3, 1)[0].to_cube()
    with pytest.raises(UnsupportedError, match="first_layer"):
        solve(cube, engine="lbl", first_layer="purple")
    with pytest.raises(UnsupportedError, match="lbl engine: unknown option"):
        solve(cube, engine="lbl", cross="D")


def test_first_layer_pieces_cover_the_layer() -> None:
    assert {str(s.corner) for s in SLOTS} == {"DFR", "DLF", "DBL", "DRB"}
    assert {str(s.edge) for s in SLOTS} == {"FR", "FL", "BL", "BR"}


def test_a_cube_held_another_way_round() -> None:
    """Colours are read relative to the centres: the white layer is wherever white is."""
    for cc in _random_cubes(61, 3):
        cube = cc.to_cube().apply("y x")  # white centre now on B
        solution = solve(cube, engine="lbl")
        assert cube.apply(solution.moves).is_solved()
        assert solution.stages[0].detail["face"] == "B"
        assert solution.stages[0].detail["colour"] == "white"
        for engine in ("cfop", "trace"):
            assert cube.apply(solve(cube, engine=engine).moves).is_solved()
