"""6x6 and 7x7: the rings of centres by the smaller cube's staged search (ring.py), and the
progress display of slow big-cube table builds."""

from __future__ import annotations

import threading
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from solver import api
from solver.cube.geometry import Face
from solver.cube.notation import Move
from solver.engines.nxn import bars, engine, pairing, ring, tables, twins
from solver.engines.nxn.centres import interior
from solver.engines.nxn.sim import geometry
from solver.errors import UnsupportedError
from solver.scramble import random_state_nxn


def _small_moves(count: int, seed: int) -> tuple[Move, ...]:
    rng = np.random.default_rng(seed)
    return tuple(
        Move.block(Face(int(rng.integers(6))), 1, int(rng.integers(1, 3)), int(t))
        for t in rng.choice([1, 2, -1], size=count)
    )


@pytest.mark.parametrize("n", ring.SIZES)
def test_the_inner_stickers_turn_as_the_smaller_cube(n: int) -> None:
    """Every sticker of the projection, not only the centres: the mapped moves act on the N
    cube's inner stickers exactly as the smaller cube's moves act on it."""
    state = random_state_nxn(n, 3).flat.copy()
    small = ring.project(state, n)
    moves = _small_moves(40, n)
    geometry(n - 2).apply(small, moves)
    geometry(n).apply(state, ring.to_big(moves))
    assert np.array_equal(ring.project(state, n), small)
    assert ring.to_big((Move.block(Face.R, 1, 2, 1),)) == (Move.block(Face.R, 1, 3, 1),)
    outer = ring.project(state, n, ring.outer_coords(n))  # Rw as 2Rw: the outer ring
    geometry(n - 2).apply(outer, moves)
    geometry(n).apply(state, ring.to_big(moves, 2))
    assert np.array_equal(ring.project(state, n, ring.outer_coords(n)), outer)


def test_the_projection_is_for_six_and_seven_only() -> None:
    assert ring.inner_coords(6) == (0, 2, 3, 5)
    assert ring.inner_coords(7) == (0, 2, 3, 4, 6)
    assert ring.outer_coords(6) == (0, 1, 4, 5) and ring.outer_coords(7) == (0, 1, 3, 5, 6)
    with pytest.raises(UnsupportedError, match="N in"):
        ring.inner_coords(8)


def _one_colour_centres(small: np.ndarray, m: int) -> bool:
    inner = small.reshape(6, m, m)[:, 1:-1, 1:-1].reshape(6, -1)
    return bool((inner == inner[:, :1]).all())


@pytest.mark.parametrize(("n", "seed"), [(6, 0), (7, 5)])
def test_ring_centres_solve_the_rings_first_and_then_every_face(n: int, seed: int) -> None:
    cube = random_state_nxn(n, seed)
    found = ring.ring_centres(cube.flat, n, ("", "x"), keep=2)
    assert len(found) == 2 and found[0][0] <= found[1][0]
    assert {found[0][1], found[1][1]} == {"", "x"}
    rings = ["inner centres", "outer centres"] if n == 7 else ["inner centres"]
    for cost, rotation, relabelled, stages in found:
        assert [s.name for s in stages] == [*rings, "first centre", "wing parity", "centres"]
        assert cost == sum(int(s.detail["obtm"]) for s in stages)
        start = cube.apply(rotation).flat.copy() if rotation else cube.flat.copy()
        after = start.copy()
        geometry(n).apply(after, stages[0].moves)
        assert _one_colour_centres(ring.project(after, n), n - 2)  # the inner ring
        if n == 7:  # the outer ring, the inner one kept
            geometry(n).apply(after, stages[1].moves)
            assert _one_colour_centres(ring.project(after, n), n - 2)
            assert _one_colour_centres(ring.project(after, n, ring.outer_coords(n)), n - 2)
        assert all(len(s.moves) <= 40 for s in stages[: len(rings)])
        geometry(n).apply(start, [m for s in stages for m in s.moves])
        for face in Face:  # every face one colour, relabelled to its own
            assert (start[interior(n, face)] == start[interior(n, face)][0]).all()
            assert (relabelled[interior(n, face)] == face).all()


