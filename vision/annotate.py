"""Annotated pictures of a scan: per view, the grid, the sampled patches and the colour each
sticker was classified as; and a net of the whole cube (``cuberobot scan --annotate``)."""

from __future__ import annotations

from collections.abc import Mapping

import cv2
import numpy as np
import numpy.typing as npt

from solver.cube.facelets import COLOUR_RGB, Cube
from solver.cube.geometry import Face
from vision.scan import ScanResult

__all__ = ["annotate_view", "net_image"]

UInt8Image = npt.NDArray[np.uint8]
_NET_PLACE = {
    Face.U: (0, 1),
    Face.L: (1, 0),
    Face.F: (1, 1),
    Face.R: (1, 2),
    Face.B: (1, 3),
    Face.D: (2, 1),
}


def _bgr(name: str) -> tuple[int, int, int]:
    r, g, b = COLOUR_RGB[name]
    return (b, g, r)


def annotate_view(image: npt.ArrayLike, view: str, result: ScanResult) -> UInt8Image:
    """A copy of ``image`` with every sampled patch outlined in its classified colour, the
    sticker's confidence, and low-confidence stickers marked with a red cross."""
    out: UInt8Image = np.array(image, dtype=np.uint8, copy=True)
    scheme = result.classification.scheme
    unsure = {(s.face, s.row, s.col) for s in result.low_confidence}
    for site in result.sites.get(view, ()):
        colour = scheme.colours[int(result.cube.stickers[site.face, site.row, site.col])]
        half = round(site.patch_half_size())
        x, y = round(site.centre[0]), round(site.centre[1])
        cv2.rectangle(out, (x - half, y - half), (x + half, y + half), (0, 0, 0), 5)
        cv2.rectangle(out, (x - half, y - half), (x + half, y + half), _bgr(colour), 3)
        conf = float(result.confidence[site.face, site.row, site.col])
        label = f"{site.face.name}{site.row}{site.col} {colour[:2]} {conf:.2f}"
        cv2.putText(
            out, label, (x - half, y + half + 14), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 0, 0), 3
        )
        cv2.putText(
            out,
            label,
            (x - half, y + half + 14),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.45,
            (255, 255, 255),
            1,
        )
        if (site.face, site.row, site.col) in unsure:
            cv2.line(out, (x - half, y - half), (x + half, y + half), (0, 0, 255), 3)
            cv2.line(out, (x - half, y + half), (x + half, y - half), (0, 0, 255), 3)
    return out


def net_image(cube: Cube, result: ScanResult | None = None, cell: int = 40) -> UInt8Image:
    """The unfolded net (U above F; L F R B; D below F) drawn in the scheme's display colours.
    With a scan result, each sticker's measured colour is shown as an inset square."""
    n = cube.n
    scheme = result.classification.scheme if result else None
    names = scheme.colours if scheme else ("white", "red", "green", "yellow", "orange", "blue")
    img = np.full((3 * n * cell + 2, 4 * n * cell + 2, 3), 40, dtype=np.uint8)
    measured: Mapping[int, tuple[int, int, int]] = {}
    if result is not None:
        from vision.colour import lab_to_rgb

        rgb = lab_to_rgb(result.samples.reshape(-1, 3))
        measured = {i: (int(v[2]), int(v[1]), int(v[0])) for i, v in enumerate(rgb)}
    for face, (br, bc) in _NET_PLACE.items():
        for k in range(n):  # row from the top
            for c in range(n):
                row = n - 1 - k
                y0 = (br * n + k) * cell + 1
                x0 = (bc * n + c) * cell + 1
                colour = names[int(cube.stickers[face, row, c])]
                cv2.rectangle(
                    img, (x0 + 1, y0 + 1), (x0 + cell - 2, y0 + cell - 2), _bgr(colour), -1
                )
                flat = int(face) * n * n + row * n + c
                if flat in measured:
                    q = cell // 4
                    cv2.rectangle(
                        img, (x0 + q, y0 + q), (x0 + cell - q, y0 + cell - q), measured[flat], -1
                    )
    return img
