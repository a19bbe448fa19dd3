"""The solver's cube inside the simulated firmware.

The simulated firmware (:mod:`firmware_protocol`) knows no cube model: it is handed an object
with ``apply(face, quarter_turns)`` and ``facelets()`` and turns it as its motors move.
:class:`SolverCube` is that object for the solver's immutable :class:`~solver.cube.facelets.Cube`;
``cuberobot firmware-sim`` and the simulated robot (:mod:`robot.simrobot`) both use it.
"""

from __future__ import annotations

from solver.cube.facelets import Cube

__all__ = ["SolverCube"]

#: Quarter turns as the firmware counts them (+ clockwise) → the notation's suffix.
_SUFFIX = {1: "", -1: "'", 2: "2", -2: "2'"}


class SolverCube:
    """A :class:`Cube` the simulated firmware turns.

    ``facelets_by`` is how :meth:`facelets` letters the stickers (``Cube.to_facelets``):
    ``"auto"`` (by the centres for odd N) or ``"scheme"`` (by the colour scheme).
    """

    def __init__(self, cube: Cube, *, facelets_by: str = "auto") -> None:
        self.cube = cube
        self.facelets_by = facelets_by

    def apply(self, face: str, quarter_turns: int) -> None:
        """Turn ``face`` (one of ``URFDLB``) by ``quarter_turns`` (±1, ±2)."""
        self.cube = self.cube.apply(face + _SUFFIX[quarter_turns])

    def facelets(self) -> str:
        """The facelet string, faces U R F D L B."""
        return self.cube.to_facelets(self.facelets_by)
