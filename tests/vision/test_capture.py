"""Image sources: OpenCV on a video file, still-image folders, the simulated camera."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from solver.cube.facelets import Cube
from vision.capture import CameraSettings, OpenCVCamera, SimulatedCamera, StillImages, open_source
from vision.errors import CaptureError


def test_video_file_frames_then_end(tmp_path: Path) -> None:
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 5, (64, 48))
    if not writer.isOpened():
        pytest.skip("this OpenCV build cannot write MJPG video")
    for k in range(3):
        writer.write(np.full((48, 64, 3), 40 * k, dtype=np.uint8))
    writer.release()
    with OpenCVCamera(str(path), CameraSettings(width=64, height=48)) as cam:
        frames = [cam.read() for _ in range(3)]
        assert all(f.shape == (48, 64, 3) and f.dtype == np.uint8 for f in frames)
        assert frames[2].mean() > frames[0].mean()
        with pytest.raises(CaptureError, match="returned no frame"):
            cam.read()


def test_missing_source_is_a_capture_error(tmp_path: Path) -> None:
    with pytest.raises(CaptureError, match="cannot open camera source"):
        OpenCVCamera(str(tmp_path / "nothing.avi")).open()


def test_still_images(tmp_path: Path) -> None:
    cv2.imwrite(str(tmp_path / "rubiks-side-U.png"), np.zeros((8, 8, 3), dtype=np.uint8))
    source = open_source(str(tmp_path))
    assert isinstance(source, StillImages)
    assert source.read("U").shape == (8, 8, 3)
    with pytest.raises(CaptureError, match="no image for face F"):
        source.read("F")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CaptureError, match="no face images"):
        StillImages(empty)


def test_simulated_camera_follows_the_cube() -> None:
    state = {"cube": Cube.solved(3)}
    cam = SimulatedCamera(lambda: state["cube"], "F", seed=3)
    before = cam.read()
    state["cube"] = state["cube"].apply("R")
    after = cam.read()
    assert before.shape == after.shape == (480, 640, 3)
    assert not np.array_equal(before, after)
    sites = cam.calibration().sites
    assert len(sites) == 9 and {s.face.name for s in sites} == {"F"}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("99999999999999999999", "camera index 999999999999 is out of range"),
        ("12345", "camera index 12345 is out of range"),
        ("²", "cannot open camera source '²'"),
    ],
    ids=["huge", "five-digits", "superscript"],
)
def test_an_impossible_camera_index_is_a_capture_error(spec: str, message: str) -> None:
    """A 20-digit index was an OpenCV overload error and "²" (``isdigit``, not ``int``) a
    ValueError: both tracebacks, from `vision calibrate` and from a profile's camera source."""
    from vision.capture import open_source
    from vision.errors import CaptureError

    with pytest.raises(CaptureError, match=message):
        camera = open_source(spec)
        with camera:
            camera.read()
