"""CFOP engine: the OLL/PLL case tables (data, checked against their algorithms), the stage
machinery, and the engine on random, solved and one-move states."""

from __future__ import annotations

import random
import statistics
from collections import Counter

import pytest

from solver.api import solve
from solver.cube.cubie import CubieCube
from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import Move, format_moves, invert, parse
from solver.engines.cfop import plan_cfop
from solver.engines.common.cases import (
    AUF_MOVES,
    OLL_CASES,
    PLL_CASES,
    Family,
    case_state,
    outer_moves,
    recogniser,
    signature,
)
from solver.engines.common.f2l import CROSS_EDGES, SLOTS, cross_solutions
from solver.engines.common.stage_search import (
    MOVES,
    Piece,
    PieceState,
    StageSearch,
    TableCache,
    default_tables,
    piece_move_table,
    to_outer,
)
from solver.engines.common.stages import Assembler, Frame, short_solution
from solver.errors import UnsupportedError

U_TURNS = [CubieCube().apply(m) for m in AUF_MOVES]


def _f2l_intact(cc: CubieCube) -> bool:
    return all(cc.ep[i] == i and cc.eo[i] == 0 for i in range(4, 12)) and all(
        cc.cp[i] == i and cc.co[i] == 0 for i in range(4, 8)
    )


def _random_cubes(seed: int, count: int) -> list[CubieCube]:
    rng = random.Random(seed)
    return [CubieCube.random(rng) for _ in range(count)]


# --- piece-level machinery -------------------------------------------------------------------


def test_piece_moves_agree_with_cubies() -> None:
    rng = random.Random(7)
    for _ in range(100):
        seq = [rng.choice(MOVES) for _ in range(25)]
        cube = Cube.solved(3).apply(seq)
        assert PieceState.solved().apply(seq) == PieceState.from_cube(cube)
        assert PieceState.from_cube(cube).to_cubie() == CubieCube.from_cube(cube)


def test_every_move_has_order_four_on_pieces() -> None:
    for kind in (0, 1):
        table = piece_move_table(kind)
        for m in range(0, len(MOVES), 3):
            for s in range(24):
                x = s
                for _ in range(4):
                    x = table[m][x]
                assert x == s


def test_pruning_table_is_the_exact_cross_distance() -> None:
    table = TableCache().get(CROSS_EDGES)
    counts = Counter(v for v in table if v != 255)
    # the known distribution of optimal crosses (190080 positions, at most 8 moves)
    assert sum(counts.values()) == 190080
    assert max(counts) == 8
    assert counts[0] == 1 and counts[1] == 15 and counts[8] == 102


def test_table_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match=r"1\.\.4 pieces"):
        TableCache().get(tuple(Piece(0, i) for i in range(5)))


@pytest.mark.parametrize(
    "alg",
    [
        "r U R' U R U2 r'",
        "M' U M U2 M' U M",
        "x R' U R' D2 R U' R' D2 R2 x'",
        "S R U R' U' R' F R f'",
        "2-3Rw R",
        "E2 y",
    ],
)
def test_to_outer_keeps_the_state_relative_to_centres(alg: str) -> None:
    moves = to_outer(parse(alg))
    assert all(m.kind.value == "outer" for m in moves)
    assert CubieCube.from_cube(Cube.solved(3).apply(alg)) == CubieCube.from_cube(
        Cube.solved(3).apply(moves)
    )


def test_stage_search_is_optimal_for_the_cross() -> None:
    tables = default_tables()
    table = tables.get(CROSS_EDGES)
    search = StageSearch(CROSS_EDGES, (CROSS_EDGES,), tables)
    for cc in _random_cubes(3, 20):
        state = PieceState.from_cubie(cc)
        path = search.solve(state)
        assert path is not None
        index = sum(state.edges[4 + j] * 24**j for j in range(4))
        assert len(path) == table[index]
        assert state.apply(path).all_home(CROSS_EDGES)


