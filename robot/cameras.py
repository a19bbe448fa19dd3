"""The robot's cameras.

:class:`CameraRig` gives the daemon one frame per configured camera and the calibration that maps
their pixels to stickers. A camera's ``source`` is:

* ``"simulated"`` — renders the simulated robot's own virtual cube
  (:class:`robot.simrobot.SimulatedRobot`);
* ``"simulated:FILE"`` — renders the cube in a facelet state file, as written by
  ``cuberobot firmware-sim --state-file FILE`` (the firmware runs in another process);
* a device index (``"0"``), a video file or a stream URL — a real camera through OpenCV.

Simulated cameras know their exact sticker sites (the renderer's ground truth), so they need no
calibration file; real cameras need ``calibration`` (written by ``cuberobot vision calibrate``).
"""

from __future__ import annotations

import errno
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from robot.config import CameraConfig, RobotConfig
from robot.errors import ConfigError
from solver.cube.facelets import Cube
from solver.errors import CubeError
from vision.calibration import Calibration, ViewCalibration, load_calibration
from vision.capture import CameraSettings, OpenCVCamera, SimulatedCamera, device_index
from vision.errors import CalibrationError, CaptureError
from vision.imagefile import read_regular
from vision.spotlight import Spotlight

__all__ = ["CameraRig", "SpotlitCameras", "calibrated_view", "state_file_source"]

logger = logging.getLogger(__name__)

UInt8Image = npt.NDArray[np.uint8]
_SEVERITY = {"studio": 0.0, "varied": 0.5, "harsh": 1.0}


class _Source(Protocol):
    def read(self) -> UInt8Image: ...


#: Largest cube state file read (bytes): a 7x7's state is 294 letters.
_STATE_FILE_LIMIT = 4096


def state_file_source(path: Path, n: int) -> Callable[[], Cube]:
    """A cube source reading a firmware-sim state file at every frame."""

    def read() -> Cube:
        try:  # bounded (a state is 6·N² letters), a regular file (a FIFO held the scan)
            raw = read_regular(path, _STATE_FILE_LIMIT)
        except OSError as exc:
            if exc.errno == errno.EFBIG:
                raise CaptureError(
                    f"simulated camera: the cube state file {path} is larger than "
                    f"{_STATE_FILE_LIMIT} bytes; point the camera at the file `cuberobot "
                    "firmware-sim --state-file` writes"
                ) from exc
            raise CaptureError(
                f"simulated camera: cannot read the cube state file {path}: {exc.strerror}; is "
                "`cuberobot firmware-sim --state-file` running?"
            ) from exc
        try:
            text = raw.decode("ascii").strip()
        except UnicodeDecodeError as exc:
            raise CaptureError(
                f"simulated camera: the cube state file {path} is not text (byte {exc.start}); "
                "point the camera at the file `cuberobot firmware-sim --state-file` writes"
            ) from exc
        try:
            return Cube.from_facelets(text, n)
        except CubeError as exc:
            raise CaptureError(
                f"simulated camera: the cube state file {path} holds no {n}x{n} cube ({exc}); "
                "point the camera at the file `cuberobot firmware-sim --state-file` writes"
            ) from exc

    return read


