"""Image sources: OpenCV cameras (device index, video file, stream URL), folders of still
images, and the simulated camera. Every source is a context manager with ``read() -> BGR``.

* :class:`OpenCVCamera` opens ``cv2.VideoCapture`` on a device index (``0``), a video file or a
  stream URL (``rtsp://…``, ``http://…``), sets the resolution, and locks exposure and white
  balance where the device supports it (values read back are logged; a device that ignores a
  setting is reported, not an error, because many webcams silently do). A few frames are
  discarded after opening so that the sensor settles.
* :class:`StillImages` serves the per-face images of a folder (``U.png``, ``rubiks-side-U.png``).
* :class:`SimulatedCamera` renders a virtual cube with :mod:`vision.render`; the simulated robot
  points it at its own virtual cube (``cube_source`` is called at every frame).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from vision.calibration import ViewCalibration
from vision.errors import CaptureError
from vision.render import (
    RenderParams,
    render_corner,
    render_corner_view,
    render_face,
    render_face_view,
    sample_params,
)
from vision.scan import load_face_images

__all__ = [
    "CameraSettings",
    "OpenCVCamera",
    "SimulatedCamera",
    "StillImages",
    "device_index",
    "open_source",
]

log = logging.getLogger(__name__)

UInt8Image = npt.NDArray[np.uint8]
#: Frames thrown away after opening a device, while auto-exposure settles or locks.
WARMUP_FRAMES = 5


@dataclass(frozen=True, slots=True)
class CameraSettings:
    """What to ask of a real camera (``None`` leaves the device's own setting)."""

    width: int | None = None
    height: int | None = None
    exposure: float | None = None  # device units (V4L2: 1..10000 in 100 µs, manual mode)
    white_balance_k: int | None = None  # colour temperature in kelvin, locks auto WB
    fps: float | None = None


class OpenCVCamera:
    """A camera, video file or stream through OpenCV's VideoCapture."""

    def __init__(self, source: int | str, settings: CameraSettings | None = None) -> None:
        self.source = source
        self.settings = settings or CameraSettings()
        self._cap: Any = None

    def open(self) -> OpenCVCamera:
        try:
            cap = cv2.VideoCapture(self.source)
        except (cv2.error, OverflowError) as exc:  # an index OpenCV cannot take
            raise CaptureError(f"cannot open camera source {self.source!r}: {exc}") from None
        if not cap.isOpened():
            hint = (
                "check the index with `v4l2-ctl --list-devices` and that no other program uses it"
                if isinstance(self.source, int)
                else "check the path or URL"
            )
            raise CaptureError(f"cannot open camera source {self.source!r}: {hint}")
        self._cap = cap
        s = self.settings
        self._set(cv2.CAP_PROP_FRAME_WIDTH, s.width, "width")
        self._set(cv2.CAP_PROP_FRAME_HEIGHT, s.height, "height")
        self._set(cv2.CAP_PROP_FPS, s.fps, "fps")
        if s.exposure is not None:
            self._set(cv2.CAP_PROP_AUTO_EXPOSURE, 1, "auto exposure (1 = manual on V4L2)")
            self._set(cv2.CAP_PROP_EXPOSURE, s.exposure, "exposure")
        if s.white_balance_k is not None:
            self._set(cv2.CAP_PROP_AUTO_WB, 0, "auto white balance")
            self._set(cv2.CAP_PROP_WB_TEMPERATURE, s.white_balance_k, "white balance")
        if isinstance(self.source, int):
            for _ in range(WARMUP_FRAMES):
                cap.read()
        return self

    def _set(self, prop: int, value: float | None, name: str) -> None:
        if value is None:
            return
        accepted = bool(self._cap.set(prop, float(value)))
        got = self._cap.get(prop)
        if not accepted or abs(float(got) - float(value)) > 1e-6 * max(1.0, abs(float(value))):
            log.warning(
                "camera %r: %s requested %s, device reports %s (not supported or clamped)",
                self.source,
                name,
                value,
                got,
            )

    def read(self) -> UInt8Image:
        if self._cap is None:
            self.open()
        ok, frame = self._cap.read()
        if not ok or frame is None:
            raise CaptureError(
                f"camera source {self.source!r} returned no frame (end of video, unplugged "
                "device or dropped stream); reconnect it and retry the scan"
            )
        image: UInt8Image = np.ascontiguousarray(frame)
        return image

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None

    def __enter__(self) -> OpenCVCamera:
        return self.open()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class StillImages:
    """The per-face images of a folder, served by face letter (``read("U")``)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self._images = load_face_images(self.folder)
        if not self._images:
            raise CaptureError(f"no face images (U.png, ..._U.jpg) in {self.folder}")

    def read(self, view: str = "U") -> UInt8Image:
        try:
            return self._images[view]
        except KeyError:
            raise CaptureError(f"no image for face {view} in {self.folder}") from None

    def views(self) -> dict[str, UInt8Image]:
        return dict(self._images)

    def __enter__(self) -> StillImages:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class SimulatedCamera:
    """A camera of the simulated robot: renders ``cube_source()`` from a fixed view.

    ``view`` is a face letter (head-on) or a corner such as ``"URF"`` (three faces). The light
    colour is fixed per camera (as in a real robot); every frame gets its own noise, glare and
    small pose jitter from ``severity``."""

    def __init__(
        self,
        cube_source: Callable[[], Cube],
        view: str,
        *,
        params: RenderParams | None = None,
        severity: float = 0.3,
        seed: int = 0,
    ) -> None:
        self.cube_source = cube_source
        self.view = view
        self.params = params or RenderParams()
        self.severity = severity
        self._rng = np.random.default_rng(seed)
        self._light = sample_params(self._rng, severity, base=self.params).light_rgb
        # Pose jitter is fixed per camera so that a calibration stays valid frame to frame.
        self._pose = sample_params(np.random.default_rng(seed + 1), severity, base=self.params)

    def _frame_params(self) -> RenderParams:
        frame_params = sample_params(
            self._rng, self.severity, base=self.params, light_rgb=self._light
        )
        p = self._pose
        frame_params = replace(
            frame_params,
            yaw_deg=p.yaw_deg,
            pitch_deg=p.pitch_deg,
            roll_deg=p.roll_deg,
            offset=p.offset,
            scale=p.scale,
        )
        return frame_params

    def read(self) -> UInt8Image:
        cube = self.cube_source()
        if len(self.view) == 1:
            return render_face(cube, Face[self.view], self._frame_params(), self._rng)
        return render_corner(cube, self.view, self._frame_params(), self._rng)

    def calibration(self) -> ViewCalibration:
        """The exact sticker sites of this camera (what `vision calibrate` would measure)."""
        cube = self.cube_source()
        rng = np.random.default_rng(0)
        if len(self.view) == 1:
            view = render_face_view(cube, Face[self.view], self._frame_params(), rng)
        else:
            view = render_corner_view(cube, self.view, self._frame_params(), rng)
        return ViewCalibration(self.view, view.sites)

    def __enter__(self) -> SimulatedCamera:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def device_index(spec: str) -> int | None:
    """The camera index a source spec names (ASCII digits: ``"0"``), None for a path or URL;
    :class:`CaptureError` for an index no device can have."""
    if not (spec.isascii() and spec.isdigit()):  # "²".isdigit() is true, int("²") fails
        return None
    if len(spec) > 4:
        raise CaptureError(f"camera index {spec[:12]} is out of range (0..9999)")
    return int(spec)


def open_source(spec: str, settings: CameraSettings | None = None) -> OpenCVCamera | StillImages:
    """A source from a command-line spec: a folder of images, a device index, a file or URL."""
    index = device_index(spec)
    if index is not None:
        return OpenCVCamera(index, settings)
    path = Path(spec)
    if path.is_dir():
        return StillImages(path)
    return OpenCVCamera(spec, settings)