def test_cross_solutions_are_optimal_and_distinct() -> None:
    for cc in _random_cubes(4, 10):
        state = PieceState.from_cubie(cc)
        found = cross_solutions(state, default_tables(), 5)
        assert found and len({tuple(p) for p in found}) == len(found)
        assert len({len(p) for p in found}) == 1 and len(found[0]) <= 8
        for path in found:
            assert state.apply(path).all_home(CROSS_EDGES)


def test_short_solution() -> None:
    assert short_solution(PieceState.solved()) == []
    for m in range(len(MOVES)):
        state = PieceState.solved().apply([m])
        answer = short_solution(state)
        assert answer is not None and len(answer) == 1
        assert state.apply(answer).is_solved()
    assert short_solution(PieceState.solved().apply(parse("R U"))) is not None
    assert short_solution(PieceState.solved().apply(parse("R U F"))) is None


def test_assembler_cancels_at_stage_borders() -> None:
    a = Assembler()
    a.add("one", parse("F R U"))
    a.add("two", parse("U R'"))
    a.add("three", parse("R L R"))
    # U+U merge into the first stage; R' then R cancel; R L R keeps R L ... R apart
    assert format_moves(a.moves) == "F R U2 L R"
    stages = a.stages()
    assert [s.name for s in stages] == ["one", "two", "three"]
    assert format_moves(stages[0].moves) == "F R U2" and stages[1].moves == ()
    assert [m for s in stages for m in s.moves] == a.moves
    b = Assembler()
    b.add("x", parse("R U"))
    b.add("y", parse("U' R'"))
    assert b.moves == [] and all(not s.moves for s in b.stages())


def test_frames_map_faces() -> None:
    frame = Frame.with_bottom(Face.U)
    assert frame.physical[Face.D] == Face.U
    assert frame.piece_name(CROSS_EDGES[1]) == "UB"  # DF seen with U turned down by x2
    assert Frame.with_bottom(Face.D).physical == tuple(Face)


# --- OLL table -------------------------------------------------------------------------------


def test_oll_numbers_are_1_to_57() -> None:
    assert [c.number for c in OLL_CASES] == list(range(1, 58))


@pytest.mark.parametrize("case", OLL_CASES, ids=lambda c: c.label)
def test_oll_algorithm_makes_its_listed_case(case: object) -> None:
    from solver.engines.common.cases import Case

    assert isinstance(case, Case)
    for i, alg in enumerate(case.algorithms):
        state = case_state(alg)
        assert _f2l_intact(state), f"{alg} breaks F2L"
        sig = signature(Family.OLL, state)
        if i == 0:
            assert sig == case.signature  # exactly the listed case
        else:  # alternatives: the same case from some AUF
            assert case.signature in {signature(Family.OLL, state * u) for u in U_TURNS}
        options = recogniser(Family.OLL).options(state)
        assert any(o.case == case for o in options)
        for option in options:
            after = state.apply(option.moves)
            assert after.co[:4] == (0,) * 4 and after.eo[:4] == (0,) * 4 and _f2l_intact(after)


def test_oll_cases_are_distinct_and_cover_every_orientation() -> None:
    classes: dict[str, str] = {}
    for case in OLL_CASES:
        state = case_state(case.algorithms[0])
        key = min(signature(Family.OLL, state * u) for u in U_TURNS)
        assert key not in classes, f"{case.label} repeats {classes.get(key)}"
        classes[key] = case.label
    # 3^3 corner twists x 2^3 edge flips = 216 last-layer orientations, every one recognised
    assert len(recogniser(Family.OLL).keys()) == 216


