"""A local coloured light over some sticker *positions* of a view: the ambiguous lighting of the
simulated robot's tests and benchmark.

A warm lamp close to one part of the cube makes orange look red and yellow look orange there,
while the rest of the image is lit evenly. The per-face light correction of
:mod:`vision.classify` cannot undo it (it is not the whole face), so a single read of the stickers
under the spot is refused or, worse, wrong; a sticker moved out of the spot is read right. The
spot belongs to the position in the image, not to the sticker: it stays where it is as the cube
turns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from solver.cube.geometry import Face
from vision.calibration import Calibration

__all__ = ["AMBIGUOUS", "STRONG_WARM", "WARM", "Spotlight"]

UInt8Image = npt.NDArray[np.uint8]

#: Gains (B, G, R on the image) of a warm lamp: green and blue dimmed, red kept.
WARM = (0.55, 0.7, 1.0)
#: A lamp warm enough that orange reads as red and yellow as orange under it: on the simulated
#: robot most single reads of a scrambled cube with a dozen stickers under it are refused, and
#: some are wrong with full confidence (bench/robot_vision.py measures it).
STRONG_WARM = (0.3, 0.35, 1.0)


@dataclass(frozen=True, slots=True)
class Spotlight:
    """Light ``gains`` (B, G, R multipliers) over the stickers at ``positions``
    ((face, row, col), LTR layout) in every view that shows them."""

    positions: frozenset[tuple[Face, int, int]]
    gains: tuple[float, float, float] = WARM
    #: the spot covers the sticker's outline grown by this factor around its centre
    grow: float = 1.15

    @classmethod
    def over(
        cls, positions: Iterable[tuple[Face, int, int]], gains: tuple[float, float, float] = WARM
    ) -> Spotlight:
        return cls(frozenset(positions), gains)

    def apply(
        self, frames: Mapping[str, UInt8Image], calibration: Calibration
    ) -> dict[str, UInt8Image]:
        """The frames as seen under the spot (views without a spotted sticker unchanged)."""
        lit = dict(frames)
        gains = np.asarray(self.gains, dtype=np.float32)
        for view in calibration.views:
            if view.name not in lit:
                continue
            sites = [s for s in view.sites if (s.face, s.row, s.col) in self.positions]
            if not sites:
                continue
            image = lit[view.name]
            mask = np.zeros(image.shape[:2], dtype=np.uint8)
            for site in sites:
                centre = np.asarray(site.centre, dtype=np.float64)
                if len(site.quad) >= 3:
                    quad = centre + self.grow * (np.asarray(site.quad, dtype=np.float64) - centre)
                else:
                    half = self.grow * 2.0 * site.patch_half_size()
                    offsets = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], dtype=np.float64)
                    quad = centre + half * offsets
                cv2.fillConvexPoly(mask, np.round(quad).astype(np.int32), 1)
            scaled = image.astype(np.float32)
            scaled[mask > 0] *= gains
            lit[view.name] = np.clip(scaled, 0, 255).astype(np.uint8)
        return lit


#: The ambiguous lighting of the simulated robot's tests and benchmark: a strong warm lamp over
#: twelve positions of the faces the upper corner camera sees (U, F, R).
AMBIGUOUS = Spotlight.over(
    [
        (Face.F, 0, 0),
        (Face.F, 0, 1),
        (Face.F, 1, 0),
        (Face.F, 2, 2),
        (Face.R, 0, 1),
        (Face.R, 1, 1),
        (Face.R, 1, 2),
        (Face.R, 2, 0),
        (Face.U, 2, 2),
        (Face.U, 1, 2),
        (Face.U, 0, 0),
        (Face.U, 2, 1),
    ],
    STRONG_WARM,
)
