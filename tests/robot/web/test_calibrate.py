"""The page's calibration: the grid of a face-view camera found in a real photo and saved to the
profile's calibration file; simulated and corner-view cameras reported as skipped, with why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from robot.config import parse_config
from robot.web.calibrate import _save_face_view, live_frames, save
from tests.vision.conftest import vision_data_dir
from vision.calibration import Calibration, ViewCalibration, load_calibration
from vision.calibration import StickerSite as Site

PHOTO = vision_data_dir() / "photos" / "3x3x3-random-01" / "rubiks-side-F.png"


def _config(tmp_path: Path) -> Any:
    return parse_config(
        {
            "cameras": [
                {"name": "front", "source": "0", "view": "face", "faces": ["F"],
                 "calibration": "front.toml"},
                {"name": "corner", "source": "1", "view": "corner", "faces": ["U", "R", "B"]},
                {"name": "lower", "source": "2", "view": "corner", "faces": ["D", "L", "B"]},
            ]
        },
        str(tmp_path / "robot.toml"),
    )  # fmt: skip


@pytest.mark.skipif(not PHOTO.is_file(), reason=f"real photo not found: {PHOTO}")
def test_a_face_view_is_calibrated_from_a_real_photo(tmp_path: Path) -> None:
    config = _config(tmp_path)
    frame = cv2.imread(str(PHOTO), cv2.IMREAD_COLOR)
    result = _save_face_view(config, "front", "F", "front.toml", {"front": frame})
    assert result["saved"] is True and result["stickers"] >= 8, result
    saved = load_calibration(tmp_path / "front.toml")
    assert saved.n == 3 and len(saved.view("front").sites) == 9


@pytest.mark.skipif(not PHOTO.is_file(), reason=f"real photo not found: {PHOTO}")
@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"n = [", "front.toml is not valid TOML"),
        (b"\xff\xfe binary", "front.toml is not a text file"),
        (b"n = 3\nview = 7", "view must be"),
        (b"n = 4\n", "the calibration is for N=4"),
    ],
    ids=["toml", "binary", "shape", "other-n"],
)
def test_a_corrupt_calibration_file_is_reported_and_kept(
    tmp_path: Path, content: bytes, why: str
) -> None:
    """It used to raise out of the request (HTTP 500, a traceback in the log)."""
    config = _config(tmp_path)
    (tmp_path / "front.toml").write_bytes(content)
    frame = cv2.imread(str(PHOTO), cv2.IMREAD_COLOR)
    result = _save_face_view(config, "front", "F", "front.toml", {"front": frame})
    assert result["saved"] is False and why in result["why"], result
    assert "fix or remove the file" in result["why"]
    assert (tmp_path / "front.toml").read_bytes() == content  # nothing lost


@pytest.mark.skipif(not PHOTO.is_file(), reason=f"real photo not found: {PHOTO}")
def test_an_unwritable_calibration_file_is_reported(tmp_path: Path) -> None:
    config = _config(tmp_path)
    (tmp_path / "front.toml").mkdir()  # exists, but not a file
    frame = cv2.imread(str(PHOTO), cv2.IMREAD_COLOR)
    result = _save_face_view(config, "front", "F", "front.toml", {"front": frame})
    assert result["saved"] is False and "front.toml" in result["why"], result


def test_a_blank_frame_is_not_saved(tmp_path: Path) -> None:
    config = _config(tmp_path)
    blank = np.zeros((480, 640, 3), dtype=np.uint8)
    result = _save_face_view(config, "front", "F", "front.toml", {"front": blank})
    assert result["saved"] is False and "no sticker grid" in result["why"]
    assert not (tmp_path / "front.toml").exists()


class _Rig:
    def __init__(self, frames: dict[str, Any], calibration: Calibration | None) -> None:
        self.frames = frames
        self.calibration = calibration
        self.missing_calibration: tuple[str, ...] = ()
        self.calibration_problems: dict[str, str] = {}

    def capture(self) -> dict[str, Any]:
        return self.frames


def test_save_reports_every_camera(tmp_path: Path) -> None:
    config = _config(tmp_path)
    blank = np.zeros((120, 160, 3), dtype=np.uint8)
    report = save(config, _Rig({"front": blank, "corner": blank, "lower": blank}, None))
    assert report["corner"] == {
        "saved": False,
        "why": "a corner view: calibrate it with `cuberobot vision calibrate` and edit",
    }
    assert report["front"]["saved"] is False


def test_live_frames_draw_the_grid_or_say_uncalibrated() -> None:
    frame = np.zeros((100, 100, 3), dtype=np.uint8)
    site = Site(face=_face("F"), row=0, col=0, centre=(50.0, 50.0),
                quad=((40.0, 40.0), (60.0, 40.0), (60.0, 60.0), (40.0, 60.0)))  # fmt: skip
    cal = Calibration(3, (ViewCalibration("front", (site,)),))
    pngs = live_frames(_Rig({"front": frame, "other": frame}, cal))
    drawn = cv2.imdecode(np.frombuffer(pngs["front"], np.uint8), cv2.IMREAD_COLOR)
    assert drawn[40, 50].any() and not frame.any()  # the outline drawn, the frame untouched
    marked = cv2.imdecode(np.frombuffer(pngs["other"], np.uint8), cv2.IMREAD_COLOR)
    assert marked.any()  # "NOT CALIBRATED"


def _face(name: str) -> Any:
    from solver.cube.geometry import Face

    return Face[name]


class _Broken:
    """Cameras whose capture fails (a camera unplugged)."""

    calibration = None
    missing_calibration: tuple[str, ...] = ()
    calibration_problems: dict[str, str] = {}  # noqa: RUF012 - a fake, never written

    def capture(self) -> dict[str, Any]:
        from vision.errors import CaptureError

        raise CaptureError("cannot open camera source 0: no such device")


def _backend(tmp_path: Path, cameras: Any, busy: bool = False) -> Any:
    from types import SimpleNamespace

    from robot.web.backend import DaemonBackend

    daemon = SimpleNamespace(
        config=_config(tmp_path),
        pipeline=SimpleNamespace(cameras=cameras),
        intake=SimpleNamespace(busy=busy),
    )
    return DaemonBackend(daemon)  # type: ignore[arg-type]


def test_a_camera_that_fails_is_a_clear_reply_not_a_server_error(tmp_path: Path) -> None:
    """A CaptureError used to escape the request handlers (HTTP 500, a traceback)."""
    import asyncio

    from aiohttp import web

    backend = _backend(tmp_path, _Broken())
    with pytest.raises(web.HTTPServiceUnavailable) as caught:
        asyncio.run(backend.live_frames())
    assert "cannot capture the live view: cannot open camera source 0" in str(caught.value.text)
    reply = asyncio.run(backend.save_calibration())
    assert reply["ok"] is False and reply["error"]["code"] == "camera"
    assert "no such device" in reply["error"]["message"]


def test_the_live_view_does_not_take_the_camera_from_a_running_job(tmp_path: Path) -> None:
    """GET /api/calibration (open to every reader) captured even during a job's scan."""
    import asyncio

    from aiohttp import web

    rig = _Rig({"front": np.zeros((8, 8, 3), np.uint8)}, None)
    with pytest.raises(web.HTTPConflict) as caught:
        asyncio.run(_backend(tmp_path, rig, busy=True).live_frames())
    assert "a job is running" in str(caught.value.text)
    assert set(asyncio.run(_backend(tmp_path, rig).live_frames())) == {"front"}
