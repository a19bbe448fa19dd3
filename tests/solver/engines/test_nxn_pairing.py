"""The beam-searched edge pairing of 5 ≤ N ≤ 9 (pairing.beam_pair_edges)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
import pytest

from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import Metric, Move, count, parse
from solver.cube.validate import validate
from solver.engines.nxn import _pairing, centres, engine, freeslice, pairing
from solver.engines.nxn.sim import geometry
from solver.scramble import random_state_nxn


def _finish(n: int) -> Callable[[npt.NDArray[np.uint8]], list[Move]]:
    return lambda end: engine._best_finish(end, n)


@pytest.mark.parametrize("n", [5, 6, 7])
def test_beam_pairing_keeps_centres_and_ends_every_edge(n: int) -> None:
    state, _, _ = engine.reduce_centres(random_state_nxn(n, 11))
    start = state.copy()
    moves = pairing.beam_pair_edges(state, n, _finish(n))
    assert moves is not None
    for face in Face:
        inside = centres.interior(n, face)
        assert np.array_equal(state[inside], start[inside])
    assert pairing.paired_count(state, n) == 12 * (n - 2)
    check = start.copy()
    geometry(n).apply(check, moves)
    assert np.array_equal(check, state)  # the moves returned are the moves applied
    assert not validate(engine.reduced_3x3(state, n))  # no OLL/PLL parity left on even N
    # a beam of one partial pairing is a greedy search; the wide one is never longer here
    greedy = pairing.beam_pair_edges(start.copy(), n, _finish(n), pairing.Beam(1, 1))
    assert greedy is not None
    assert count(moves, Metric.HTM, n) <= count(greedy, Metric.HTM, n)


def test_beam_pairing_gives_up_below_the_limit_and_leaves_the_state() -> None:
    n = 5
    state, _, _ = engine.reduce_centres(random_state_nxn(n, 3))
    start = state.copy()
    assert pairing.beam_pair_edges(state, n, _finish(n), limit=5) is None
    assert np.array_equal(state, start)


def test_beam_pairing_of_paired_edges_is_the_finish_only() -> None:
    n = 6
    state = Cube.solved(n).apply("R U F' D2").flat.copy()  # outer turns keep every pair
    assert pairing.beam_pair_edges(state, n, _finish(n)) == []


@pytest.mark.parametrize(
    ("n", "wide_only", "flips"),
    [(4, False, True), (5, True, False), (6, False, True), (7, False, False)],
)
def test_gains_scored_on_the_mixed_edges_equal_whole_cube_scores(
    n: int, wide_only: bool, flips: bool
) -> None:
    scrambled = engine.reduce_centres(random_state_nxn(n, 2))[0]
    paired = Cube.solved(n).apply("R U F' D2").flat.copy()  # every edge paired
    perms, _, _ = pairing._macros(n, wide_only, flips)
    beam = pairing.Beam(1, 1, wide_only=wide_only, flips=flips)
    for state, sign in ((scrambled, 1), (paired, -1)):
        codes = pairing._wing_codes(state, n)
        whole = pairing._score(codes[perms], n) - pairing.paired_count(state, n)
        assert np.array_equal(pairing._gains(state, n, beam), whole)
        assert (sign * whole > 0).any()


@pytest.mark.parametrize("n", [6, 7])
def test_gains_in_c_equal_the_numpy_scoring_with_counted_positions(n: int) -> None:
    state = engine.reduce_centres(random_state_nxn(n, 5))[0]
    for beam in (*engine.TWO_PASS[n], pairing.beam_for(n)):
        assert np.array_equal(pairing._gains(state, n, beam), pairing._gains_numpy(state, n, beam))


def test_gains_kernel_refuses_buffers_that_disagree() -> None:
    n = 5
    args = freeslice._kernel_args(n, True, False, None, False, False, None)
    rows, index, split, edges, counted, refs = args
    codes = np.zeros(6 * n * n, dtype=np.uint8)
    out = np.empty(index.shape[0], dtype=np.int64)
    width = index.shape[1]
    with pytest.raises(ValueError, match="sizes disagree"):
        _pairing.gains(codes, rows, index, split, edges, counted, refs, width, n - 1, out)
    with pytest.raises(ValueError, match="sticker outside"):
        _pairing.gains(codes[:10], rows, index, split, edges, counted, refs, width, n - 2, out)
    bad = split.copy()
    bad[0, 0] = 12
    with pytest.raises(ValueError, match="edge index"):
        _pairing.gains(codes, rows, index, bad, edges, counted, refs, width, n - 2, out)
    beyond = index.copy()
    beyond[-1, 0] = rows.shape[0]
    with pytest.raises(ValueError, match="row number"):
        _pairing.gains(codes, rows, beyond, split, edges, counted, refs, width, n - 2, out)


def test_gains_kernel_scores_each_distinct_edge_once() -> None:
    # the first pass of a 7x7 with the twists: far fewer distinct edges than mixed ones
    first = dataclasses.replace(engine.TWO_PASS[7][0], twists=True)
    rows, index, *_ = freeslice._kernel_args(7, *first.macro_set, first.counted)
    after, _, _ = freeslice._effects(7, *first.macro_set)
    assert np.array_equal(rows[index], after)
    assert rows.shape[0] * 10 < index.size
    state = engine.reduce_centres(random_state_nxn(7, 5))[0]
    assert np.array_equal(pairing._gains(state, 7, first), pairing._gains_numpy(state, 7, first))


def test_join_merges_and_cancels_the_turns_that_meet() -> None:
    n = 5
    moves, added = pairing._join(parse("R Uw"), parse("Uw' F"), n)
    assert moves == parse("R F") and added == 0  # Uw' cancels Uw (-1), F (+1)
    moves, added = pairing._join(parse("R 2U"), parse("2U F"), n)
    assert moves == parse("R 2U2 F") and added == 1  # 2U 2U is one 2U2 (an inner slice: 2)
    moves, added = pairing._join([], parse("Rw U Rw'"), n)
    assert moves == parse("Rw U Rw'") and added == 3
    # with the sequence's cost given (the beam's macros), the same
    for before, seq in (("R Uw", "Uw' F"), ("R 2U", "2U F"), ("", "Rw U Rw'"), ("F", "F' F'")):
        moves = parse(before) if before else []
        tail = pairing._join_tail(moves, parse(seq), n)
        known = pairing._join_tail(moves, parse(seq), n, count(parse(seq), Metric.HTM, n))
        assert known == tail


def test_beam_settings_per_size() -> None:
    assert pairing.beam_for(5).wide_only and not pairing.beam_for(5).flips
    for n in (5, 6, 7, 8, 9):
        beam = pairing.beam_for(n)
        assert beam.width >= 1 and beam.per_node >= 1


@pytest.mark.parametrize("n", [6, 7])
def test_two_pass_edges_pair_the_inner_orbit_first_then_every_wing(n: int) -> None:
    state, _, _ = engine.reduce_centres(random_state_nxn(n, 12))
    start = state.copy()
    first, _ = engine.TWO_PASS[n]
    assert first.counted is not None
    found = pairing.beam_pairings(start, n, lambda end: engine._inner_finish(end, n), first, keep=3)
    assert np.array_equal(state, start)  # beam_pairings leaves its input
    assert 1 <= len(found) <= 3
    assert [c for c, _, _ in found] == sorted(c for c, _, _ in found)
    assert len({end.tobytes() for _, _, end in found}) == len(found)
    for cost, moves, end in found:  # the inner wings (7x7: with the middle edge) grouped
        assert count(moves, Metric.HTM, n) == cost
        check = start.copy()
        geometry(n).apply(check, moves)
        assert np.array_equal(check, end)
        assert pairing.paired_count(end, n, first.counted) == 12 * len(first.counted)
    edges = engine._edges(state, n)
    assert edges is not None
    for face in Face:
        inside = centres.interior(n, face)
        assert np.array_equal(state[inside], start[inside])
    assert pairing.paired_count(state, n) == 12 * (n - 2)
    check = start.copy()
    geometry(n).apply(check, edges)
    assert np.array_equal(check, state)
    assert not validate(engine.reduced_3x3(state, n))  # no OLL/PLL parity left on even N


def test_two_pass_edges_give_up_below_the_limit_and_leave_the_state() -> None:
    n = 7
    state, _, _ = engine.reduce_centres(random_state_nxn(n, 3))
    start = state.copy()
    assert engine._edges(state, n, limit=20) is None
    assert np.array_equal(state, start)


def test_edge_ends_are_distinct_shortest_first_and_the_first_is_the_edges() -> None:
    n = 6
    state, _, _ = engine.reduce_centres(random_state_nxn(n, 14))
    start = state.copy()
    ends = engine._edge_ends(state, n, None, 3)
    assert np.array_equal(state, start) and 1 <= len(ends) <= 3
    assert [c for c, _, _ in ends] == sorted(c for c, _, _ in ends)
    assert len({end.tobytes() for _, _, end in ends}) == len(ends)
    for cost, moves, end in ends:
        assert count(moves, Metric.HTM, n) == cost
        check = start.copy()
        geometry(n).apply(check, moves)
        assert np.array_equal(check, end)
        assert pairing.paired_count(end, n) == 12 * (n - 2)
    edges = engine._edges(state, n)
    assert edges is not None and count(edges, Metric.HTM, n) == ends[0][0]


def test_both_ends_macros_keep_centres_and_pair_an_edge_of_each_axis_layer_at_once() -> None:
    n = 7
    blocks = ((1, 2),)
    macro = [Move.block(Face.R, 1, 2, 1), *parse("F R L' F'"), Move.block(Face.R, 1, 2, -1)]
    g = geometry(n)
    state = Cube.solved(n).flat.copy()
    g.apply(state, [m.inverse() for m in reversed(macro)])
    solved = Cube.solved(n).flat
    for face in Face:  # the centres stay, wings of several edges are mixed
        inside = centres.interior(n, face)
        assert np.array_equal(state[inside], solved[inside])
    assert pairing.paired_count(state, n) < 12 * (n - 2)
    effect = freeslice._perm(n, macro)[pairing._edge_cells(n)[:, 0, :].reshape(-1)]
    effects = {
        both: {row.tobytes() for row in pairing._macros(n, False, False, blocks, both)[0]}
        for both in (False, True)
    }
    assert effect.astype(np.int32).tobytes() in effects[True] - effects[False]
    beam = pairing.Beam(8, 8, flips=False, blocks=blocks, setup_nodes=0, both_ends=True)
    end = state.copy()
    moves = pairing.beam_pair_edges(end, n, lambda e: [], beam)
    assert moves is not None and pairing.paired_count(end, n) == 12 * (n - 2)
    check = state.copy()
    g.apply(check, moves)
    assert np.array_equal(check, end)
    assert count(moves, Metric.HTM, n) == 6  # one macro (the plain set needs two halves)


def test_twist_macros_keep_centres_and_bring_an_edge_in_the_other_way_round() -> None:
    n = 7
    blocks = ((1, 2),)
    wide = Move.block(Face.U, 1, 2, 1)  # the 5x5's Dw R F' U R' F Dw', on a 7x7's U axis
    macro = [wide, *parse("R F' D R' F"), wide.inverse()]
    g = geometry(n)
    state = Cube.solved(n).flat.copy()
    g.apply(state, [m.inverse() for m in reversed(macro)])
    solved = Cube.solved(n).flat
    for face in Face:
        inside = centres.interior(n, face)
        assert np.array_equal(state[inside], solved[inside])
    assert pairing.paired_count(state, n) < 12 * (n - 2)
    effect = freeslice._perm(n, macro)[pairing._edge_cells(n)[:, 0, :].reshape(-1)]
    effects = {
        twists: {
            row.tobytes() for row in pairing._macros(n, False, False, blocks, False, twists)[0]
        }
        for twists in (False, True)
    }
    assert effect.astype(np.int32).tobytes() in effects[True] - effects[False]
    for twists in (False, True):
        beam = pairing.Beam(8, 8, flips=False, blocks=blocks, setup_nodes=0, twists=twists)
        end = state.copy()
        moves = pairing.beam_pair_edges(end, n, lambda e: [], beam)
        assert moves is not None
        check = state.copy()
        g.apply(check, moves)
        assert np.array_equal(check, end)
        if twists:  # one macro; the plain set cannot pair it in as few
            assert pairing.paired_count(end, n) == 12 * (n - 2)
            assert count(moves, Metric.HTM, n) == 7
        else:
            assert pairing.paired_count(end, n) < 12 * (n - 2) or count(moves, Metric.HTM, n) > 7


def _calls(n: int, log: list[int]) -> Callable[[npt.NDArray[np.uint8]], list[Move]]:
    """The engine's finish, logging the paired wings of every state it is given."""

    def finish(end: npt.NDArray[np.uint8]) -> list[Move]:
        log.append(pairing.paired_count(end, n))
        return engine._best_finish(end, n)

    return finish