def test_oll_groups_match_the_standard_numbering() -> None:
    """Independent facts of the standard OLL list: how many edges each case has oriented
    (0: the dot cases, 4: the cross cases), and the corners of the best-known cases."""

    def oriented_edges(case_number: int) -> int:
        (case,) = [c for c in OLL_CASES if c.number == case_number]
        return case_state(case.algorithms[0]).eo[:4].count(0)

    def oriented_corners(case_number: int) -> int:
        (case,) = [c for c in OLL_CASES if c.number == case_number]
        return case_state(case.algorithms[0]).co[:4].count(0)

    dots = {1, 2, 3, 4, 17, 18, 19, 20}
    crosses = set(range(21, 28))
    for n in range(1, 58):
        expected = 0 if n in dots else 4 if n in crosses else 2
        assert oriented_edges(n) == expected, n
    assert [oriented_corners(n) for n in (20, 28, 57)] == [4, 4, 4]
    assert [oriented_corners(n) for n in (21, 22, 26, 27)] == [0, 0, 1, 1]
    assert [oriented_corners(n) for n in (23, 24, 25)] == [2, 2, 2]
    assert {c.group for c in OLL_CASES if c.number in crosses} == {"cross"}
    assert {c.number for c in OLL_CASES if c.group == "dot"} == dots


# --- PLL table -------------------------------------------------------------------------------

PLL_NAMES = [
    "Aa",
    "Ab",
    "E",
    "F",
    "Ga",
    "Gb",
    "Gc",
    "Gd",
    "H",
    "Ja",
    "Jb",
    "Na",
    "Nb",
    "Ra",
    "Rb",
    "T",
    "Ua",
    "Ub",
    "V",
    "Y",
    "Z",
]


def test_pll_names() -> None:
    assert [c.name for c in PLL_CASES] == PLL_NAMES


@pytest.mark.parametrize("case", PLL_CASES, ids=lambda c: c.name)
def test_pll_algorithm_makes_its_listed_case(case: object) -> None:
    from solver.engines.common.cases import Case

    assert isinstance(case, Case)
    for i, alg in enumerate(case.algorithms):
        state = case_state(alg)
        assert _f2l_intact(state) and state.co == (0,) * 8 and state.eo == (0,) * 12
        if i == 0:
            assert signature(Family.PLL, state) == case.signature
        else:
            variants = {signature(Family.PLL, u * state * v) for u in U_TURNS for v in U_TURNS}
            assert case.signature in variants
        options = recogniser(Family.PLL).options(state)
        assert any(o.case == case for o in options)
        for option in options:
            assert state.apply(option.moves).is_solved()


def test_pll_cases_are_distinct_and_cover_every_permutation() -> None:
    classes: dict[str, str] = {}
    for case in PLL_CASES:
        state = case_state(case.algorithms[0])
        key = min(signature(Family.PLL, u * state * v) for u in U_TURNS for v in U_TURNS)
        assert key not in classes, f"{case.name} repeats {classes.get(key)}"
        classes[key] = case.name
    # 4! corner x 4! edge permutations of equal parity
    assert len(recogniser(Family.PLL).keys()) == 288


def test_pll_groups() -> None:
    for case in PLL_CASES:
        state = case_state(case.algorithms[0])
        # up to AUF before and after: are the corners / the edges already solved?
        variants = [u * state * v for u in U_TURNS for v in U_TURNS]
        corners = any(x.cp[:4] == (0, 1, 2, 3) for x in variants)
        edges = any(x.ep[:4] == (0, 1, 2, 3) for x in variants)
        both = any(x.cp[:4] == x.ep[:4] == (0, 1, 2, 3) for x in variants)
        assert not both, case.name
        if case.group == "corners only":
            assert edges, case.name
        elif case.group == "edges only":
            assert corners, case.name
        else:
            assert not corners and not edges, case.name
    # the inverse pairs: Aa/Ab, Ua/Ub are each other's inverse up to AUF
    for a, b in (("Aa", "Ab"), ("Ua", "Ub")):
        (ca,) = [c for c in PLL_CASES if c.name == a]
        state = case_state(ca.algorithms[0]).inverse()
        assert any(
            o.case is not None and o.case.name == b for o in recogniser(Family.PLL).options(state)
        )


