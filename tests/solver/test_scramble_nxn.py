"""Random big-cube states built piece by piece."""

from __future__ import annotations

import pytest

from solver.cube.cubie import CORNER_FACES, cubie_layout
from solver.cube.validate import validate
from solver.engines.nxn.wings import wing_parity
from solver.scramble import random_state_nxn


@pytest.mark.parametrize("n", [4, 5, 8])
def test_states_are_valid_and_repeatable(n: int) -> None:
    assert random_state_nxn(n, 5) == random_state_nxn(n, 5)
    assert random_state_nxn(n, 5) != random_state_nxn(n, 6)
    assert validate(random_state_nxn(n, 5)) == []


def test_both_wing_parities_and_corner_parities_occur() -> None:
    layout = cubie_layout(4)
    wing = set()
    corner = set()
    for seed in range(40):
        flat = random_state_nxn(4, seed).flat
        wing.add(wing_parity(flat, 4, 1))
        perm = [
            next(p for p, f in enumerate(CORNER_FACES) if set(f) == {int(flat[i]) for i in c})
            for c in layout.corners
        ]
        corner.add(sum(perm[i] > perm[k] for i in range(8) for k in range(i + 1, 8)) % 2)
    assert wing == {0, 1} and corner == {0, 1}


def test_small_sizes_are_refused() -> None:
    with pytest.raises(ValueError):
        random_state_nxn(3, 0)
