"""Reading a whole cube: images (or RGB samples) → a cube with confidences and a verdict.

This is the API the daemon and the CLI call (plain functions, CPU-bound: call them through
``asyncio.to_thread``)::

    result = read_cube({"U": img_u, "R": img_r, ...})          # free mode, one photo per face
    result = read_cube(frames, calibration=cal)                 # robot mode, any views
    result = read_rgb(rgb)                                      # mean RGB per sticker (6, N, N, 3)
    result.cube, result.valid, result.low_confidence, result.repairs, result.problems
    result.verdict, result.cube_confidence, result.in_doubt     # act only on "accepted"

Free mode needs one image per face, keyed by the face letter, each face shown as it lies on the
usual unfolded net. Robot mode takes any set of views (face views, corner views showing three
faces) whose calibration together covers every sticker.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from solver.cube.facelets import DEFAULT_SCHEME, ColourScheme, Cube
from solver.cube.geometry import Face
from vision.calibration import Calibration, StickerSite
from vision.classify import (
    DEFAULT_LOW_CONFIDENCE,
    Classification,
    ColourPalette,
    ConstraintLevel,
    classify,
)
from vision.colour import FloatArray, rgb_to_lab
from vision.errors import GridNotFoundError, ScanInputError, SizeMismatchError
from vision.imagefile import read_image
from vision.locate import find_grid, sample_sites

__all__ = [
    "ScanResult",
    "face_images_in",
    "load_face_images",
    "read_cube",
    "read_rgb",
]

log = logging.getLogger(__name__)

UInt8Image = npt.NDArray[np.uint8]
_FACE_NAME = re.compile(r"(?:^|[^A-Za-z])([URFDLB])$")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")


@dataclass(frozen=True, slots=True)
class ScanResult:
    """What a scan read, how sure it is, and whether it is a possible cube."""

    classification: Classification
    samples: FloatArray  # (6, N, N, 3) L*a*b* per sticker, LTR layout
    sites: Mapping[str, tuple[StickerSite, ...]] = field(default_factory=dict)
    timings_ms: Mapping[str, float] = field(default_factory=dict)

    @property
    def cube(self) -> Cube:
        return self.classification.cube

    @property
    def n(self) -> int:
        return self.classification.cube.n

    @property
    def valid(self) -> bool:
        return self.classification.valid

    @property
    def confidence(self) -> FloatArray:
        return self.classification.confidence

    @property
    def low_confidence(self) -> tuple[Any, ...]:
        return self.classification.low_confidence

    @property
    def cube_confidence(self) -> float:
        return self.classification.cube_confidence

    @property
    def accepted(self) -> bool:
        return self.classification.accepted

    @property
    def verdict(self) -> str:
        """``accepted`` (a valid cube, confident enough to act on) or ``refused``."""
        return self.classification.verdict

    @property
    def in_doubt(self) -> tuple[Any, ...]:
        return self.classification.in_doubt

    @property
    def repairs(self) -> tuple[Any, ...]:
        return self.classification.repairs

    @property
    def problems(self) -> tuple[Any, ...]:
        return self.classification.problems

    def to_facelets(self) -> str:
        """URFDLB facelet string: letters by centre for odd N, by the scheme for even N."""
        return self.cube.to_facelets()

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready summary (the ``cuberobot scan --format json`` document)."""
        scheme = self.classification.scheme
        n = self.n
        return {
            "n": n,
            "facelets": self.to_facelets(),
            "valid": self.valid,
            "problems": [
                {"code": p.code, "where": p.where, "message": p.message} for p in self.problems
            ],
            "repairs": [
                {
                    "kind": r.kind,
                    "where": r.where,
                    "cost": round(r.cost, 3),
                    "stickers": [str(s) for s in r.stickers],
                    "before": [scheme.colours[c] for c in r.before],
                    "after": [scheme.colours[c] for c in r.after],
                    "message": r.describe(scheme),
                }
                for r in self.repairs
            ],
            "low_confidence": [
                {
                    "sticker": str(s),
                    "confidence": round(float(self.confidence[s.face, s.row, s.col]), 4),
                }
                for s in self.low_confidence
            ],
            "min_confidence": round(float(self.confidence.min()), 4),
            "verdict": self.verdict,
            "confidence": round(self.cube_confidence, 4),
            "accept_threshold": self.classification.accept_confidence,
            "in_doubt": [
                {
                    "sticker": str(s),
                    "confidence": round(float(self.confidence[s.face, s.row, s.col]), 4),
                }
                for s in self.in_doubt
            ],
            "timings_ms": {k: round(v, 2) for k, v in self.timings_ms.items()},
        }


def read_rgb(
    rgb: npt.ArrayLike,
    *,
    scheme: ColourScheme = DEFAULT_SCHEME,
    palette: ColourPalette | None = None,
    level: ConstraintLevel = ConstraintLevel.REPAIR,
    low_confidence: float = DEFAULT_LOW_CONFIDENCE,
) -> ScanResult:
    """Classify mean RGB (0..255) per sticker, shape ``(6, N, N, 3)`` in LTR layout."""
    start = time.perf_counter()
    lab = rgb_to_lab(rgb)
    result = classify(
        lab, scheme=scheme, palette=palette, level=level, low_confidence=low_confidence
    )
    elapsed = (time.perf_counter() - start) * 1000
    return ScanResult(result, lab, {}, {"classify": elapsed, "total": elapsed})


