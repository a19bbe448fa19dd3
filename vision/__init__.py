"""Vision: cameras, sticker location and colour classification.

The daemon-facing API (plain CPU-bound functions; call them through ``asyncio.to_thread``):

* :func:`read_cube` (images + optional calibration → :class:`ScanResult`), :func:`read_rgb`;
* :func:`render_face` / :func:`render_corner` (the simulated camera) and their ``*_view``
  forms that also return the sticker sites (a ready-made calibration);
* :class:`Calibration` with :func:`load_calibration` / :func:`save_calibration`;
* :func:`classify` for colour samples already measured.

Every result has a ``verdict``: ``accepted`` only when the read is a valid cube whose confidence
clears the bar measured on real data (docs/vision-calibration.md); act on nothing else. A
``refused`` result names the stickers ``in_doubt``. Input that is no scan at all raises
:class:`ScanInputError`; input in which no cube can be read raises :class:`NoCubeError` (with
:class:`SizeMismatchError` when a given N contradicts the images) or
:class:`GridNotFoundError`.
"""

from vision.calibration import (
    Calibration,
    StickerSite,
    ViewCalibration,
    load_calibration,
    save_calibration,
)
from vision.capture import CameraSettings, OpenCVCamera, SimulatedCamera, StillImages
from vision.classify import (
    Classification,
    ColourPalette,
    ConstraintLevel,
    Repair,
    StickerRef,
    classify,
)
from vision.errors import (
    CalibrationError,
    CaptureError,
    GridNotFoundError,
    NoCubeError,
    ScanInputError,
    SizeMismatchError,
    VisionError,
)
from vision.locate import GridFit, find_grid, sample_sites
from vision.render import (
    CORNER_VIEWS,
    RenderedView,
    RenderParams,
    render_corner,
    render_corner_view,
    render_face,
    render_face_view,
    sample_params,
)
from vision.rgbfile import load_rgb_scan
from vision.scan import ScanResult, load_face_images, read_cube, read_rgb

__all__ = [
    "CORNER_VIEWS",
    "Calibration",
    "CalibrationError",
    "CameraSettings",
    "CaptureError",
    "Classification",
    "ColourPalette",
    "ConstraintLevel",
    "GridFit",
    "GridNotFoundError",
    "NoCubeError",
    "OpenCVCamera",
    "RenderParams",
    "RenderedView",
    "Repair",
    "ScanInputError",
    "ScanResult",
    "SimulatedCamera",
    "SizeMismatchError",
    "StickerRef",
    "StickerSite",
    "StillImages",
    "ViewCalibration",
    "VisionError",
    "classify",
    "find_grid",
    "load_calibration",
    "load_face_images",
    "load_rgb_scan",
    "read_cube",
    "read_rgb",
    "render_corner",
    "render_corner_view",
    "render_face",
    "render_face_view",
    "sample_params",
    "sample_sites",
    "save_calibration",
]
