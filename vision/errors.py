"""Typed errors of the vision package.

Exception tree::

    VisionError                     base of everything vision raises
    ├── CaptureError                a camera or image source gave nothing usable
    │                               (device, file or URL named, with the next step)
    ├── ScanInputError              input that is not a scan at all: wrong shape, a file in the
    │                               wrong format, missing faces, no way to infer N
    ├── GridNotFoundError           no N×N sticker grid could be found in an image
    ├── NoCubeError                 well-formed input that shows no cube to read (every
    │                               sticker alike, or a grid size the caller gave that the
    │                               images contradict)
    │   └── SizeMismatchError       the cube size given is not what the image shows
    └── CalibrationError            a calibration file that cannot be read or does not fit

An impossible *result* (the stickers read do not form a real cube) is not an exception: the
scan result carries the problems, so the daemon can rescan or ask.
"""

from __future__ import annotations

__all__ = [
    "CalibrationError",
    "CaptureError",
    "GridNotFoundError",
    "NoCubeError",
    "ScanInputError",
    "SizeMismatchError",
    "VisionError",
]


class VisionError(Exception):
    """Base class of the vision package's errors."""


class CaptureError(VisionError):
    """A camera, video or image source could not deliver a frame."""


class ScanInputError(VisionError, ValueError):
    """Input that cannot be read as a scan (shape, format, missing faces, unknown N)."""


class GridNotFoundError(VisionError):
    """No sticker grid was found in an image."""


class CalibrationError(VisionError, ValueError):
    """A calibration that cannot be read, or does not match the images it is used with."""


class NoCubeError(VisionError):
    """Well-formed input in which no cube can be read (``cuberobot scan`` exits 1)."""


class SizeMismatchError(NoCubeError):
    """The caller's cube size (``--size N``, the daemon's N) disagrees with the image."""
