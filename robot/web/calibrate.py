"""The web page's calibration view: live frames with the sticker grid drawn, and saving a new
calibration (blocking OpenCV work: the server calls these through ``asyncio.to_thread``).

* :func:`live_frames` captures one frame per camera now and draws each calibrated sticker's
  outline and centre on it (a camera without a calibration is marked so), as PNGs.
* :func:`save` re-locates the sticker grid of every camera that looks at one face head-on
  (``view = "face"``; the automatic search of ``cuberobot vision calibrate``) and writes it to the
  file its ``[[cameras]] calibration`` names. Corner views and simulated cameras are reported as
  skipped with the reason: a corner view is calibrated with the CLI, a simulated camera takes
  its geometry from the renderer.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from robot.config import RobotConfig
from robot.daemon.ports import Cameras
from vision.calibration import (
    Calibration,
    ViewCalibration,
    load_calibration,
    merge_views,
    save_calibration,
)
from vision.errors import VisionError
from vision.locate import find_grid

__all__ = ["live_frames", "save"]

logger = logging.getLogger(__name__)

_GREEN = (80, 220, 80)
_RED = (60, 60, 230)


def live_frames(cameras: Cameras) -> dict[str, bytes]:
    """One frame per camera, captured now, with its calibrated grid drawn (PNG bytes)."""
    frames = cameras.capture()
    views = {v.name: v for v in cameras.calibration.views} if cameras.calibration else {}
    out: dict[str, bytes] = {}
    for name, frame in frames.items():
        image = np.array(frame, dtype=np.uint8, copy=True)  # drawn on a copy
        view = views.get(name)
        if view is None:
            cv2.putText(image, "NOT CALIBRATED", (20, 40), cv2.FONT_HERSHEY_SIMPLEX, 1.0, _RED, 2)
        else:
            _draw(image, view)
        ok, png = cv2.imencode(".png", image)
        if ok:
            out[name] = png.tobytes()
    return out


def _draw(image: np.ndarray[Any, Any], view: ViewCalibration) -> None:
    for site in view.sites:
        if site.quad:
            pts = np.array([[round(x), round(y)] for x, y in site.quad], dtype=np.int32)
            cv2.polylines(image, [pts], isClosed=True, color=_GREEN, thickness=2)
        cx, cy = site.centre
        cv2.circle(image, (round(cx), round(cy)), 3, _GREEN, -1)


def save(config: RobotConfig, cameras: Cameras) -> dict[str, Any]:
    """Re-calibrate the face-view cameras from frames captured now; a report per camera."""
    frames = cameras.capture()
    report: dict[str, Any] = {}
    for cam in config.cameras:
        if cam.source.startswith("simulated"):
            report[cam.name] = {"saved": False, "why": "simulated: geometry from the renderer"}
        elif cam.view != "face":
            report[cam.name] = {
                "saved": False,
                "why": "a corner view: calibrate it with `cuberobot vision calibrate` and edit",
            }
        elif not cam.calibration:
            report[cam.name] = {
                "saved": False,
                "why": "no [[cameras]] calibration file is named in the profile",
            }
        else:
            report[cam.name] = _save_face_view(config, cam.name, cam.faces[0], cam.calibration,
                                               frames)  # fmt: skip
    return report


def _save_face_view(
    config: RobotConfig, name: str, face: str, file: str, frames: Mapping[str, Any]
) -> dict[str, Any]:
    from solver.cube.geometry import Face

    frame = frames.get(name)
    if frame is None:
        return {"saved": False, "why": "the camera gave no frame"}
    try:
        fit = find_grid(frame, config.robot.cube_size, Face[face])
    except VisionError as exc:
        return {"saved": False, "why": f"no sticker grid found: {exc}"}
    path = config.resolve(file)
    try:
        base = load_calibration(path) if path.exists() else None
        cal = merge_views(base, [ViewCalibration(name, fit.sites)], fit.n)
    except VisionError as exc:  # a corrupt or other-N file is kept as it is, not overwritten
        return {"saved": False, "why": f"{exc}; fix or remove the file, then save again"}
    height, width = np.asarray(frame).shape[:2]
    try:
        save_calibration(Calibration(cal.n, cal.views, width, height, cal.palette_lab), path)
    except OSError as exc:
        return {"saved": False, "why": f"cannot write {path}: {exc.strerror}"}
    logger.info("web: calibration of camera %s saved to %s", name, path)
    return {"saved": True, "file": str(path), "stickers": fit.detected}