def test_engine_starts_a_seven_with_the_rings_and_bars_unless_told_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The engine's centres only, of one ring solution (the whole solve of 6x6 and 7x7 states,
    verified, is in test_nxn.py): rings and bars by default, the rings and commutators with
    ``centres="rings"``, commutators alone with ``centres="commutators"``."""
    monkeypatch.setitem(engine.RINGS, 7, 1)
    cube = random_state_nxn(7, 11)
    for method, names in (
        ("auto", ["inner centres", "bars", "centres"]),
        ("rings", ["inner centres", "outer centres", "first centre", "wing parity", "centres"]),
    ):
        staged = api.solve(cube, stages_only=True, centre_tries=1, centres=method)
        assert [s.name for s in staged.stages] == names
        assert len(staged.stages[0].detail["stages"]) == 3
        state = cube.apply(staged.moves).flat
        for face in Face:
            assert (state[interior(7, face)] == state[interior(7, face)][0]).all()
    commutators = api.solve(cube, centres="commutators", stages_only=True, centre_tries=1)
    assert commutators.stages[0].name == "first centre"
    with pytest.raises(UnsupportedError, match="6x6 and 7x7"):
        api.solve(random_state_nxn(5, 1), centres="rings")


def test_a_slow_table_build_is_shown_and_a_fast_one_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown: list[tuple[str, int, int]] = []

    def build(report: tables.Report) -> tables.Table:
        for done in (3, 6, 10):
            report(done)
        return np.zeros(10, dtype=np.int8)

    tables.load_table("quick", 10, build, tmp_path, lambda *a: shown.append(a))
    assert shown == []
    monkeypatch.setattr(tables, "PROGRESS_AFTER_S", 0.0)
    tables.load_table("slow", 10, build, tmp_path, lambda *a: shown.append(a))
    assert shown[0] == ("slow", 3, 10) and shown[-1] == ("slow", 10, 10)
    tables._LOADED.clear()


def test_the_cli_display_names_the_big_cube_tables(capsys: pytest.CaptureFixture[str]) -> None:
    from solver.engines.twophase.tables import stderr_progress

    report = stderr_progress("building big-cube tables:")  # what `cuberobot solve` hands nxn
    report("centres5-faces-xt", 5, 10)
    report("centres5-faces-xt", 10, 10)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "building big-cube tables: centres5-faces-xt ..."
    assert err[1].startswith("building big-cube tables: centres5-faces-xt done in")


def test_bar_centres_end_in_different_states_shortest_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Outer solutions that end in the same state would get the same edges: one is kept."""
    n = 6
    monkeypatch.setitem(ring.BAR_KEEP, n, 2)
    found = ring.bar_centres(random_state_nxn(n, 5).flat, n, 12, 1)
    costs = [cost for cost, _, _, _ in found]
    assert costs == sorted(costs) and len(found) > 1
    assert len({state.tobytes() for _, _, state, _ in found}) == len(found)
    for cost, _, state, stages in found:
        assert [st.name for st in stages] == ["inner centres", "bars", "centres"]
        assert cost == sum(int(st.detail["obtm"]) for st in stages)
        for face in Face:
            assert (state[interior(n, face)] == face).all()


