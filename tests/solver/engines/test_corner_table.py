"""The corners-alone table (group ``cornertwist``): an exact distance, so a lower bound on the
rest of any solution that the phase-1 search may prune with."""

from __future__ import annotations

import numpy as np

from solver.engines.twophase import coord as C
from solver.engines.twophase.engine import get_solver


def _depths(corners: np.ndarray, twist: np.ndarray) -> np.ndarray:
    t = get_solver().tables
    sym = t.corner_sym[corners].astype(np.int64)
    i = t.corner_classidx[corners].astype(np.int64) * C.N_TWIST + t.twist_conj[twist, sym]
    packed = t.corner_twist_depth[i >> 1]
    return np.where(i & 1, packed >> 4, packed & 15).astype(np.int64)


def test_corner_depths_are_a_distance() -> None:
    """Solved is 0 and nothing else is; a move changes the depth by at most one; every other
    state has a move one closer; no corner state needs more than 11 face turns."""
    t = get_solver().tables
    rng = np.random.default_rng(7)
    corners = rng.integers(0, C.N_CORNERS, 3000)
    twist = rng.integers(0, C.N_TWIST, 3000)
    d = _depths(corners, twist)
    assert _depths(np.array([0]), np.array([0]))[0] == 0
    assert (d > 0).all() and d.max() <= 11
    children = np.stack(
        [
            _depths(t.corners_move[corners, m].astype(np.int64), t.twist_move[twist, m])
            for m in range(C.N_MOVE)
        ]
    )
    assert (np.abs(children - d) <= 1).all()
    assert (children.min(axis=0) == d - 1).all()


def test_corner_depths_of_known_states() -> None:
    """One quarter turn away is 1; the corners of a sexy move (R U R' U') are 4 apart at most
    and more than 1 (a single turn moves four corners)."""
    t = get_solver().tables
    for m in range(C.N_MOVE):
        assert _depths(t.corners_move[0:1, m].astype(np.int64), t.twist_move[0:1, m])[0] == 1
    c, tw = 0, 0
    for m in (3, 0, 5, 2):  # R U R' U' (move index 3 * face + k; faces U R F D L B)
        c, tw = int(t.corners_move[c, m]), int(t.twist_move[tw, m])
    assert 1 < _depths(np.array([c]), np.array([tw]))[0] <= 4
