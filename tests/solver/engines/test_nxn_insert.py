"""The half insertions ``m T2 m'`` of the big-cube centres (:mod:`solver.engines.nxn.insert`):
the planner against the loop it replaced, which built and counted every candidate's moves."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from solver.cube.geometry import Face
from solver.cube.notation import Metric, Move, count
from solver.engines.nxn import insert
from solver.engines.nxn.sim import geometry
from solver.scramble import random_state_nxn

Colours = np.ndarray


def _reference(
    state: Colours,
    n: int,
    target: Face,
    colour: int,
    done: Sequence[Face],
    targets: Sequence[int] | None = None,
) -> insert.Insertion | None:
    """The loop before the costs were counted without building the moves."""
    half = n // 2
    best: insert.Insertion | None = None
    memo: dict[tuple[Face, int], tuple[np.ndarray, np.ndarray]] = {}
    for axis in (f for f in (Face.U, Face.R, Face.F) if f in insert._perpendicular(target)):
        out = insert._per_layer(state, n, target, axis, colour, memo=memo)
        mirrored = np.zeros_like(out)
        mirrored[2:n] = out[n - 1 : 1 : -1]  # the target line each layer's piece lands on
        for d in (1, 2, -1):
            feeder = insert._feeder(n, Move.block(axis, 2, 2, d), target)
            if feeder in done:
                continue
            own = np.zeros_like(out)
            if targets is not None:
                back = insert._per_layer(state, n, target, axis, targets[feeder], memo=memo)
                own[2:n] = back[n - 1 : 1 : -1]
            for setup in (0, 1, 2, -1):
                gains = insert._per_layer(state, n, feeder, axis, colour, setup, memo) - mirrored
                if targets is not None:
                    gains += own - insert._per_layer(
                        state, n, feeder, axis, targets[feeder], setup, memo
                    )
                for lo, hi, gain in _half_ranges(gains, n, half):
                    moves = insert.half_moves(n, axis, d, lo, hi, feeder, setup, target)
                    cost = count(moves, Metric.HTM, n)
                    if best is None or gain * best.cost > best.gain * cost:
                        best = insert.Insertion(gain, cost, tuple(moves))
    return best


def _half_ranges(gains: np.ndarray, n: int, half: int) -> Iterator[tuple[int, int, int]]:
    """The contiguous range of largest positive gain in each half (layers 2..half and
    N+1-half..N-1; the middle layer of odd N in neither)."""
    values = gains.tolist()  # Python ints: the loop reads each once
    for a, b in ((2, half), (n + 1 - half, n - 1)):
        best_sum, best_range = 0, None
        run, start = 0, a
        for k in range(a, b + 1):
            if run <= 0:
                run, start = 0, k
            run += values[k]
            if run > best_sum:
                best_sum, best_range = run, (start, k)
        if best_range is not None:
            yield best_range[0], best_range[1], best_sum


@pytest.mark.parametrize("n", [4, 5, 6, 7, 8, 9, 10, 11, 15, 22, 33])
def test_half_insertions_are_the_reference_loops(n: int) -> None:
    """Random states (and states a few insertions from solved), every target, with and without
    finished faces and the colours of every face: the same insertion, gain, cost and moves."""
    rng = np.random.default_rng(n)
    targets = tuple(range(6))
    checked = 0
    for seed in range(6):
        if seed % 2:
            state = random_state_nxn(n, seed).flat.copy()
        else:
            state = np.repeat(np.arange(6, dtype=np.uint8), n * n)
            faces = list(Face)
            for _ in range(3):
                axis = faces[int(rng.integers(6))]
                lo = int(rng.integers(2, n))
                geometry(n).apply(state, [Move.block(axis, lo, lo, 1), Move.outer(axis, 2)])
        for target in Face:
            done = [f for f in Face if f != target and rng.random() < 0.3]
            for colours in (None, targets):
                want = _reference(state, n, target, int(target), done, colours)
                got = insert.best_half_insertion(state, n, target, int(target), done, colours)
                assert got == want
                if got is not None:
                    assert got.cost == count(got.moves, Metric.HTM, n)
                    checked += 1
    assert checked > 20
