"""6x6 and 7x7: the obliques paired into bars (bars.py), the outer centres then a 5x5's."""

from __future__ import annotations

import numpy as np
import pytest

from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import Metric, Move, count
from solver.engines.nxn import bars, ring, staged, staged5
from solver.engines.nxn.sim import geometry
from solver.errors import UnsupportedError
from solver.scramble import random_state_nxn


def _inner_ring_solved(state: np.ndarray, n: int) -> bool:
    blocks = state[bars._inner_blocks(n)]
    return bool((blocks == blocks[:, :1]).all())


def _ring_solved(n: int, seed: int) -> np.ndarray:
    """A random 6x6 state after its inner ring's staged solution."""
    state = random_state_nxn(n, seed).flat.copy()
    option = staged.staged_centres(ring.project(state, n), 1)[0]
    geometry(n).apply(state, ring.to_big(option.moves))
    assert _inner_ring_solved(state, n)
    return state


def _base_scramble(n: int, count_: int, seed: int) -> list[Move]:
    """Moves that keep the inner ring and the bars (outer turns, depth-1 slices, 2Rw)."""
    rng = np.random.default_rng(seed)
    base = bars._base_moves(n)
    return [base[int(k)] for k in rng.integers(len(base), size=count_)]


@pytest.mark.parametrize("n", bars.SIZES)
def test_paired_bars_turn_as_a_five(n: int) -> None:
    """With the bars paired and the inner ring solved, the stickers at bar_coords are a 5x5
    under its outer and wide turns (as the big cube's outer and 2Rw turns)."""
    state = Cube.solved(n).flat.copy()
    geometry(n).apply(state, _base_scramble(n, 30, n))
    assert bars.paired(state[bars.bar_cells(n).reshape(-1)], n) == 24 * (n - 5)
    small = ring.project(state, n, bars.bar_coords(n))
    rng = np.random.default_rng(1)
    moves = [
        Move.block(Face(int(rng.integers(6))), 1, int(rng.integers(1, 3)), int(t))
        for t in rng.choice([1, 2, -1], size=40)
    ]
    geometry(5).apply(small, moves)
    geometry(n).apply(state, ring.to_big(tuple(moves), 2))
    assert np.array_equal(ring.project(state, n, bars.bar_coords(n)), small)
    assert bars.bar_coords(6) == (0, 1, 2, 4, 5) and bars.bar_coords(7) == (0, 1, 3, 5, 6)
    with pytest.raises(UnsupportedError, match="N in"):
        bars.bar_coords(8)


def test_macros_keep_the_inner_ring_and_permute_the_bars_as_stored() -> None:
    n = 6
    table = bars.macro_table(n)
    assert len(table.cost) > 10_000 and (np.diff(table.cost) >= 0).all()
    rng = np.random.default_rng(0)
    cells = bars.bar_cells(n).reshape(-1)
    start = _ring_solved(n, 2)
    for k in rng.integers(len(table.cost), size=40):
        moves = table.moves(int(k))
        assert count(list(moves), Metric.HTM, n) == table.cost[k]
        after = start.copy()
        geometry(n).apply(after, moves)
        assert _inner_ring_solved(after, n)
        assert np.array_equal(after[cells], start[cells][table.perm[k]])


@pytest.mark.parametrize("seed", [0, 1])
def test_pair_bars_pairs_every_bar_and_keeps_the_inner_ring(seed: int) -> None:
    n = 6
    state = _ring_solved(n, seed)
    cells = bars.bar_cells(n).reshape(-1)
    assert bars.paired(state[cells], n) < 24
    before = state.copy()
    moves = bars.pair_bars(state, n)
    assert bars.paired(state[cells], n) == 24 and _inner_ring_solved(state, n)
    geometry(n).apply(before, moves)
    assert np.array_equal(before, state)  # the moves returned are the moves applied
    # the 5x5 search then solves the outer centres and the bars
    small = staged5.staged_centres(ring.project(state, n, bars.bar_coords(n)), 1)[0]
    geometry(n).apply(state, ring.to_big(small.moves, 2))
    faces = state.reshape(6, n, n)[:, 1:-1, 1:-1].reshape(6, -1)
    assert (faces == faces[:, :1]).all()


def test_bar_pairings_shortest_first_each_pairs_every_bar_and_keeps_the_inner_ring() -> None:
    n = 6
    state = _ring_solved(n, 4)
    start = state.copy()
    cells = bars.bar_cells(n).reshape(-1)
    found = bars.bar_pairings(state, n, 3)
    assert np.array_equal(state, start)  # bar_pairings leaves its input
    assert 1 <= len(found) <= 3
    costs = [count(moves, Metric.HTM, n) for moves in found]
    assert costs == sorted(costs)
    assert len({tuple(map(str, moves)) for moves in found}) == len(found)
    for moves in found:
        after = start.copy()
        geometry(n).apply(after, moves)
        assert bars.paired(after[cells], n) == 24 and _inner_ring_solved(after, n)
    assert found[0] == bars.pair_bars(start.copy(), n)  # the shortest is pair_bars' own


