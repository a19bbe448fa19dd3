"""Scrambles: uniform random states and random-move scrambles."""

from __future__ import annotations

import itertools
from collections import Counter

from solver.cube.cubie import CubieCube
from solver.cube.facelets import Cube
from solver.cube.notation import OPPOSITE
from solver.cube.validate import validate
from solver.scramble import WCA_LENGTHS, random_moves, random_state


def test_random_state_is_seeded_and_valid() -> None:
    assert random_state(5) == random_state(5)
    assert random_state(5) != random_state(6)
    for seed in range(50):
        assert validate(random_state(seed).to_cube()) == []


def test_random_state_is_roughly_uniform() -> None:
    # Where corner URF ends up, and its twist, over many states: each of 8x3 outcomes ~1/24.
    counts: Counter[tuple[int, int]] = Counter()
    for seed in range(2400):
        state: CubieCube = random_state(seed)
        position = state.cp.index(0)
        counts[(position, state.co[position])] += 1
    assert len(counts) == 24
    assert min(counts.values()) > 50 and max(counts.values()) < 160


def test_random_moves_lengths_and_no_redundant_neighbours() -> None:
    for n in range(2, 8):
        moves = random_moves(n, seed=n)
        assert len(moves) == WCA_LENGTHS[n]
        for a, b in itertools.pairwise(moves):
            same_layers = a.face is b.face and a.layers(n) == b.layers(n)
            assert not same_layers
        assert moves == random_moves(n, seed=n)
        assert not Cube.solved(n).apply(moves).is_solved()


def test_axis_runs_do_not_repeat_a_layer() -> None:
    moves = random_moves(3, length=500, seed=1)
    run: set[tuple[int, int]] = set()
    last = None
    for m in moves:
        axis = min(m.face, OPPOSITE[m.face])
        if axis != last:
            run = set()
        key = (m.face, m.hi)
        assert key not in run
        run.add(key)
        last = axis