def test_last_layer_recognition_on_random_last_layers() -> None:
    rng = random.Random(11)
    for _ in range(200):
        oll = rng.choice(OLL_CASES)
        pll = rng.choice(PLL_CASES)
        auf = [rng.choice(U_TURNS) for _ in range(3)]
        state = (
            (auf[0] * CubieCube().apply(outer_moves(pll.algorithms[0])).inverse() * auf[1])
            * CubieCube().apply(outer_moves(oll.algorithms[0])).inverse()
            * auf[2]
        )
        (oll_option, *_) = recogniser(Family.OLL).options(state)
        after = state.apply(oll_option.moves)
        (pll_option, *_) = recogniser(Family.PLL).options(after)
        assert after.apply(pll_option.moves).is_solved()


# --- the engine ------------------------------------------------------------------------------


def test_solved_cube_gives_the_empty_solution() -> None:
    solution = solve(Cube.solved(3), engine="cfop")
    assert solution.moves == () and solution.engine == "cfop"


@pytest.mark.parametrize("move", [str(m) for m in MOVES])
def test_one_move_states_get_one_move(move: str) -> None:
    solution = solve(Cube.solved(3).apply(move), engine="cfop")
    assert len(solution.moves) == 1
    assert solution.moves[0] == parse(move)[0].inverse()
    assert [s.name for s in solution.stages] == ["direct"]


def test_two_move_states_get_two_moves() -> None:
    solution = solve(Cube.solved(3).apply("R U'"), engine="cfop")
    assert format_moves(solution.moves) == "U R'"


@pytest.mark.slow
def test_cfop_solves_1000_random_states() -> None:
    lengths = []
    for cc in _random_cubes(2024, 1000):
        cube = cc.to_cube()
        solution = solve(cube, engine="cfop")
        assert cube.apply(solution.moves).is_solved()
        lengths.append(solution.htm)
    assert statistics.mean(lengths) <= 55  # the target


def test_stages_do_what_they_say() -> None:
    """Each planned stage solves what it names (the solution's stages are the same moves,
    with turns merged across stage borders, a merged turn belonging to the earlier stage)."""
    for cc in _random_cubes(99, 40):
        cube = cc.to_cube()
        plan = plan_cfop(cube)
        state = plan.frame.state(cube)
        state = state.apply(plan.cross)
        assert state.all_home(CROSS_EDGES) and len(plan.cross) <= 8
        placed = list(CROSS_EDGES)
        for slot, moves in plan.pairs:
            state = state.apply(moves)
            placed += slot.pieces
            assert state.all_home(placed), slot.name
        assert sorted(slot.name for slot, _ in plan.pairs) == ["BL", "BR", "FL", "FR"]
        state = state.apply(plan.oll.moves)
        cubies = state.to_cubie()
        assert cubies.co == (0,) * 8 and cubies.eo == (0,) * 12
        state = state.apply(plan.pll.moves)
        assert state.is_solved()

        solution = solve(cube, engine="cfop")
        names = [s.name for s in solution.stages]
        assert names == ["cross", "F2L 1", "F2L 2", "F2L 3", "F2L 4", "OLL", "PLL"]
        assert [m for s in solution.stages for m in s.moves] == list(solution.moves)
        assert solution.htm <= plan.length
        cross = solution.stages[0].detail
        assert cross["face"] == "D" and cross["colour"] == "yellow"
        assert cross["pieces"] == ["DR", "DF", "DL", "DB"]
        slots = [solution.stages[k].detail["slot"] for k in range(1, 5)]
        assert slots == [slot.name for slot, _ in plan.pairs]
        oll = solution.stages[5].detail
        expected = plan.oll.case.number if plan.oll.case is not None else "skip"
        assert oll["case"] == expected
        pll = solution.stages[6].detail
        assert pll["case"] == (plan.pll.case.name if plan.pll.case is not None else "skip")
        assert pll["case"] == "skip" or pll["case"] in PLL_NAMES