def read_cube(
    images: Mapping[str, npt.ArrayLike],
    calibration: Calibration | None = None,
    n: int | None = None,
    *,
    scheme: ColourScheme = DEFAULT_SCHEME,
    palette: ColourPalette | None = None,
    level: ConstraintLevel = ConstraintLevel.REPAIR,
    low_confidence: float = DEFAULT_LOW_CONFIDENCE,
) -> ScanResult:
    """Read a cube from camera images (BGR uint8).

    With ``calibration`` (robot mode) the keys are view names of the calibration; without it
    (free mode) they are face letters and each image shows that face as on the unfolded net.
    ``n`` is inferred in free mode when not given. Raises :class:`ScanInputError` for missing
    or malformed images, :class:`GridNotFoundError` when a face's grid cannot be found,
    :class:`~vision.errors.SizeMismatchError` when ``n`` disagrees with the grid a face shows,
    :class:`~vision.errors.CalibrationError` when the calibration does not cover the cube.
    """
    start = time.perf_counter()
    timings: dict[str, float] = {}
    sites: dict[str, tuple[StickerSite, ...]] = {}
    if calibration is not None:
        calibration.check_complete()
        if n is not None and n != calibration.n:
            raise ScanInputError(f"--size {n} but the calibration is for N={calibration.n}")
        size = calibration.n
        samples = np.full((6, size, size, 3), np.nan)
        for view in calibration.views:
            if view.name not in images:
                raise ScanInputError(
                    f"no image for calibrated view {view.name!r} "
                    f"(got views: {', '.join(sorted(images)) or 'none'})"
                )
            t0 = time.perf_counter()
            lab = sample_sites(_as_image(images[view.name], view.name), view.sites)
            for site, value in zip(view.sites, lab, strict=True):
                samples[site.face, site.row, site.col] = value
            sites[view.name] = view.sites
            timings[f"sample {view.name}"] = (time.perf_counter() - t0) * 1000
    else:
        missing = [f.name for f in Face if f.name not in images]
        if missing:
            raise ScanInputError(
                f"free mode needs one image per face; missing {', '.join(missing)} "
                "(name the files by face letter, e.g. U.png or rubiks-side-U.png)"
            )
        fits = {}
        for face in Face:
            t0 = time.perf_counter()
            try:
                fits[face] = find_grid(_as_image(images[face.name], face.name), n, face)
            except GridNotFoundError as exc:
                raise GridNotFoundError(f"face {face.name}: {exc}") from exc
            except SizeMismatchError as exc:
                raise SizeMismatchError(f"face {face.name}: {exc}") from exc
            timings[f"locate {face.name}"] = (time.perf_counter() - t0) * 1000
        sizes = {f.name: fit.n for f, fit in fits.items()}
        if n is None and len(set(sizes.values())) != 1:
            # A face whose grid came out bigger or smaller (a background shape on the
            # lattice, an undetected edge row): go with the size most faces agree on.
            votes = sorted(sizes.values())
            majority = max(set(votes), key=votes.count)
            if votes.count(majority) >= 4:
                log.info("faces disagree on N (%s); using the majority N=%d", sizes, majority)
                for face in Face:
                    if fits[face].n != majority:
                        image = _as_image(images[face.name], face.name)
                        fits[face] = find_grid(image, majority, face)
                sizes = {f.name: fit.n for f, fit in fits.items()}
        if len(set(sizes.values())) != 1:
            found = ", ".join(f"{k} {v}x{v}" for k, v in sizes.items())
            raise ScanInputError(
                f"the faces show different grid sizes ({found}); give the size with --size N"
            )
        size = next(iter(sizes.values()))
        samples = np.zeros((6, size, size, 3))
        for face, fit in fits.items():
            t0 = time.perf_counter()
            try:
                lab = sample_sites(_as_image(images[face.name], face.name), fit.sites)
            except ScanInputError as exc:
                raise GridNotFoundError(
                    f"face {face.name}: the grid found runs off the image ({exc})"
                ) from exc
            for site, value in zip(fit.sites, lab, strict=True):
                samples[site.face, site.row, site.col] = value
            sites[face.name] = fit.sites
            timings[f"sample {face.name}"] = (time.perf_counter() - t0) * 1000
    t0 = time.perf_counter()
    result = classify(
        samples, scheme=scheme, palette=palette, level=level, low_confidence=low_confidence
    )
    timings["classify"] = (time.perf_counter() - t0) * 1000
    timings["total"] = (time.perf_counter() - start) * 1000
    return ScanResult(result, samples, sites, timings)


def _as_image(image: npt.ArrayLike, name: str) -> UInt8Image:
    arr = np.asarray(image)
    if arr.ndim != 3 or arr.shape[2] != 3 or arr.dtype != np.uint8:
        raise ScanInputError(
            f"image for {name!r} is not a BGR colour image (shape {arr.shape}, {arr.dtype})"
        )
    return arr


def face_images_in(directory: str | Path) -> dict[str, Path]:
    """The per-face image files of a folder: the face letter is the last character of the
    file's stem after a separator (``U.png``, ``rubiks-side-U.png``, ``scan_U.jpg``)."""
    folder = Path(directory)
    if not folder.is_dir():
        raise ScanInputError(f"{folder} is not a directory of face images")
    found: dict[str, Path] = {}
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() not in IMAGE_SUFFIXES:
            continue
        match = _FACE_NAME.search(path.stem)
        if not match:
            continue
        letter = match.group(1)
        if letter in found:
            raise ScanInputError(
                f"two images for face {letter} in {folder}: {found[letter].name}, {path.name}"
            )
        found[letter] = path
    return found


def load_face_images(directory: str | Path) -> dict[str, UInt8Image]:
    """Read every per-face image of a folder (see :func:`face_images_in`)."""
    images: dict[str, UInt8Image] = {}
    for letter, path in face_images_in(directory).items():
        images[letter] = read_image(path)  # its declared size checked before it is decoded
    return images