class CameraRig:
    """All cameras of one robot. ``capture()`` is blocking (OpenCV, rendering): call it through
    ``asyncio.to_thread``."""

    def __init__(
        self,
        config: RobotConfig,
        cube_source: Callable[[], Cube] | None = None,
        *,
        seed: int = 0,
    ) -> None:
        self.config = config
        self.n = config.robot.cube_size
        self._sources: dict[str, _Source] = {}
        views: list[ViewCalibration] = []
        missing: list[str] = []
        #: cameras whose calibration file is unusable (corrupt, of another cube, without the
        #: view): what is wrong with it. The daemon still starts and says so; scans are refused.
        self.calibration_problems: dict[str, str] = {}
        severity = _SEVERITY[config.simulation.lighting] if config.simulation else 0.5
        for k, cam in enumerate(config.cameras):
            source: _Source
            if cam.source == "simulated" or cam.source.startswith("simulated:"):
                getter = self._simulated_source(cam, cube_source)
                simcam = self._simulated_camera(cam, getter, severity, seed + 101 * k)
                source = simcam
                calib = simcam.calibration()
                views.append(ViewCalibration(cam.name, calib.sites))
            else:
                index = device_index(cam.source)
                source = OpenCVCamera(
                    cam.source if index is None else index,
                    CameraSettings(width=cam.width, height=cam.height),
                )
                if cam.calibration:
                    path = config.resolve(cam.calibration)
                    try:
                        views.append(calibrated_view(path, cam.name, self.n))
                    except CalibrationError as exc:
                        logger.error(
                            "camera %s: its calibration is unusable (%s); scans are refused "
                            "until `cuberobot vision calibrate` writes it again",
                            cam.name,
                            exc,
                        )
                        self.calibration_problems[cam.name] = str(exc)
                        missing.append(cam.name)
                else:
                    missing.append(cam.name)
            self._sources[cam.name] = source
        self.missing_calibration = tuple(missing)
        self.calibration = Calibration(self.n, tuple(views)) if not missing else None

    def _simulated_source(
        self, cam: CameraConfig, cube_source: Callable[[], Cube] | None
    ) -> Callable[[], Cube]:
        if cam.source.startswith("simulated:"):
            return state_file_source(self.config.resolve(cam.source.partition(":")[2]), self.n)
        if cube_source is None:
            raise ConfigError(
                'source "simulated" renders the simulated robot\'s cube; use it with serial '
                'url "sim", or "simulated:FILE" with a firmware-sim state file',
                file=self.config.source,
                section="cameras",
                key="source",
            )
        return cube_source

    def _simulated_camera(
        self, cam: CameraConfig, source: Callable[[], Cube], severity: float, seed: int
    ) -> SimulatedCamera:
        from vision.render import RenderParams

        view = "".join(cam.faces)
        params = RenderParams(width=cam.width, height=cam.height)
        if self.config.simulation is not None:
            noise = self.config.simulation.noise
            severity = min(1.0, severity * (0.5 + noise))
        return SimulatedCamera(source, view, params=params, severity=severity, seed=seed)

    def capture(self) -> dict[str, UInt8Image]:
        """One frame from every camera, by camera name."""
        frames: dict[str, UInt8Image] = {}
        for name, source in self._sources.items():
            if isinstance(source, OpenCVCamera):
                with source:
                    frames[name] = source.read()
            else:
                frames[name] = source.read()
        return frames


def calibrated_view(path: Path, camera: str, n: int) -> ViewCalibration:
    """``camera``'s view in the calibration file at ``path``, which must be one of an ``n``
    cube; :class:`CalibrationError` says what is wrong (unreadable, malformed, another cube's,
    without that view)."""
    calibration = load_calibration(path)
    if calibration.n != n:
        raise CalibrationError(
            f"{path} calibrates a {calibration.n}x{calibration.n}x{calibration.n} cube; this "
            f"robot's cube is {n}x{n}x{n}"
        )
    return calibration.view(camera)


class SpotlitCameras:
    """A camera rig's frames under an extra local light (:class:`vision.spotlight.Spotlight`):
    the simulated robot's deliberately ambiguous lighting (``tests/robot/test_e2e_vision.py``,
    ``bench/robot_vision.py``)."""

    def __init__(self, rig: CameraRig, spotlight: Spotlight) -> None:
        self.rig = rig
        self.spotlight = spotlight
        self.calibration = rig.calibration
        self.missing_calibration = rig.missing_calibration
        self.calibration_problems = rig.calibration_problems

    def capture(self) -> dict[str, UInt8Image]:
        frames = self.rig.capture()
        if self.calibration is None:
            return frames
        return self.spotlight.apply(frames, self.calibration)
