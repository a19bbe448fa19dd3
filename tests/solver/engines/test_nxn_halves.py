"""Half-turn and mixed slice commutators of a pair of opposite faces (``halves.py``,
``mixed.py``): what their moves do, and the plans their candidates grow."""

from __future__ import annotations

import numpy as np
import pytest

from solver.cube.geometry import Face
from solver.cube.notation import Metric, count
from solver.engines.nxn import centres, halves, mixed, slices
from solver.engines.nxn.sim import geometry
from solver.scramble import random_state_nxn


def _moved_centres(n: int, labels: np.ndarray) -> dict[Face, set[int]]:
    """The centre cells of each face whose piece is not its own."""
    moved = {int(c) for c in np.flatnonzero(labels != np.arange(labels.size))}
    return {f: moved & set(centres.interior(n, f).tolist()) for f in Face}


def _rectangle(n: int, u: np.ndarray, u2: np.ndarray) -> tuple[list, list, np.ndarray]:
    """Two runs each way inside a quadrant's line-search layers (3..N/2+1)."""
    top = halves.quadrant_size(n) - 2
    rows, cols = [(3, 3), (5, top)], [(3, 4), (top, top)]
    rect = np.isin(u, [3, *range(5, top + 1)]) & np.isin(u2, [3, 4, top])
    return rows, cols, rect


@pytest.mark.parametrize("n", [9, 12])
@pytest.mark.parametrize("target", [Face.U, Face.F, Face.R])
def test_half_commutator_trades_a_rectangle_of_both_faces_and_nothing_else(
    n: int, target: Face
) -> None:
    """Every configuration, no setup or a turn of the opposite face: the rectangle's cells of
    both faces get the pieces of their (set-up) sources on the other face, and no centre of
    the four other faces moves (edges and corners come back too: a commutator of inner
    layers whose other cells it moves back)."""
    o = centres._opposite(target)
    configs = halves.half_configs(n, target)
    assert len(configs) == 8
    for hc in configs:
        rows, cols, rect = _rectangle(n, hc.cfg.u, hc.cfg.u2)
        for setup in (0, 1, 3):
            labels = np.arange(6 * n * n)
            geometry(n).apply(labels, halves.half_moves(hc, rows, cols, setup))
            turned = slices._setup_labels(n, o)[setup]
            t_cells, o_cells = hc.idx[1][rect], hc.idx[2][rect]
            assert labels[t_cells].tolist() == turned[hc.idx[0][rect]].tolist()
            assert labels[o_cells].tolist() == hc.idx[3][rect].tolist()
            moved = np.flatnonzero(labels != turned)  # by the commutator, after the setup
            inside = np.concatenate([centres.interior(n, target), centres.interior(n, o)])
            assert np.isin(moved, inside).all()  # no other face, no edge, no corner
            on = {f: int((moved // (n * n) == f).sum()) for f in (target, o)}
            assert on[target] == on[o] == 3 * int(rect.sum())


@pytest.mark.parametrize("n", [9, 12])
@pytest.mark.parametrize(("target", "frozen"), [(Face.U, ()), (Face.F, (Face.U, Face.D))])
def test_mixed_commutator_cycles_both_faces_with_the_sides_only(
    n: int, target: Face, frozen: tuple[Face, ...]
) -> None:
    """U and D: both axes give quarter turns; F and B with U and D finished: the U axis only.
    Every configuration, setups of either side: the rectangle's cells of the pair get the
    pieces of their sources, the moved centres lie on the pair and its two sides."""
    o = centres._opposite(target)
    quarters = mixed.quarter_axes(target, frozen)
    assert len(quarters) == (2 if not frozen else 1)
    for quarter in quarters:
        configs = mixed.mixed_configs(n, target, quarter)
        assert len(configs) == 16
        for mc in configs:
            rows, cols, rect = _rectangle(n, mc.cfg.u, mc.cfg.u2)
            for setups in ((0, 0), (2, 0), (0, 1)):
                labels = np.arange(6 * n * n)
                geometry(n).apply(labels, mixed.mixed_moves(mc, rows, cols, setups))
                on = _moved_centres(n, labels)
                assert {f for f in Face if on[f]} <= {target, o, *mc.sides}
                assert not any(on[f] for f in frozen)
                pre = np.arange(6 * n * n)
                for face, q in zip(mc.sides, setups, strict=True):
                    pre = pre[slices._setup_labels(n, face)[q]]
                for row in range(4):
                    cells = mc.cells[row][rect]
                    assert labels[cells].tolist() == pre[mc.src[row][rect]].tolist()
                assert len(on[target]) == len(on[o]) == 2 * int(rect.sum())


@pytest.mark.parametrize(("n", "seed"), [(11, 3), (16, 4)])
def test_grown_plans_gain_as_planned(n: int, seed: int) -> None:
    """The best half-turn and mixed slice commutators of a random state: the pieces they put
    on the pair are what was planned, nothing else changes count or place but the sources'
    pieces, the fixed centres stay, the cost is the moves' OBTM (no wide moves)."""
    state = random_state_nxn(n, seed).flat.copy()
    targets = centres.centre_targets(state, n)
    mids = [f * n * n + (n // 2) * n + n // 2 for f in Face]
    for target, frozen in ((Face.U, ()), (Face.F, (Face.U, Face.D)), (Face.R, tuple(Face)[:3])):
        o = centres._opposite(target)
        pair = (targets[target], targets[o])
        found = halves.half_candidates(state, n, target, pair)
        for quarter in mixed.quarter_axes(target, [f for f in frozen if f not in (target, o)]):
            found += mixed.mixed_candidates(state, n, target, quarter, pair)
        assert found

        def right(s: np.ndarray, face: Face) -> int:
            return int((s[centres.interior(n, face)] == targets[face]).sum())

        for cand in found[:4]:
            plan = cand.grow(n)
            after = state.copy()
            geometry(n).apply(after, plan.moves)
            gained = right(after, target) + right(after, o) - right(state, target) - right(state, o)
            assert gained == plan.gain > 0
            assert plan.cost == count(plan.moves, Metric.HTM, n)
            for f in frozen:
                if f not in (target, o):
                    inner = centres.interior(n, f)
                    assert after[inner].tolist() == state[inner].tolist()
            if n % 2:
                assert after[mids].tolist() == state[mids].tolist()
