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
    assert np.array_equal(bars._macro_scores(colours, n, None), whole)
