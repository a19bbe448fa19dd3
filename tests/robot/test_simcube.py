"""The virtual cube the simulated firmware turns: a move's depth turns that many layers."""

from __future__ import annotations

import pytest

from robot.simcube import SolverCube
from solver.cube.facelets import Cube


@pytest.mark.parametrize(
    ("n", "face", "turns", "depth", "notation"),
    [
        pytest.param(3, "R", 1, 1, "R", id="3x3-outer"),
        pytest.param(4, "R", 1, 2, "Rw", id="4x4-two-layers"),
        pytest.param(5, "U", -1, 2, "Uw'", id="5x5-two-layers-back"),
        pytest.param(7, "F", 2, 3, "3Fw2", id="7x7-three-layers-half"),
    ],
)
def test_depth_turns_that_many_outer_layers(
    n: int, face: str, turns: int, depth: int, notation: str
) -> None:
    start = Cube.solved(n).apply("R U F' L2 D B")
    cube = SolverCube(start)
    cube.apply(face, turns, depth)
    assert cube.cube == start.apply(notation)
    assert cube.facelets() == start.apply(notation).to_facelets()


def test_a_grip_of_the_whole_cube_is_refused() -> None:
    cube = SolverCube(Cube.solved(4))
    with pytest.raises(ValueError, match=r"1\.\.3 layers of an N=4 cube, not 4"):
        cube.apply("R", 1, 4)