@pytest.mark.parametrize(("n", "seed"), [(6, 12), (7, 5)])
def test_stalled_pairings_left_unfinished_give_the_same_ends(n: int, seed: int) -> None:
    start, _, _ = engine.reduce_centres(random_state_nxn(n, seed))
    first, second = engine.TWO_PASS[n]
    assert not first.finish_stalled and not second.finish_stalled
    inner = pairing.beam_pairings(start, n, lambda end: engine._inner_finish(end, n), first)
    state = inner[0][2]  # the second pass starts where the first ended
    every = dataclasses.replace(second, finish_stalled=True)
    log_all: list[int] = []
    log_done: list[int] = []
    found = pairing.beam_pairings(state, n, _calls(n, log_all), every, keep=4)
    quick = pairing.beam_pairings(state, n, _calls(n, log_done), second, keep=4)
    assert [(c, m) for c, m, _ in quick] == [(c, m) for c, m, _ in found]
    assert all(np.array_equal(a, b) for (_, _, a), (_, _, b) in zip(quick, found, strict=True))
    full = 12 * (n - 2)
    assert any(p < full for p in log_all)  # the beam stalled somewhere ...
    assert log_done and all(p == full for p in log_done)  # ... and only whole ones finished


def test_a_beam_that_completes_none_finishes_its_stalled_pairings() -> None:
    n = 6
    state, _, _ = engine.reduce_centres(random_state_nxn(n, 4))
    # one pairing, one macro a node, no outer turn when stalled: it stops short of the end
    narrow = pairing.Beam(1, 1, flips=False, setup_nodes=0, finish_stalled=False)
    log: list[int] = []
    found = pairing.beam_pairings(state, n, _calls(n, log), narrow)
    assert log and all(p < 12 * (n - 2) for p in log)  # a stalled pairing, finished
    assert len(found) == 1
    cost, moves, end = found[0]
    check = state.copy()
    geometry(n).apply(check, moves)
    assert np.array_equal(check, end) and count(moves, Metric.HTM, n) == cost
    for face in Face:
        inside = centres.interior(n, face)
        assert np.array_equal(end[inside], state[inside])
    assert pairing.paired_count(end, n) == 12 * (n - 2)
    assert not validate(engine.reduced_3x3(end, n))


def test_best_finish_of_paired_dedges_skips_the_parity_algorithm(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    n = 6
    state = Cube.solved(n).apply("R U F' D2").flat.copy()
    calls: list[int] = []
    plain = engine._finish

    def counted(
        st: npt.NDArray[np.uint8], size: int, orbits: list[int] | None = None
    ) -> list[Move]:
        calls.append(1)
        return plain(st, size, orbits)

    monkeypatch.setattr(engine, "_finish", counted)
    assert engine._best_finish(state, n) == []
    assert len(calls) == 1  # nothing to do: the parity algorithm was not tried
    odd = Cube.solved(n).apply(engine.pll_parity(n)).flat.copy()  # two dedges exchanged
    calls.clear()
    assert engine._best_finish(odd, n) == list(engine.pll_parity(n))  # 7 < two 3-cycles
    assert len(calls) == 2
