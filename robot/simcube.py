"""The solver's cube inside the simulated firmware.

The simulated firmware (:mod:`firmware_protocol`) knows no cube model: it is handed an object
with ``apply(face, quarter_turns, depth)`` and ``facelets()`` and turns it as its motors move:
a move's depth (the layers its gripper holds, from the MOVES flags byte) turns that many outer
layers of the N×N cube.
:class:`SolverCube` is that object for the solver's immutable :class:`~solver.cube.facelets.Cube`;
``cuberobot firmware-sim`` and the simulated robot (:mod:`robot.simrobot`) both use it.
"""

from __future__ import annotations

from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import Move

__all__ = ["SolverCube"]


class SolverCube:
    """A :class:`Cube` the simulated firmware turns.

    ``facelets_by`` is how :meth:`facelets` letters the stickers (``Cube.to_facelets``):
    ``"auto"`` (by the centres for odd N) or ``"scheme"`` (by the colour scheme).
    """

    def __init__(self, cube: Cube, *, facelets_by: str = "auto") -> None:
        self.cube = cube
        self.facelets_by = facelets_by

    def apply(self, face: str, quarter_turns: int, depth: int = 1) -> None:
        """Turn the ``depth`` outer layers of ``face`` (one of ``URFDLB``) by ``quarter_turns``
        (±1, ±2). A gripper cannot hold the whole cube: ``depth`` is 1..N-1."""
        n = self.cube.n
        if not 1 <= depth < n:
            raise ValueError(f"a gripper turns 1..{n - 1} layers of an N={n} cube, not {depth}")
        self.cube = self.cube.apply([Move.block(Face[face], 1, depth, quarter_turns)])

    def facelets(self) -> str:
        """The facelet string, faces U R F D L B."""
        return self.cube.to_facelets(self.facelets_by)