def test_the_seven_pairs_its_bars_after_three_inner_ring_solutions_and_tries_six_edges(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The 7x7 pairs the bars after three inner-ring solutions, then its inner wings onto the
    middle edges (the first edge pass, 3 ends each), then the outer centres of each end; of
    all those centre solutions (different states) the 6 ranked best by their length less 2
    OBTM per outer wing already paired get the second edge pass."""
    asked: list[tuple[int, int, bool]] = []
    real = ring.bar_centres

    def spy(state: np.ndarray, n: int, keep: int, rings: int = 1, *rest: object) -> object:
        asked.append((keep, rings, rest[-1] is not None))
        return real(state, n, keep, rings, *rest)  # type: ignore[arg-type]

    tried: list[bytes] = []
    real_ends = engine._second_pass_edges

    def spy_ends(state: np.ndarray, n: int, *rest: object) -> object:
        tried.append(state.tobytes())
        return real_ends(state, n, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(ring, "bar_centres", spy)
    monkeypatch.setattr(engine, "_second_pass_edges", spy_ends)
    solution = api.solve(random_state_nxn(7, 3))
    assert solution.stats["verified"]
    assert [st.name for st in solution.stages] == [
        "inner centres",
        "bars",
        "tredges",
        "centres",
        "edges",
        "3x3",
    ]
    assert asked == [(engine.EARLY_POOL, 3, True)]
    assert len(tried) == len(set(tried)) == engine.EDGE_TRIES_BARS[7] == 6
    assert ring.EARLY_PASS == {7: 3} and engine.EARLY_WING == {7: 2.0}
    # the bar beam 32 wide (was 16; seeds 100-129 220.27 -> 218.13 OBTM), the time it costs
    # paid by pairing the inner rings' bars side by side
    assert bars.WIDTH[7] == 32
    # a move worth 0.35 paired cells in its ranking (was 0.25; seeds 100-159 -1.85 OBTM)
    assert bars.WEIGHT == {6: 0.25, 7: 0.35}


def test_the_sevens_first_edge_pass_comes_before_its_outer_centres() -> None:
    """Its macros keep the inner ring and the bars, the outer search keeps the tredges it
    made: every centre solution ends with the centres solved and every tredge paired, its
    stages' lengths add up, and the ends of one first pass share the outer searches of the
    same outer centres."""
    n = 7
    first = partial(engine._early_first_pass, n=n)
    found = ring.bar_centres(random_state_nxn(n, 5).flat, n, 1000, 2, None, None, first)
    assert len({state.tobytes() for _, _, state, _ in found}) == len(found) > 12
    inner = engine.TWO_PASS[n][0].counted
    assert inner is not None
    for cost, _, state, stages in found:
        assert [st.name for st in stages] == ["inner centres", "bars", "tredges", "centres"]
        assert cost == sum(int(st.detail["obtm"]) for st in stages)
        for face in Face:
            assert (state[interior(n, face)] == face).all()
        assert pairing.paired_count(state, n, inner) == 12 * len(inner)
    ranked = engine._early_ranked(found, n)
    keys = [cost - 2 * pairing.paired_count(state, n) for cost, _, state, _ in ranked]
    assert keys == sorted(keys) and sorted(map(id, ranked)) == sorted(map(id, found))


def test_a_seven_whose_first_passes_all_break_the_centres_takes_the_usual_route(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Should no end of the early first edge pass keep the inner rings and bars (its wing
    3-cycles may not), the 7x7 is reduced the usual way (outer centres, then both edge
    passes) instead of failing: the solve is still verified."""
    monkeypatch.setitem(engine.RINGS, 7, 1)
    monkeypatch.setitem(engine.BAR_RINGS, 7, 1)
    monkeypatch.setattr(ring, "_centres_kept", lambda before, after, n: False)
    cube = random_state_nxn(7, 3)
    solution = api.solve(cube, centre_tries=1, budget_s=0.0)
    assert cube.apply(solution.moves).is_solved()
    assert "tredges" not in [stage.name for stage in solution.stages]


@pytest.mark.parametrize(
    ("seed", "pairings", "rings_used"), [(106, 1, 1), (104, 1, 2), (100, 2, 2)]
)
def test_the_seven_pairs_the_same_bars_once(
    monkeypatch: pytest.MonkeyPatch, seed: int, pairings: int, rings_used: int
) -> None:
    """The 7x7's two shortest inner-ring solutions reach the same state (seed 106: the second
    adds nothing), the same bars from different states (104: one bar pairing for both) or
    different bars (100): the same centre solutions as pairing every one."""
    calls: list[bytes] = []
    real = bars.bar_pairings

    def spy(state: np.ndarray, n: int, *rest: object) -> list[list[Move]]:
        calls.append(state[bars.bar_cells(n).reshape(-1)].tobytes())
        return real(state, n, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(bars, "bar_pairings", spy)
    state = random_state_nxn(7, seed).flat
    found = ring.bar_centres(state, 7, 1000, 2)  # every outer solution of both
    assert len(calls) == pairings == len(set(calls))
    assert len({stages[0].moves for _, _, _, stages in found}) == rings_used
    if rings_used == 1:
        assert [item[2].tobytes() for item in found] == [
            item[2].tobytes() for item in ring.bar_centres(state, 7, 1000, 1)
        ]


def test_the_inner_rings_are_finished_side_by_side_with_the_same_solutions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With two threads (``CUBEROBOT_NXN_THREADS``) the 7x7's inner-ring solutions get their
    bars and outer centres on worker threads, and the centre solutions are those of one
    thread, in the same order."""
    threads: list[str] = []
    real = bars.bar_pairings

    def spy(state: np.ndarray, n: int, *rest: object) -> list[list[Move]]:
        threads.append(threading.current_thread().name)
        return real(state, n, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(bars, "bar_pairings", spy)
    state = random_state_nxn(7, 100).flat
    monkeypatch.setenv(twins.THREADS_ENV, "1")
    alone = ring.bar_centres(state, 7, 20, 3)
    pairings = len(threads)  # different bars after 2 of the 3 inner-ring solutions
    assert pairings == 2 and set(threads) == {threading.current_thread().name}
    threads.clear()
    monkeypatch.setenv(twins.THREADS_ENV, "2")
    both = ring.bar_centres(state, 7, 20, 3)
    assert len(threads) == pairings and all(name.startswith("nxn-bars") for name in threads)
    assert [(c, r, s.tobytes(), [st.moves for st in stages]) for c, r, s, stages in both] == [
        (c, r, s.tobytes(), [st.moves for st in stages]) for c, r, s, stages in alone
    ]