@pytest.mark.parametrize("n", bars.SIZES)
def test_macro_scores_on_the_mixed_bars_equal_whole_bar_scores(n: int) -> None:
    """Scoring each macro on the bars it mixes gives what scoring every bar gives."""
    table = bars.macro_table(n)
    cells = bars.bar_cells(n).reshape(-1)
    state = random_state_nxn(n, 6).flat.copy()
    search = staged.staged_centres if n == 6 else staged5.staged_centres
    geometry(n).apply(state, ring.to_big(search(ring.project(state, n), 1)[0].moves))
    colours = state[cells]
    whole = bars._score(np.take(colours, table.perm).reshape(len(table.perm), 24, n - 4))
    now = bars.paired(colours, n)
    assert (whole < now).any() and (whole > now).any()
    assert np.array_equal(bars._macro_scores(colours, n, None), np.maximum(whole, now))


@pytest.mark.parametrize("n", bars.SIZES)
def test_the_scoring_kernel_gives_the_numpy_scores(n: int) -> None:
    """The C kernel (``_bars.scores``) scores every macro as the numpy version does, on
    random bar colourings and on the bars of a random state after its inner ring."""
    cells = bars.bar_cells(n).reshape(-1)
    rng = np.random.default_rng(n)
    states = [rng.integers(6, size=cells.size).astype(np.uint8) for _ in range(3)]
    states.append(random_state_nxn(n, 5).flat[cells].copy())
    for colours in states:
        fast = bars._macro_scores(colours, n, None)
        assert np.array_equal(fast, bars._macro_scores_numpy(colours, n, None))
        assert fast.max() > bars.paired(colours, n)


def test_the_scoring_kernel_skips_rows_that_split_one_colour_bars_only() -> None:
    """A macro that splits only one-colour bars cannot pair more: the kernel gives it the
    state's own count; every other row gets max(its score, that count), with whole states of
    bars paired, in part and in full."""
    n = 7
    cells = bars.bar_cells(n).reshape(-1)
    table = bars.macro_table(n)
    state = Cube.solved(n).flat.copy()
    geometry(n).apply(state, _base_scramble(n, 30, 3))
    colours = state[cells].copy()  # every bar one colour
    now = bars.paired(colours, n)
    assert now == 48 and bars._unpaired(colours, n) == 0
    assert (bars._macro_scores(colours, n, None) == now).all()
    mixed = colours[table.perm[int(np.flatnonzero(table.cost >= 5)[0])]]
    assert bars.paired(mixed, n) < now
    assert np.array_equal(
        bars._macro_scores(mixed, n, None), bars._macro_scores_numpy(mixed, n, None)
    )


def _pad(values: np.ndarray, dtype: type) -> np.ndarray:
    out = np.zeros(256, dtype=dtype)
    out[: values.size] = values
    return out


def test_the_scoring_kernel_refuses_bad_buffers() -> None:
    from solver.engines.nxn import _bars

    lut = bars._lut(3)
    own = _pad(np.zeros(24, dtype=np.int64), np.int64)
    colours = _pad(np.zeros(72, dtype=np.uint8), np.uint8)
    cells = np.zeros((2, 12), dtype=np.uint8)
    split = np.zeros((2, 4), dtype=np.uint8)
    sources = np.ones(2, dtype=np.uint32)
    out = np.empty(2, dtype=np.int64)
    _bars.scores(colours, cells, split, sources, own, lut, 4, 3, 7, 1, out)
    assert out.tolist() == [15, 15]  # 4 one-colour bars (2 cells paired each) split none
    _bars.scores(colours, cells, split, sources, own + 2, lut, 4, 3, 7, 1, out)
    assert out.tolist() == [7, 7]  # 4 bars of 2 cells paired made, bar 0 (2) split 4 times
    _bars.scores(colours, cells, split, sources, own, lut, 4, 3, 7, 2, out)
    assert out.tolist() == [7, 7]  # the rows split bar 0 only, which is one colour: skipped
    with pytest.raises(ValueError, match="sizes disagree"):
        _bars.scores(
            colours, cells, split, sources, own, lut, 4, 3, 0, 1, np.empty(3, dtype=np.int64)
        )
    with pytest.raises(ValueError, match="sizes disagree"):
        _bars.scores(colours[:72], cells, split, sources, own, lut, 4, 3, 0, 1, out)
    with pytest.raises(ValueError, match="sizes disagree"):
        _bars.scores(colours, cells, split, sources, own[:24], lut, 4, 3, 0, 1, out)
    with pytest.raises(ValueError, match="colour outside"):
        _bars.scores(colours + 6, cells, split, sources, own, lut, 4, 3, 0, 1, out)