def test_json_form_carries_the_stages() -> None:
    cube = _random_cubes(5, 1)[0].to_cube()
    data = solve(cube, engine="cfop").to_dict()
    assert data["engine"] == "cfop"
    assert data["stages"][0]["name"] == "cross"
    assert sum(s["htm"] for s in data["stages"]) == data["htm"]
    oll = data["stages"][5]
    assert {"case", "name", "auf", "moves"} <= set(oll)


def test_cross_on_another_colour_and_colour_neutral() -> None:
    for cc in _random_cubes(17, 8):
        cube = cc.to_cube()
        white = solve(cube, engine="cfop", cross="white")
        assert white.stages[0].detail["face"] == "U"
        assert set(white.stages[0].detail["pieces"]) == {"UR", "UF", "UL", "UB"}
        assert cube.apply(white.moves).is_solved()
        default = solve(cube, engine="cfop")
        neutral = solve(cube, engine="cfop", cross="neutral")
        assert cube.apply(neutral.moves).is_solved()
        assert neutral.htm <= default.htm and neutral.htm <= white.htm


def test_colour_scheme_is_a_setting() -> None:
    cube = _random_cubes(8, 1)[0].to_cube()
    solution = solve(cube, engine="cfop", scheme="white-red")
    # seed 004's scheme: white up, red front; the bottom is still yellow, its edges differ
    assert solution.stages[0].detail["colour"] == "yellow"
    assert "yellow-red" in solution.stages[0].detail["colours"]
    assert (
        solution.stages[0].detail["pieces"][
            solution.stages[0].detail["colours"].index("yellow-red")
        ]
        == "DF"
    )
    with pytest.raises(UnsupportedError, match="scheme"):
        solve(cube, engine="cfop", scheme="purple")


def test_settings_are_checked() -> None:
    cube = _random_cubes(9, 1)[0].to_cube()
    with pytest.raises(UnsupportedError, match="cross"):
        solve(cube, engine="cfop", cross="sideways")
    with pytest.raises(UnsupportedError, match="f2l_beam"):
        solve(cube, engine="cfop", f2l_beam=0)
    with pytest.raises(UnsupportedError, match="max_length"):
        solve(cube, engine="cfop", max_length=20)
    with pytest.raises(UnsupportedError, match="cannot turn"):
        solve(cube, engine="cfop", faces="URFLB")


def test_wider_search_is_never_longer() -> None:
    for cc in _random_cubes(21, 5):
        cube = cc.to_cube()
        greedy = plan_cfop(cube, cross_candidates=1, beam=1)
        every_order = plan_cfop(cube, cross_candidates=1, beam=4)
        assert every_order.length <= greedy.length
        more_crosses = plan_cfop(cube, cross_candidates=3, beam=1)
        assert more_crosses.merged_length <= greedy.merged_length


def test_f2l_slots_cover_the_first_two_layers() -> None:
    pieces = set(CROSS_EDGES) | {p for s in SLOTS for p in s.pieces}
    assert len(pieces) == 12
    assert {str(p) for p in pieces} == {
        "DR",
        "DF",
        "DL",
        "DB",
        "FR",
        "FL",
        "BL",
        "BR",
        "DFR",
        "DLF",
        "DBL",
        "DRB",
    }


def test_robot_time_with_a_cost_model() -> None:
    from solver.cost import DEFAULT_COST_MODEL

    cube = _random_cubes(12, 1)[0].to_cube()
    solution = solve(cube, engine="cfop", cost_model=DEFAULT_COST_MODEL)
    assert solution.robot_time_s == pytest.approx(DEFAULT_COST_MODEL.estimate(solution.moves))


def test_solution_inverse_scrambles_back() -> None:
    cube = _random_cubes(13, 1)[0].to_cube()
    moves: list[Move] = list(solve(cube, engine="cfop").moves)
    assert Cube.solved(3).apply(invert(moves)) == cube
