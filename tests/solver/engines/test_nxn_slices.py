"""Slice commutators of the first pair of faces (``slices.py``): what their moves do, and the
plans the candidates grow."""

from __future__ import annotations

import numpy as np
import pytest

from solver.cube.geometry import Face
from solver.engines.nxn import centres, slices
from solver.engines.nxn.sim import geometry
from solver.scramble import random_state_nxn


@pytest.mark.parametrize("n", [9, 12])
def test_slice_commutator_cycles_the_same_rectangle_of_u_and_of_d(n: int) -> None:
    """Two runs of each axis, every configuration, a setup turn of either feeding face: the
    cells (a, b) of the rectangle on U and on D get the pieces of their (set-up) sources,
    nothing else of U or D moves, and the other cycled cells lie on the faces feeding them
    and on the two faces the other set carries them to."""
    rows, cols = [(3, 4), (7, 7)], [(4, 4), (n - 2, n - 1)]  # shifted layers
    configs = slices.slice_configs(n, Face.U)
    assert len(configs) == 8
    for sc in configs:
        rect = np.isin(sc.cfg.u, [3, 4, 7]) & np.isin(sc.cfg.u2, [4, n - 2, n - 1])
        for setups in ((0, 0), (1, 0), (0, 3)):
            labels = np.arange(6 * n * n)
            geometry(n).apply(labels, slices.slice_moves(sc, rows, cols, setups))
            moved = {int(c) for c in np.flatnonzero(labels != np.arange(labels.size))}
            on = {f: moved & set(centres.interior(n, f).tolist()) for f in Face}
            up, down = sc.idx[1][rect], sc.idx[3][rect]
            assert on[Face.U] == set(up.tolist()) and on[Face.D] == set(down.tolist())
            for half, cells in ((0, up), (1, down)):
                feed = slices._setup_labels(n, sc.feeds[half])[setups[half]]
                assert labels[cells].tolist() == feed[sc.idx[2 * half][rect]].tolist()
            assert sc.feeds[0] != sc.feeds[1]
            assert {f for f in Face if on[f]} == set(Face)


def test_odd_cubes_never_cycle_the_fixed_centre() -> None:
    n = 9
    for sc in slices.slice_configs(n, Face.U):
        mid = (n + 1) // 2 + 1  # shifted
        barred = (sc.cfg.u == mid) & (sc.cfg.u2 == mid)
        assert barred.sum() == 1 and np.array_equal(barred, sc.barred)
    assert not any(sc.barred.any() for sc in slices.slice_configs(10, Face.U))


@pytest.mark.parametrize(("n", "seed"), [(11, 3), (16, 4)])
def test_grown_slice_plans_gain_as_planned_on_u_and_d(n: int, seed: int) -> None:
    """The best slice commutators of a random state: the pieces they put on U and D are what
    was planned, the fixed centres stay, the cost is the moves' OBTM (no wide moves)."""
    state = random_state_nxn(n, seed).flat.copy()
    targets = centres.centre_targets(state, n)
    found = slices.slice_candidates(state, n, Face.U, (targets[Face.U], targets[Face.D]))
    assert found
    mids = [f * n * n + (n // 2) * n + n // 2 for f in Face]

    def right(s: np.ndarray) -> int:
        return sum(int((s[centres.interior(n, f)] == targets[f]).sum()) for f in (Face.U, Face.D))

    for cand in found[:3]:
        plan = cand.grow(n)
        after = state.copy()
        geometry(n).apply(after, plan.moves)
        assert right(after) - right(state) == plan.gain > 0
        assert plan.cost == sum(1 if m.lo == 1 else 2 for m in plan.moves)
        if n % 2:
            assert after[mids].tolist() == state[mids].tolist()
