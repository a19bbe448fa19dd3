"""The optimiser: same state, never longer, and the reductions it promises."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import Metric, Move, MoveKind, count, format_moves, parse
from solver.optimize import optimize


@pytest.mark.parametrize(
    ("text", "n", "expected"),
    [
        pytest.param("R R", 3, "R2", id="merge"),
        pytest.param("R R'", 3, "", id="cancel"),
        pytest.param("R L R", 3, "R2 L", id="across-axis"),
        pytest.param("R U U' R'", 3, "", id="cascade"),
        pytest.param("R2 R2 F", 3, "F", id="half-cancel"),
        pytest.param("x R", 3, "R x", id="rotation-to-end"),
        pytest.param("y F y'", 3, "R", id="rotation-conjugate"),
        pytest.param("M M", 3, "M2", id="slice-merge"),
        pytest.param("Rw R'", 4, "2R", id="wide-minus-outer"),
        pytest.param("2R 3R", 4, "2-3Rw", id="adjacent-slices"),
        pytest.param("R 2R 3R L", 5, "3Rw L", id="parallel-layers"),
        pytest.param("Fw2 3F'", 6, "Fw' 3Fw'", id="wide-blocks-cheaper"),
        pytest.param("3Fw2 3B", 6, "3Fw' 4Fw'", id="wide-blocks-from-one-face"),
        pytest.param("3Rw2 2-3Rw' Rw", 6, "R Rw 3Rw", id="wide-blocks-of-three"),
        pytest.param("2R' 4R", 6, "2R' 3L'", id="inner-slices-kept-when-no-cheaper"),
    ],
)
def test_reductions(text: str, n: int, expected: str) -> None:
    result = optimize(text, n)
    assert format_moves(result) == expected
    assert Cube.solved(n).apply(result) == Cube.solved(n).apply(text)


def _moves(n: int) -> st.SearchStrategy[list[Move]]:
    faces = st.sampled_from(list(Face))
    turns = st.sampled_from([1, 2, -1, -2])
    layer_moves = st.builds(
        lambda f, lo, span, t: Move.block(f, lo, min(n, lo + span), t),
        faces,
        st.integers(1, n),
        st.integers(0, 2),
        turns,
    )
    rotations = st.builds(
        lambda f, t: Move(MoveKind.ROTATION, f, 0, 0, t),
        st.sampled_from([Face.R, Face.U, Face.F]),
        turns,
    )
    middles = st.builds(
        lambda f, t: Move(MoveKind.MIDDLE, f, 0, 0, t),
        st.sampled_from([Face.L, Face.D, Face.F]),
        turns,
    )
    return st.lists(st.one_of(layer_moves, layer_moves, rotations, middles), max_size=25)


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7])
def test_optimiser_properties(n: int) -> None:
    @settings(max_examples=150, deadline=None)
    @given(_moves(n))
    def check(moves: list[Move]) -> None:
        result = optimize(moves, n)
        assert Cube.solved(n).apply(result) == Cube.solved(n).apply(moves)
        assert len(result) <= len(moves)
        assert count(result, Metric.HTM, n) <= count(moves, Metric.HTM, n)
        assert optimize(result, n) == result or len(optimize(result, n)) <= len(result)

    check()


def test_rejects_moves_the_size_lacks() -> None:
    from solver.errors import UnsupportedError

    with pytest.raises(UnsupportedError):
        optimize(parse("M"), 2)


def _net_per_layer(group: list[Move], axis: Face, n: int) -> list[int]:
    """Layer by layer, the net quarter turns of a run of one axis (layers from ``axis``)."""
    net = [0] * (n + 1)
    for move in group:
        lo, hi = move.layers(n)
        if move.face is axis:
            layers, turns = range(lo, hi + 1), move.turns
        else:
            layers, turns = range(n + 1 - hi, n + 2 - lo), -move.turns
        for layer in layers:
            net[layer] += turns
    return [t % 4 for t in net]


@pytest.mark.parametrize("n", [8, 33, 101])
def test_merged_runs_turn_every_layer_as_the_run_did(n: int) -> None:
    """Runs of big-cube block moves of one axis (wide, inner ranges, middle slices, from
    either face): the merged moves are the maximal runs of layers of one net turn, each
    written once; a run of every layer (a rotation) leaves the group as it was."""
    import random

    from solver.optimize import _merge_group, _spell

    rng = random.Random(n)
    for _ in range(300):
        group = []
        for _ in range(rng.randint(1, 6)):
            face = rng.choice([Face.R, Face.L])
            lo = rng.randint(1, n - 1)
            hi = rng.randint(lo, min(n - 1, lo + rng.randint(0, n)))
            group.append(Move.block(face, lo, hi, rng.choice((1, 2, -1))))
        merged = _merge_group(group, Face.R, n)
        net = _net_per_layer(group, Face.R, n)
        runs, layer = [], 1
        while layer <= n:
            end = layer
            while end < n and net[end + 1] == net[layer]:
                end += 1
            if net[layer]:
                runs.append((layer, end, net[layer]))
            layer = end + 1
        if (1, n) in [(lo, hi) for lo, hi, _ in runs]:
            assert merged == group
        else:
            assert merged == [_spell(Face.R, lo, hi, q, n) for lo, hi, q in runs]
            assert _net_per_layer(merged, Face.R, n) == net


@pytest.mark.parametrize("n", [4, 6, 7])
def test_runs_of_one_axis_are_never_longer_in_obtm_than_the_block_runs(n: int) -> None:
    """Random runs of one axis's blocks: the optimiser's spelling turns every layer as the run
    did, and costs no more OBTM than the fewest-blocks spelling (:func:`_merge_group`) or the
    run itself; where every net change between layers can be reached from one face or the
    other, it costs one OBTM per such change."""
    import random

    from solver.optimize import _merge_group, _merged_run, _wide_spelling

    rng = random.Random(n)
    cheaper = 0
    for _ in range(400):
        group = []
        for _ in range(rng.randint(1, 4)):
            face = rng.choice([Face.R, Face.L])
            lo = rng.randint(1, n - 1)
            hi = rng.randint(lo, n - 1)
            group.append(Move.block(face, lo, hi, rng.choice((1, 2, -1))))
        result = list(_merged_run(tuple(group), Face.R, n))
        assert _net_per_layer(result, Face.R, n) == _net_per_layer(group, Face.R, n)
        htm = count(result, Metric.HTM, n)
        assert htm <= count(group, Metric.HTM, n) and len(result) <= len(group)
        blocks = _merge_group(group, Face.R, n)
        if len(blocks) <= len(group):
            assert htm <= count(blocks, Metric.HTM, n)
            cheaper += htm < count(blocks, Metric.HTM, n)
        wide = _wide_spelling(group, Face.R, n)
        if wide is not None:
            assert _net_per_layer(wide, Face.R, n) == _net_per_layer(group, Face.R, n)
            assert all(count([m], Metric.HTM, n) == 1 for m in wide)
    assert cheaper  # the wide spelling did shorten some runs
